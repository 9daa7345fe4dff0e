"""Training batches with shared prompts: a GRPO group is G completions of one prompt, so a micro-batch holds
each distinct prompt once and its completions beside it. :func:`predictors` runs the prompts, expands their KV cache
to the completions that continue them and runs the completions on top: the same function as running every
full sequence (same logprobs, same gradients; tested), but the prompt tokens go through the model once per
group instead of G times. Prompts are most of the tokens of a short-answer step (a few-shot prompt of 150
tokens, answers of 16), so this is most of the update's compute on a CPU. The equality holds for a deterministic
forward: in train mode with dropout (LoRA dropout), a prompt's G rows share the one dropout mask its single pass
drew, where separate sequences would draw one each (each row's marginal is the same, the rows are correlated);
the trainer therefore takes π_old in eval mode when the model has dropout.

Layout of one micro-batch with K distinct prompts and B rows: ``prefix_ids`` (K, P) right-padded prompts;
``prefix_index`` (B,) the prompt of each row; ``input_ids`` (B, C) right-padded completions; an attention
mask over the K prompts' cache plus the completion (B, P + C); explicit ``position_ids`` (pads inside the
cache do not shift positions). Row b's completion token c is predicted by the prompt's last real token
(c = 0) or by completion token c - 1.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch

from envgym.agents.trajectory import Trajectory

Row = tuple[Trajectory, list[int], list[float]]


def micro_batches(rows: list[Row], budget: int) -> list[list[Row]]:
    """Pack rows into micro-batches whose cost (distinct prompts × longest prompt + rows × longest completion:
    the tokens that go through the model, padding included) stays within ``budget``. Rows of one prompt are
    kept together as far as the budget allows; a row costlier than the budget gets a batch of its own."""
    by_prompt: dict[tuple[int, ...], list[Row]] = defaultdict(list)
    for row in rows:
        by_prompt[tuple(row[0].prompt_ids)].append(row)
    ordered = [
        row
        for prompt in sorted(by_prompt, key=len, reverse=True)
        for row in sorted(by_prompt[prompt], key=lambda r: -len(r[0].completion_ids))
    ]
    batches: list[list[Row]] = []
    for row in ordered:
        if batches and batch_cost([*batches[-1], row]) <= budget:
            batches[-1].append(row)
        else:
            batches.append([row])
    return batches


def batch_cost(batch: list[Row]) -> int:
    """Tokens a micro-batch sends through the model: its distinct prompts once each, then every completion,
    both padded to the longest."""
    prompts = {tuple(row[0].prompt_ids) for row in batch}
    longest_prompt = max(len(p) for p in prompts)
    longest_completion = max(len(row[0].completion_ids) for row in batch)
    return len(prompts) * longest_prompt + len(batch) * longest_completion


def pad_batch(batch: list[Row], device: torch.device) -> dict[str, torch.Tensor]:
    """The tensors of the module docstring, plus per completion position the target token (the completion
    token itself), its loss mask, advantage and rollout logprob."""
    prompts: dict[tuple[int, ...], int] = {}
    for row in batch:
        prompts.setdefault(tuple(row[0].prompt_ids), len(prompts))
    if any(len(prompt) == 0 for prompt in prompts):
        raise ValueError("a trajectory without prompt tokens cannot be trained on (nothing predicts its first token)")
    prompt_width = max(len(p) for p in prompts)
    width = max(len(row[0].completion_ids) for row in batch)
    prefix_ids = torch.zeros((len(prompts), prompt_width), dtype=torch.long)
    prefix_mask = torch.zeros((len(prompts), prompt_width), dtype=torch.long)
    for prompt, k in prompts.items():
        prefix_ids[k, : len(prompt)] = torch.tensor(prompt)
        prefix_mask[k, : len(prompt)] = 1
    prompt_lengths = prefix_mask.sum(-1)
    index = torch.tensor([prompts[tuple(row[0].prompt_ids)] for row in batch], dtype=torch.long)
    input_ids = torch.zeros((len(batch), width), dtype=torch.long)
    completion_mask = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width))
    advantages = torch.zeros((len(batch), width))
    rollout_logprobs = torch.zeros((len(batch), width))
    for b, (trajectory, loss_mask, token_adv) in enumerate(batch):
        n = len(trajectory.completion_ids)
        input_ids[b, :n] = torch.tensor(trajectory.completion_ids)
        completion_mask[b, :n] = 1
        mask[b, :n] = torch.tensor(loss_mask, dtype=torch.float)
        advantages[b, :n] = torch.tensor(token_adv)
        rollout_logprobs[b, :n] = torch.tensor(trajectory.logprobs)
    tensors = {
        "prefix_ids": prefix_ids,
        "prefix_mask": prefix_mask,
        "prefix_positions": torch.arange(prompt_width).expand(len(prompts), -1).contiguous(),
        "prefix_index": index,
        "prefix_last": prompt_lengths - 1,
        "input_ids": input_ids,
        "attention_mask": torch.cat([prefix_mask[index], completion_mask], dim=1),
        "positions": prompt_lengths[index, None] + torch.arange(width),
        "targets": input_ids,
        "mask": mask,
        "advantages": advantages,
        "rollout_logprobs": rollout_logprobs,
    }
    return {key: value.to(device) for key, value in tensors.items()}


def predictors(net: Any, tensors: dict[str, torch.Tensor], hidden: bool) -> torch.Tensor:
    """(B, C, ·): for each completion token, the output of ``net`` (hidden state of a decoder, or logits of
    a full model) at the position that predicts it: the prompt's last token, then completion tokens 0..C-2.

    The prompts run once and their KV cache is expanded to the rows that continue them; with gradient
    checkpointing (which drops caches in training) each row runs as one flat sequence instead."""
    index, last = tensors["prefix_index"], tensors["prefix_last"]
    width = tensors["input_ids"].shape[1]

    def output(result: Any) -> torch.Tensor:
        return result.last_hidden_state if hidden else result.logits

    if not (net.training and _checkpointing(net)):
        needed = torch.unique(last)  # a full model keeps logits only where prompts end
        prefix = net(
            input_ids=tensors["prefix_ids"],
            attention_mask=tensors["prefix_mask"],
            position_ids=tensors["prefix_positions"],
            use_cache=True,
            **({} if hidden else {"logits_to_keep": needed}),
        )
        column = last if hidden else torch.searchsorted(needed, last)
        at_prompt_end = output(prefix)[torch.arange(len(last), device=last.device), column][index]
        completions = at_prompt_end[:, None][:, :0]  # one-token completions: the prompt predicts them all
        if width > 1:
            cache = prefix.past_key_values
            cache.reorder_cache(index)
            completions = output(
                net(
                    input_ids=tensors["input_ids"][:, :-1],
                    attention_mask=tensors["attention_mask"][:, :-1],
                    position_ids=tensors["positions"][:, :-1],
                    past_key_values=cache,
                    use_cache=True,
                )
            )
    else:
        prompt_width = tensors["prefix_ids"].shape[1]
        needed = torch.cat(
            [torch.unique(last), torch.arange(prompt_width, prompt_width + width - 1, device=last.device)]
        )
        flat = output(
            net(
                input_ids=torch.cat([tensors["prefix_ids"][index], tensors["input_ids"]], dim=1),
                attention_mask=tensors["attention_mask"],
                position_ids=torch.cat([tensors["prefix_positions"][index], tensors["positions"]], dim=1),
                **({} if hidden else {"logits_to_keep": needed}),
            )
        )
        rows = torch.arange(len(index), device=index.device)
        if hidden:
            at_prompt_end, completions = flat[rows, last[index]], flat[:, prompt_width : prompt_width + width - 1]
        else:
            ends = len(needed) - (width - 1)
            at_prompt_end, completions = flat[rows, torch.searchsorted(needed[:ends], last[index])], flat[:, ends:]
    return torch.cat([at_prompt_end[:, None], completions], dim=1)


def _checkpointing(model: Any) -> bool:
    """Whether gradient checkpointing is on anywhere in ``model`` (it drops KV caches in training mode)."""
    return any(getattr(module, "gradient_checkpointing", False) is True for module in model.modules())


def decoder_and_head(model: Any) -> tuple[Any, Any] | None:
    """The decoder (hidden states) and output projection of a causal LM whose logits are just ``head(hidden)``."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = base.config
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None) not in (None, 1.0):
        return None
    if not hasattr(base, "get_decoder") or base.get_output_embeddings() is None:
        return None
    return base.get_decoder(), base.get_output_embeddings()

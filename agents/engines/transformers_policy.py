"""TransformersPolicy: a local Hugging Face model, batched generation with a KV cache, CPU or GPU.

Logprobs are those of the distribution tokens were actually sampled from (after temperature and top-p),
taken from ``generate``'s processed scores; with greedy decoding they are the model's plain logprobs.

Only what the caller sets applies: ``generate`` fills every option the call leaves unset from the model's own
``generation_config`` (a checkpoint's repetition penalty, top-k, no-repeat n-grams...), so this policy
generates under a neutral config that holds nothing but the special token ids.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from envgym.agents.engines.models import DEFAULT_MODEL, load_causal_lm, load_tokenizer
from envgym.agents.engines.policy import Generation, LocalTokenPolicy, SamplingParams, merged_weights


class TransformersPolicy(LocalTokenPolicy):
    """A ``transformers`` causal LM as a token-level :class:`~envgym.agents.engines.policy.Policy`.

    ``model`` is a name for :func:`~envgym.agents.engines.models.resolve_model` or an already loaded model (then
    ``tokenizer`` is required). ``device`` defaults to CUDA when available."""

    def __init__(
        self,
        model: Any = DEFAULT_MODEL,
        tokenizer: Any = None,
        *,
        device: str | None = None,
        dtype: Any = None,
        name: str | None = None,
    ):
        import torch

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if isinstance(model, str):
            self.name = name or model
            self.tokenizer = tokenizer or load_tokenizer(model)
            if dtype is None:
                dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
            model = load_causal_lm(model, dtype=dtype)  # any model name, training checkpoints included
        else:
            if tokenizer is None:
                raise ValueError("a loaded model needs its tokenizer: TransformersPolicy(model, tokenizer)")
            self.name = name or getattr(model.config, "_name_or_path", type(model).__name__)
            self.tokenizer = tokenizer
        self.model = model.to(self.device).eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.eos_ids = _eos_ids(self.model, self.tokenizer)
        self.settings = {
            "engine": "transformers",
            "model": self.name,
            "dtype": str(self.model.dtype).removeprefix("torch."),
        }
        """What shapes this policy's samples besides the sampling parameters (``envgym eval`` resumes on it)."""

    def load_weights(self, model: Any) -> int:
        """Copy a trainer's current weights (LoRA merged) into this policy's model; returns how many tensors
        went over. A no-op when this policy generates with that very model (the trainer's default engine)."""
        import torch

        if model is self.model:
            return 0
        weights = merged_weights(model)
        with torch.no_grad():
            self.model.load_state_dict(dict(weights), strict=True)
        return len(weights)

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        """Continue every prompt with one turn, all in one left-padded batch."""
        import torch

        if not prompts:
            return []
        if params.seed is not None:
            torch.manual_seed(params.seed)
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=self.device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        sampling = params.temperature > 0
        options: dict[str, Any] = dict(
            max_new_tokens=params.max_completion_length,  # transformers generate's name for it
            do_sample=sampling,
            pad_token_id=pad,
            eos_token_id=self.eos_ids,
            output_scores=True,
            return_dict_in_generate=True,
        )
        if sampling:
            options.update(temperature=params.temperature, top_p=params.top_p, top_k=0)
        else:
            options.update(temperature=None, top_p=None, top_k=None)
        if params.stop:
            options.update(stop_strings=list(params.stop), tokenizer=self.tokenizer)
        with torch.inference_mode(), _neutral_generation_config(self.model):
            cache = self._shared_prefill(prompts, input_ids, attention)
            if cache is not None:
                options["past_key_values"] = cache
            output = self.model.generate(input_ids=input_ids, attention_mask=attention, **options)
        new_tokens = output.sequences[:, width:]
        # One step at a time: stacking (batch, steps, vocab) scores would copy hundreds of MB for big vocabs.
        chosen = torch.stack(
            [
                step.float().gather(-1, new_tokens[:, t : t + 1]).squeeze(-1) - step.float().logsumexp(-1)
                for t, step in enumerate(output.scores)
            ],
            dim=1,
        )
        results = []
        for row, logprob_row in zip(new_tokens.tolist(), chosen.tolist()):
            length, reason = self._turn_length(row, params)
            ids = row[:length]
            results.append(Generation(self.tokenizer.decode(ids), ids, logprob_row[:length], reason))
        return results

    def _shared_prefill(self, prompts: list[list[int]], input_ids: Any, attention: Any) -> Any:
        """The KV cache of all prompt tokens but the last, computed once per distinct prompt and expanded to the
        rows that repeat it, or None when no prompt repeats. A GRPO batch is G copies of each prompt, so this
        runs the prefill, most of a short answer's cost on a CPU, once instead of G times; ``generate``
        continues from the cache exactly as from its own prefill."""
        import torch

        distinct: dict[tuple[int, ...], int] = {}
        index = [distinct.setdefault(tuple(p), len(distinct)) for p in prompts]
        if len(distinct) == len(prompts) or input_ids.shape[1] < 2:
            return None
        first = [index.index(k) for k in range(len(distinct))]
        mask = attention[first, :-1]
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding: what generate would give these tokens
        prefill = self.model(
            input_ids=input_ids[first, :-1],
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
        )
        cache = prefill.past_key_values
        if cache is None:  # a model without a KV cache: generate does the whole prefill itself
            return None
        cache.reorder_cache(torch.tensor(index, device=input_ids.device))
        return cache

    def _turn_length(self, row: list[int], params: SamplingParams) -> tuple[int, str]:
        """How many of the generated tokens belong to the turn, and why it ended.

        The turn ends at the first end-of-turn token (kept) or right after the first stop sequence; what
        follows in the padded batch row is padding."""
        length, reason = len(row), "length"
        for i, token in enumerate(row):
            if token in self.eos_ids:
                length, reason = i + 1, "stop"
                break
        if params.stop:
            cut = _first_stop(self.tokenizer, row[:length], params.stop)
            if cut is not None:
                length, reason = cut, "stop"
        return length, reason


def _first_stop(tokenizer: Any, ids: list[int], stops: list[str]) -> int | None:
    """The smallest n such that ``decode(ids[:n])`` contains a stop sequence (binary search: containing a
    stop sequence only ever turns on as tokens are added)."""

    def hit(n: int) -> bool:
        text = tokenizer.decode(ids[:n])
        return any(stop in text for stop in stops)

    if not ids or not hit(len(ids)):
        return None
    low, high = 1, len(ids)
    while low < high:
        middle = (low + high) // 2
        if hit(middle):
            high = middle
        else:
            low = middle + 1
    return low


@contextlib.contextmanager
def _neutral_generation_config(model: Any) -> Iterator[None]:
    """Swap the model's ``generation_config`` for one with only its special token ids while generating.

    ``generate`` fills any option the call leaves unset from ``model.generation_config``; options set to None
    count as unset, so no set of call arguments can switch off everything a checkpoint may carry. A peft model
    reads the config of the model it wraps, which is the one swapped here."""
    from transformers import GenerationConfig

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    own = base.generation_config
    base.generation_config = GenerationConfig(
        bos_token_id=own.bos_token_id,
        eos_token_id=own.eos_token_id,
        pad_token_id=own.pad_token_id,
        decoder_start_token_id=own.decoder_start_token_id,
    )
    try:
        yield
    finally:
        base.generation_config = own


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """Every token that ends an assistant turn: the generation config's EOS ids and the tokenizer's."""
    ids = model.generation_config.eos_token_id
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids

"""``envgym bench learn --check-update``: is our GRPO update TRL's, on the same batch?

Learning curves compare two whole runs, whose sampling streams differ, so a difference between them may be noise
(docs/benchmarks.md). This check removes the noise: our GRPOTrainer rolls out one batch of the recipe (the first
whose rewards differ within a group, so the gradient is not zero), and TRL's GRPOTrainer, holding the same LoRA
weights, takes that same batch through its own pipeline (its ``_generate_and_score_completions``, fed the batch
by a ``rollout_func`` that replays it: TRL computes the advantages, masks and token count itself) and its own
``compute_loss``. Both gradients are compared before any
optimizer step: the cosine between them and the ratio of their norms.

A few recipe settings are set for the check, each because one side has no counterpart or it would make the two
gradients random (``CHECK_SETTINGS``): one policy iteration, no clipping of the gradient norm, LoRA dropout off,
GRPO advantages (TRL gives an episode one advantage), no rollout importance weights (TRL weighs only vLLM's
rollouts). LoRA's B matrices start at zero, where A's gradient is zero too; both sides start from the same seeded
small B, so every LoRA weight's gradient is compared.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import warnings
from typing import Any

import envgym

CHECK_SETTINGS: dict[str, Any] = {
    "max_steps": 1,
    "num_iterations": 1,
    "max_grad_norm": None,
    "lora_dropout": 0.0,
    "advantage": "grpo",
    "importance_sampling_correction": False,
    "gradient_checkpointing": False,
}
TRL_LOSS_TYPE = {"token_mean": "dapo", "seq_mean_token_mean": "grpo", "constant": "dr_grpo"}
"""Our loss normalisations and TRL's names for the same: over the batch's tokens, per sequence, by a constant."""
MIN_COSINE = 0.9999
MAX_NORM_GAP = 1e-3
LORA_B_STD = 0.02
MAX_BATCHES = 8
"""Batches rolled out until one has a group whose rewards differ (else every advantage, and the gradient, is 0)."""


def check_update(
    model_path: str,
    env_id: str,
    env_kwargs: dict[str, Any],
    config: Any,
    *,
    device: str = "cpu",
    trl_settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Roll out batches of ``env_id`` with our trainer until one has a non-zero gradient (at most
    :data:`MAX_BATCHES`; no weight changes between them), then compare our gradient with TRL's on that batch.

    ``config`` is our GRPOConfig (a recipe's); :data:`CHECK_SETTINGS` override it. ``trl_settings`` are extra
    TRL GRPOConfig arguments (a deliberate mismatch shows what the check catches). Returns the JSON the bench
    prints: ``cosine``, ``norm_ratio`` (TRL's over ours), the token counts, the losses and ``passed``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer
    from envgym.bench.learn_sides import fixed_order_sampler, task_order

    if not config.lora_r:
        raise ValueError("--check-update copies LoRA weights into TRL: the recipe needs lora_r > 0")
    if config.loss_type not in TRL_LOSS_TYPE:
        raise ValueError(f"loss_type {config.loss_type!r} has no TRL counterpart; accepted: {sorted(TRL_LOSS_TYPE)}")
    if config.entropy_coef or config.entropy_control != "none":
        raise ValueError("--check-update compares the plain policy loss: the recipe's entropy terms have no TRL twin")
    config = dataclasses.replace(config, **CHECK_SETTINGS)
    env = envgym.make(env_id, **env_kwargs)
    try:
        tasks = env.unwrapped.tasks
    finally:
        env.close()
    if tasks is None:
        raise ValueError(f"{env_id} has no task source: the check replays tasks by index, as TRL's dataset names them")
    order = task_order(config.seed, MAX_BATCHES, config.num_tasks_per_step, len(tasks))
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    ours = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(model_path),
        tokenizer,
        env_id,
        config,
        device=device,
        env_kwargs={key: value for key, value in env_kwargs.items() if key != "reward"},
        reward=env_kwargs.get("reward"),
        task_sampler=fixed_order_sampler(order, config.num_tasks_per_step),
    )
    _seed_lora_b(ours.model, config.seed)
    our_grads: dict[str, torch.Tensor] = {}

    def record(*_: Any, **__: Any) -> None:  # the optimizer's step: keep the gradient, change no weight
        our_grads.update(
            {name: p.grad.detach().double().clone() for name, p in ours.model.named_parameters() if p.grad is not None}
        )

    ours.optimizer.step = record
    batch = 0  # the weights never change, so each try is a fresh batch of the same policy
    while True:
        our_grads.clear()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*lr_scheduler.step.*")
            metrics = ours.train_step()
        if any(bool(g.any()) for g in our_grads.values()):
            break
        batch += 1
        if batch == MAX_BATCHES:
            raise ValueError(
                f"in each of {MAX_BATCHES} batches every group's rewards were equal, so every advantage and the "
                "gradient were 0: nothing to compare; use a recipe or seed whose batches have rewards that differ "
                "within a group"
            )
    groups = ours.last_rollouts
    if metrics["groups"] != len(groups) or metrics["update_skipped"]:
        raise ValueError(
            f"our step trained {metrics['groups']} of {len(groups)} groups (dynamic sampling or failed episodes): "
            "the check needs the step to train every group it rolled out"
        )
    per_step = config.num_tasks_per_step
    indices = order[batch * per_step : (batch + 1) * per_step]
    lora = {name: p.detach() for name, p in ours.model.named_parameters() if p.requires_grad}
    trl_grads, inputs, trl_loss = _trl_gradient(
        model_path, env_id, env_kwargs, config, groups, indices, lora, trl_settings, device
    )
    if sorted(trl_grads) != sorted(our_grads):
        raise RuntimeError(f"the sides' LoRA parameters differ: {sorted(set(trl_grads) ^ set(our_grads))[:5]}")
    names = sorted(our_grads)
    a = torch.cat([our_grads[n].flatten() for n in names])
    b = torch.cat([trl_grads[n].flatten() for n in names])
    norm_a, norm_b = float(a.norm()), float(b.norm())
    cosine = float(a @ b) / (norm_a * norm_b) if norm_b else 0.0
    ratio = norm_b / norm_a
    return {
        "benchmark": "learn-check-update",
        "env": env_id,
        "batch": batch,
        "episodes": sum(len(group) for group in groups),
        "policy_tokens": {"envgym": metrics["policy_tokens"], "trl": int(inputs["num_items_in_batch"])},
        "rewards": [[t.total_reward for t in group] for group in groups],
        "loss": {"envgym": metrics["loss"], "trl": trl_loss},
        "grad_norm": {"envgym": norm_a, "trl": norm_b},
        "cosine": cosine,
        "norm_ratio": ratio,
        "lora_parameters": len(names),
        "check_settings": CHECK_SETTINGS,
        "trl_loss_type": TRL_LOSS_TYPE[config.loss_type],
        "thresholds": {"min_cosine": MIN_COSINE, "max_norm_gap": MAX_NORM_GAP},
        "passed": cosine >= MIN_COSINE and abs(ratio - 1.0) <= MAX_NORM_GAP and math.isfinite(cosine),
    }


def _seed_lora_b(model: Any, seed: int) -> None:
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * LORA_B_STD)


def _trl_gradient(
    model_path: str,
    env_id: str,
    env_kwargs: dict[str, Any],
    config: Any,
    groups: list[list[Any]],
    indices: list[int],
    lora: dict[str, Any],
    trl_settings: dict[str, Any] | None,
    device: str,
) -> tuple[dict[str, Any], dict[str, Any], float]:
    """TRL's gradient on ``groups`` (of the tasks ``indices``) with the LoRA weights ``lora``: its rollout step
    replays the groups, then its ``compute_loss`` and one backward pass."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer
    from trl.trainer.utils import split_tensor_dict

    from envgym.bench.learn_sides import episode_turns, trl_lora, trl_token_budget
    from envgym.integrations.trl import envgym_dataset, envgym_reward_func, task_index_of, trl_batch

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trajectories = [trajectory for group in groups for trajectory in group]
    played = [index for index, group in zip(indices, groups) for _ in group]

    def replay(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        if [task_index_of(p) for p in prompts] != played:
            raise RuntimeError("TRL asked for other prompts than the batch being replayed")
        return trl_batch(trajectories, trainer.eos_token_ids[0])

    dataset = envgym_dataset(env_id, indices[: len(groups)], **env_kwargs)
    if dataset["task_id"] != [group[0].episode.task_id for group in groups]:
        raise RuntimeError("our groups did not play the tasks of the check's task order")
    with tempfile.TemporaryDirectory() as out:
        settings = {
            "per_device_train_batch_size": len(trajectories),
            "num_generations": config.num_generations,
            "max_completion_length": trl_token_budget(config.max_completion_length, episode_turns(env_id, env_kwargs)),
            "learning_rate": config.learning_rate,
            "loss_type": TRL_LOSS_TYPE[config.loss_type],
            "epsilon": config.epsilon,
            "epsilon_high": config.epsilon_high if config.epsilon_high is not None else config.epsilon,
            "beta": config.beta,
            "scale_rewards": config.scale_rewards,
            "mask_truncated_completions": config.mask_truncated_completions,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "seed": config.seed,
            **(trl_settings or {}),
        }
        args = TRLConfig(
            output_dir=out,
            max_steps=1,
            report_to="none",
            save_strategy="no",
            use_cpu=device == "cpu",
            bf16=False,
            disable_tqdm=True,
            **settings,
        )
        trainer = TRLTrainer(
            model=AutoModelForCausalLM.from_pretrained(model_path),
            reward_funcs=[envgym_reward_func],
            args=args,
            train_dataset=dataset,
            processing_class=AutoTokenizer.from_pretrained(model_path),
            peft_config=trl_lora(config),  # dropout 0: CHECK_SETTINGS
            rollout_func=replay,
        )
        theirs = dict(trainer.model.named_parameters())
        missing = sorted(set(lora) - set(theirs))
        if missing:
            raise RuntimeError(f"TRL's model has no parameter {missing[0]} (and {len(missing) - 1} more)")
        with torch.no_grad():
            for name, value in lora.items():
                theirs[name].copy_(value.to(theirs[name].device))
        rows = [dataset[g] for g, group in enumerate(groups) for _ in group]
        trainer.model.train()
        inputs = trainer._generate_and_score_completions(rows)
        # One row at a time, as TRL's own gradient accumulation splits a generation batch (its loss divides each
        # part by the accumulation steps, or by the whole batch's token count): the same sum, far less memory.
        parts = len(trajectories)
        trainer.current_gradient_accumulation_steps = parts  # set by Trainer's loop, which this check does not run
        trainer.args.steps_per_generation = parts
        trainer.model.zero_grad(set_to_none=True)
        loss = 0.0
        for part in split_tensor_dict(inputs, parts):
            part_loss = trainer.compute_loss(trainer.model, part)
            part_loss.backward()
            loss += float(part_loss.detach())
        grads = {
            name: p.grad.detach().double().clone() for name, p in trainer.model.named_parameters() if p.grad is not None
        }
    return grads, inputs, loss

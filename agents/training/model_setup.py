"""The model the trainer trains, set up from its config: seeding, gradient checkpointing and LoRA, the
learning-rate schedule, and the copy asynchronous rollouts sample from.

Apart from :mod:`envgym.agents.training.trainer` so the loop reads as the loop.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from envgym.agents.training.config import GRPOConfig


def twin_model(model: Any) -> Any:
    """A model of ``model``'s architecture with weights of its own (filled by the first weight sync): what
    asynchronous rollouts sample from with the transformers engine."""
    from transformers import AutoModelForCausalLM

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return AutoModelForCausalLM.from_config(base.config, dtype=base.dtype)


def has_dropout(model: Any) -> bool:
    """Whether a train-mode forward of ``model`` is random: a dropout layer with p > 0 (LoRA dropout among them)."""
    return any(isinstance(module, torch.nn.Dropout) and module.p > 0 for module in model.modules())


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch: a run is repeatable from ``config.seed``."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def prepare_model(model: Any, config: GRPOConfig) -> Any:
    """``model`` as the config trains it: gradient checkpointing on, wrapped in LoRA adapters when ``lora_r > 0``."""
    if config.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if config.lora_r > 0:
        from peft import LoraConfig, get_peft_model

        if config.gradient_checkpointing:
            model.enable_input_require_grads()
        model = get_peft_model(
            model,
            LoraConfig(
                r=config.lora_r,
                lora_alpha=config.lora_alpha,
                lora_dropout=config.lora_dropout,
                target_modules=config.lora_target_modules,
                task_type="CAUSAL_LM",
            ),
        )
    return model


def lr_schedule(config: GRPOConfig) -> Callable[[int], float]:
    """The learning-rate factor per optimizer step (``LambdaLR``): linear warm-up, then linear, cosine or constant."""

    def factor(step: int) -> float:
        if step < config.warmup_steps:
            return (step + 1) / (config.warmup_steps + 1)
        total = config.max_steps * config.num_iterations  # optimizer steps in the whole run
        progress = (step - config.warmup_steps) / max(1, total - config.warmup_steps)
        if config.lr_scheduler_type == "linear":
            return max(0.0, 1.0 - progress)
        if config.lr_scheduler_type == "cosine":
            return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
        return 1.0

    return factor

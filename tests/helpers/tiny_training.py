"""A couple of GRPO steps with the tiny model on any env: proves an env trains end to end (not that it learns)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from helpers.tiny_models import tiny_model_path


def train_tiny(make_env: Callable[[], Any], *, steps: int = 2, max_completion_length: int = 8) -> list[dict]:
    """``steps`` GRPO steps (4 samples of 1 task each) of the tiny model on ``make_env()``; the metrics rows."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    path = tiny_model_path()
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=1,
        max_completion_length=max_completion_length,
        max_steps=steps,
        seed=0,
    )
    history = GRPOTrainer(model, tokenizer, make_env, config, device="cpu").train()
    assert len(history) == steps and all(math.isfinite(row["loss"]) for row in history)
    return history

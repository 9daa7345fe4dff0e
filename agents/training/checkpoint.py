"""A trainer's checkpoints: ``checkpoints/step-N`` holds the model and tokenizer (``from_pretrained`` loads
them) and ``trainer_state.pt``, everything an exact resume needs (trainable weights, optimizer, schedule, RNGs,
curricula, history, the batch already sampled ahead by asynchronous rollouts).

:meth:`GRPOTrainer.save_checkpoint <envgym.agents.training.trainer.GRPOTrainer.save_checkpoint>` and
``load_checkpoint`` call these.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from envgym.agents.engines.models import write_checkpoint_info

if TYPE_CHECKING:
    from envgym.agents.training.trainer import GRPOTrainer


def save_checkpoint(trainer: GRPOTrainer, path: str | Path | None = None) -> Path:
    """Write ``checkpoints/step-N``: the model and tokenizer (``from_pretrained`` loads them) and
    ``trainer_state.pt`` with everything an exact resume needs (weights, optimizer, schedule, RNGs)."""
    if path is None:
        if trainer.out_dir is None:
            raise ValueError("save_checkpoint needs a path when the trainer has no out_dir")
        path = trainer.out_dir / "checkpoints" / f"step-{trainer.step}"
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    trainer.model.save_pretrained(path)
    write_checkpoint_info(path, trainer.model)  # names the base model, so `--model path` loads it again
    if trainer.tokenizer is not None:
        trainer.tokenizer.save_pretrained(path)
    state = {
        "step": trainer.step,
        "config": dataclasses.asdict(trainer.config),
        "trainable": {n: p.detach().cpu().clone() for n, p in trainer.model.named_parameters() if p.requires_grad},
        "optimizer": trainer.optimizer.state_dict(),
        "scheduler": trainer.scheduler.state_dict(),
        "sampler_rng": trainer.sampler_rng.bit_generator.state,
        "mixture": trainer.mixture.state_dict(),  # curricula: frontiers and recent pass rates
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "python_rng": random.getstate(),
        "numpy_rng": np.random.get_state(),
        "history": trainer.history,
        "pending_batches": trainer.pending_batches,  # asynchronous rollouts sampled ahead
    }
    torch.save(state, path / "trainer_state.pt")
    return path


def load_checkpoint(trainer: GRPOTrainer, path: str | Path) -> None:
    """Continue exactly where ``save_checkpoint(trainer, path)`` left off: the next step equals the one the
    uninterrupted run would have taken."""
    state_path = Path(path) / "trainer_state.pt"
    if not state_path.exists():
        raise FileNotFoundError(f"{state_path} does not exist; give a folder written by save_checkpoint")
    state = torch.load(state_path, map_location="cpu", weights_only=False)
    params = dict(trainer.model.named_parameters())
    missing = sorted(set(state["trainable"]) - set(params))
    if missing:
        raise ValueError(f"checkpoint {path} has parameters this model lacks: {missing[:5]}")
    with torch.no_grad():
        for name, tensor in state["trainable"].items():
            params[name].copy_(tensor.to(params[name].device))
    trainer.optimizer.load_state_dict(state["optimizer"])
    trainer.scheduler.load_state_dict(state["scheduler"])
    trainer.sampler_rng.bit_generator.state = state["sampler_rng"]
    trainer.mixture.load_state_dict(state.get("mixture", {}))
    torch.set_rng_state(state["torch_rng"])
    if state["cuda_rng"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    random.setstate(state["python_rng"])
    np.random.set_state(state["numpy_rng"])
    trainer.step = state["step"]
    trainer.history = list(state["history"])
    trainer.pending_batches = state.get("pending_batches", [])
    trainer._sync_weights()  # the engine samples from the restored weights

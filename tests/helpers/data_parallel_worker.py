"""One rank of a data-parallel GRPO run, started by ``torchrun`` from tests/agents/training/test_data_parallel.py.

``update GROUPS OUT``: one update on the pickled groups; rank 0 writes the gradients and metrics.
``resume OUT``: 2 steps straight, and 1 step + checkpoint + 1 resumed step; rank 0 writes both runs' step-2
metrics and parameters. ``steps N OUT``: N steps; rank 0 writes the metrics and parameters.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.trainer import GRPOTrainer
from helpers.say_a_digit import SayADigit
from helpers.tiny_models import tiny_model_path

CONFIG = GRPOConfig(
    num_generations=4, num_tasks_per_step=4, max_completion_length=6, max_steps=2, seed=0, learning_rate=1e-3
)


def trainer(out_dir: Path | None = None) -> GRPOTrainer:
    path = tiny_model_path()
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    return GRPOTrainer(model, tokenizer, SayADigit, CONFIG, device="cpu", out_dir=out_dir)


def trained(t: GRPOTrainer) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in t.model.named_parameters() if p.requires_grad}


def gradients(t: GRPOTrainer) -> dict[str, torch.Tensor]:
    """The last update's gradients (summed over ranks, before clipping)."""
    return {name: p.grad.clone() for name, p in t.model.named_parameters() if p.grad is not None}


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode == "update":
        groups = pickle.loads(Path(args[0]).read_bytes())
        t = trainer()
        metrics = t._update(groups)
        result = {"metrics": metrics, "grads": gradients(t), "world": t.ranks.world_size}
        out = Path(args[1])
    elif mode == "resume":
        out = Path(args[0])
        straight = trainer()
        straight.train(2)
        first = trainer(out / "run")
        first.train(1)
        second = trainer()
        second.load_checkpoint(out / "run" / "checkpoints" / "step-1")
        second.train(1)
        result = {
            "straight": straight.history[-1],
            "resumed": second.history[-1],
            "straight_params": trained(straight),
            "resumed_params": trained(second),
        }
    else:
        t = trainer()
        t.train(int(args[0]))
        result = {"history": t.history, "params": trained(t), "world": t.ranks.world_size}
        out = Path(args[1])
    if t_rank() == 0:
        (out / "result.pt").parent.mkdir(parents=True, exist_ok=True)
        torch.save(result, out / "result.pt")


def t_rank() -> int:
    return torch.distributed.get_rank() if torch.distributed.is_initialized() else 0


if __name__ == "__main__":
    main()

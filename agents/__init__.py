"""Agents: policies, the token-level rollout loop, training, evaluation (see docs/agents.md).

Layout: ``engines/`` (the policy protocol and the engines behind it), ``rollout``/``trajectory``/``seats`` (the
loop both training and evaluation play episodes through), ``training/``, ``evaluation/``, ``benchmarks/``, and
the CLI glue (``cli``, ``cli_output``, ``preflight``, ``demo``) at the top.

Importing this package is light: torch, transformers and vLLM load when a policy is built, and the training and
evaluation names below load on first use (:func:`__getattr__`), so ``import envgym.agents`` stays torch-free.
"""

from importlib import import_module
from typing import Any

from envgym.agents.engines.openai_policy import OpenAIPolicy, OpenAIPolicyError
from envgym.agents.engines.policy import Generation, Policy, SamplingParams
from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.agents.rollout import RolloutResult, rollout
from envgym.agents.trajectory import Trajectory

# Public names whose modules import torch (or pull in the whole eval runner): loaded when first asked for.
_LAZY = {
    "EnvMixture": "envgym.agents.training.mixture",
    "GRPOConfig": "envgym.agents.training.grpo",
    "GRPOTrainer": "envgym.agents.training.trainer",
    "evaluate": "envgym.agents.evaluation.evaluate",
}


def __getattr__(name: str) -> Any:
    """Resolve a lazily exported name (``from envgym.agents import GRPOTrainer``) on first use."""
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'envgym.agents' has no attribute {name!r}")


__all__ = [
    "EnvMixture",
    "GRPOConfig",
    "GRPOTrainer",
    "Generation",
    "OpenAIPolicy",
    "OpenAIPolicyError",
    "Policy",
    "RolloutResult",
    "SamplingParams",
    "Trajectory",
    "TransformersPolicy",
    "evaluate",
    "rollout",
]

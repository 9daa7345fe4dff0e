"""Agents: policies, the token-level rollout loop, training, evaluation (see docs/agents.md).

Layout: ``engines/`` (the policy protocol and the engines behind it), ``rollout``/``trajectory``/``seats`` (the
loop both training and evaluation play episodes through), ``runs`` (the files a run folder holds), ``training/``
and ``evaluation/``. Agents import the light contract only (never an env, the sandbox or the top floor: the CLI,
servers and benchmarks that drive agents live in :mod:`envgym.cli`, :mod:`envgym.server` and :mod:`envgym.bench`).

Importing this package is light: torch, transformers and vLLM load when a policy is built, and the training and
evaluation names below load on first use (:func:`__getattr__`), so ``import envgym.agents`` stays torch-free.
"""

from typing import Any

from envgym.agents.engines.openai_policy import OpenAIPolicy, OpenAIPolicyError
from envgym.agents.engines.policy import Generation, Policy, SamplingParams
from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.agents.rollout import RolloutResult, rollout
from envgym.agents.trajectory import Trajectory


def __getattr__(name: str) -> Any:
    """The public names whose modules import torch (or the whole eval runner), imported on first use:
    ``from envgym.agents import GRPOTrainer`` loads the trainer then, ``import envgym.agents`` never does."""
    if name == "GRPOTrainer":
        from envgym.agents.training.trainer import GRPOTrainer

        return GRPOTrainer
    if name == "GRPOConfig":
        from envgym.agents.training.config import GRPOConfig

        return GRPOConfig
    if name == "EnvMixture":
        from envgym.agents.training.mixture import EnvMixture

        return EnvMixture
    if name == "evaluate":
        from envgym.agents.evaluation.evaluate import evaluate

        return evaluate
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

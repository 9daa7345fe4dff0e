"""Rewards as a spec: named components with weights and gates, from the env's verifier, reward wrappers,
judges and group rewards (see :mod:`envgym.rewards.spec` and ``docs/rewards.md``). Light: no torch."""

from envgym.rewards.group import answer_equivalence, group_values
from envgym.rewards.spec import SOURCES, RewardComponent, RewardSpec, RewardSpecError
from envgym.rewards.wrapper import apply_reward

__all__ = [
    "SOURCES",
    "RewardComponent",
    "RewardSpec",
    "RewardSpecError",
    "answer_equivalence",
    "apply_reward",
    "group_values",
]

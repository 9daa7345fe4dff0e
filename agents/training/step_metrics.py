"""One training step's rollouts (:class:`RolloutBatch`) and the metrics logged about them: rewards of every
episode rolled out, failures, per-env numbers of a mixture, and the policy's entropy.

Apart from :mod:`envgym.agents.training.trainer` so the loop reads as the loop, and so the metrics can be
tested on hand-built trajectories.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from envgym.agents.training.group_rewards import group_reward_metrics
from envgym.agents.training.mixture import EnvMixture
from envgym.agents.trajectory import Trajectory
from envgym.rewards import RewardSpec


@dataclasses.dataclass
class RolloutBatch:
    """One step's rollouts: the step (0-based) they are for, the groups to train on, every group rolled out,
    dynamic-sampling counts, the number of updates the sampling weights had seen, and the seconds the rollouts
    took."""

    step: int
    groups: list[list[Trajectory]]
    rollouts: list[list[Trajectory]]
    dropped: int
    rounds: int
    version: int
    seconds: float
    curriculum: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The curricula's metrics (``curriculum/<name>/level`` ...) once these rollouts were told to them."""


def entropy_sum(logits: torch.Tensor) -> float:
    """Sum over positions of the entropy of each next-token distribution (``entropy`` in the metrics)."""
    with torch.no_grad():
        logp = torch.log_softmax(logits.detach().float(), dim=-1)
        return float(-(logp.exp() * logp).sum())


def reward_metrics(groups: list[list[Trajectory]], rollouts: list[list[Trajectory]]) -> dict[str, Any]:
    """Rewards of every episode rolled out this step (kept and dropped groups alike, so the curve is honest),
    failed episodes left out: what they got is not a reward."""
    episodes = [t for group in rollouts for t in group if not t.failed]
    if not episodes:
        return {}
    rewards = np.array([t.total_reward for t in episodes])
    out: dict[str, Any] = {
        "reward_mean": float(rewards.mean()),
        "reward_std": float(rewards.std()),
        "episodes": len(episodes),
        "turns_mean": float(np.mean([len(t.turn_rewards) for t in episodes])),
        "truncated_fraction": float(np.mean([t.truncated for t in episodes])),
        "completion_tokens_mean": float(np.mean([t.num_policy_tokens for t in episodes])),
    }
    if any("tool_calls" in turn.info for t in episodes for turn in t.episode.turns):  # a tool env: is the tool used?
        out["tool_calls_mean"] = float(
            np.mean([sum(turn.info.get("tool_calls", 0) for turn in t.episode.turns) for t in episodes])
        )
    names = sorted({name for t in episodes for turn in t.turn_reward_components for name in turn})
    for name in names:
        out[f"reward/{name}"] = float(
            np.mean([sum(turn.get(name, 0.0) for turn in t.turn_reward_components) for t in episodes])
        )
    return out


def failure_metrics(rollouts: list[list[Trajectory]]) -> dict[str, Any]:
    """How many episodes failed (env, verifier, sandbox or model request) and in how many groups, and a sample
    of what went wrong; none of them was trained on. ``policy_failures``: healthy episodes in which a reward
    component scored its minimum for something the policy did (``info["reward_failures"]``)."""
    failed = [t for group in rollouts for t in group if t.failed]
    out: dict[str, Any] = {
        "episodes_failed": len(failed),
        "groups_failed": sum(any(t.failed for t in group) for group in rollouts),
    }
    if failed:
        out["failure_example"] = failed[0].error
    policy = [
        (name, reason)
        for group in rollouts
        for t in group
        if not t.failed
        for turn in t.episode.turns
        for name, reason in (turn.info.get("reward_failures") or {}).items()
    ]
    episodes = [t for group in rollouts for t in group if not t.failed]
    # Failures the policy caused (an answer never given, a judge reply its response broke): scored as each
    # component's minimum and trained on, counted here so a rising count is seen.
    out["policy_failures"] = sum(any(turn.info.get("reward_failures") for turn in t.episode.turns) for t in episodes)
    if policy:
        out["policy_failure_example"] = f"{policy[0][0]}: {policy[0][1]}"
    return out


def source_metrics(
    mixture: EnvMixture,
    reward_specs: list[RewardSpec | None],
    groups: list[list[Trajectory]],
    rollouts: list[list[Trajectory]],
) -> dict[str, Any]:
    """Group-reward metrics and, for a mixture, each env's reward metrics (``env/<name>/reward_mean``,
    ``.../groups`` ...); ``reward_specs`` are the mixture members' own, in order."""
    members = mixture.members
    if len(members) == 1:
        return group_reward_metrics(rollouts, reward_specs[0])
    out: dict[str, Any] = {}
    for member, spec in zip(members, reward_specs):
        mine = [group for group in rollouts if group[0].episode.env_id == member.name]
        kept = [group for group in groups if group[0].episode.env_id == member.name]
        per_env = {
            "groups": len(kept),
            "groups_drawn": len(mine),
            **reward_metrics(kept, mine),
            **group_reward_metrics(mine, spec),
        }
        out.update({f"env/{member.name}/{key}": value for key, value in per_env.items()})
    return out

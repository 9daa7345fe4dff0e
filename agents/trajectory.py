"""Trajectory: the token-level record of one episode, as the GRPO trainer consumes it.

The completion is one flat token sequence after the prompt: the policy's turns interleaved with the
env's answers (and the chat-template tokens around them). ``loss_mask`` says which tokens the policy
sampled, so a trainer computes the loss only on those; ``turn_ends`` says where each turn's reward
belongs. A trajectory whose episode ``failed`` (env, verifier, sandbox or model request) is not evidence
about the policy: trainers drop it instead of learning from its reward.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import envgym


@dataclasses.dataclass
class Trajectory:
    """Token ids, logprobs, loss mask and per-turn rewards of one episode (never re-tokenized)."""

    episode: envgym.Episode
    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    loss_mask: list[int]
    turn_ends: list[int]
    turn_rewards: list[float]
    turn_reward_components: list[dict[str, float]]
    truncated: bool
    group_id: str
    turn_reward_weights: list[dict[str, float]] = dataclasses.field(default_factory=list)
    """Per turn, the weight each reward component was multiplied by (``info["reward_weights"]``), for GDPO."""

    def __post_init__(self) -> None:
        n = len(self.completion_ids)
        if len(self.logprobs) != n or len(self.loss_mask) != n:
            raise ValueError(
                f"completion_ids ({n}), logprobs ({len(self.logprobs)}) and loss_mask "
                f"({len(self.loss_mask)}) must have the same length"
            )
        if len(self.turn_ends) != len(self.turn_rewards):
            raise ValueError(
                f"one reward per turn end is needed: {len(self.turn_ends)} turn ends, {len(self.turn_rewards)} rewards"
            )

    @property
    def error(self) -> str | None:
        """What failed, when the episode ended on a failure that is not the policy's fault."""
        return self.episode.error

    @property
    def failed(self) -> bool:
        return self.episode.failed

    @property
    def total_reward(self) -> float:
        return float(sum(self.turn_rewards))

    @property
    def num_policy_tokens(self) -> int:
        return int(sum(self.loss_mask))

    def token_rewards(self) -> list[float]:
        """A reward per completion token: each turn's reward at its last policy token, 0 elsewhere."""
        rewards = [0.0] * len(self.completion_ids)
        for end, reward in zip(self.turn_ends, self.turn_rewards):
            rewards[end] += reward
        return rewards

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "episode"}
        data["episode"] = self.episode.to_dict()
        return data

"""Whether a training step could learn anything, and if not, why and what to try.

GRPO learns only from contrast inside a group: when every episode of a task gets the same reward, every
advantage is 0, and so are the loss and the gradient. A step whose groups are all like that looks normal on a
console (``loss +0.0000``) while the model stays as it was; ``zero_advantage_groups`` counts such groups and
``warning`` says so in words when they are all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envgym.agents.training.advantages import turn_advantages
from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.process_rewards import process_token_advantages
from envgym.agents.trajectory import Trajectory


def learning_signal(rollouts: Sequence[Sequence[Trajectory]], config: GRPOConfig) -> dict[str, Any]:
    """``zero_advantage_groups`` (groups rolled out this step whose healthy episodes all get advantage 0 under the
    configured estimator, process-step credit included, computed over the step's groups as the update computes
    them) and, when that is every group, a ``warning`` with likely causes and remedies.

    The advantages themselves are the test, not a re-statement of when they vanish: estimators differ (``rebn``
    normalises returns over the whole batch, so identical episodes still get per-turn advantages)."""
    groups = [[t for t in group if not t.failed] for group in rollouts]
    groups = [group for group in groups if group]
    advantages = turn_advantages(
        [[t.turn_rewards for t in g] for g in groups],
        config,
        [[t.turn_reward_components for t in g] for g in groups],
        [[t.turn_reward_weights for t in g] for g in groups],
    )
    process = process_token_advantages(groups, config.advantage_epsilon)
    flat = [group for group, group_adv, steps in zip(groups, advantages, process) if not _moves(group_adv, steps)]
    out: dict[str, Any] = {"zero_advantage_groups": len(flat)}
    if groups and len(flat) == len(groups):
        out["warning"] = no_signal_warning(groups, config)
    return out


def _moves(per_turn: Sequence[Sequence[float]], per_step: Sequence[Sequence[float] | None]) -> bool:
    """Whether any turn or process-step advantage of a group is non-zero (so its tokens get gradient)."""
    return any(abs(a) > 1e-9 for episode in per_turn for a in episode) or any(
        tokens and any(abs(a) > 1e-9 for a in tokens) for tokens in per_step
    )


def no_signal_warning(groups: Sequence[Sequence[Trajectory]], config: GRPOConfig) -> str:
    """One line: what was seen (the rewards, the share of turns cut by the token budget) and what to try."""
    episodes = [t for group in groups for t in group]
    rewards = sorted({round(t.total_reward, 4) for t in episodes})
    shown = ", ".join(f"{r:g}" for r in rewards[:4]) + (", ..." if len(rewards) > 4 else "")
    turns = [turn for t in episodes for turn in t.episode.turns]
    cut = sum(turn.info.get("finish_reason") == "length" for turn in turns) / max(1, len(turns))
    causes = [
        "the task is too hard (all wrong) or too easy (all right) for this model",
        "a format penalty hits every sample",
    ]
    if cut > 0:
        causes.append(f"{cut:.0%} of turns were cut at max_completion_length={config.max_completion_length}")
    else:
        causes.append("completions are truncated")
    remedies = [
        "dynamic_sampling: true (refill with groups whose rewards differ)",
        "an easier or harder env setting, or a clearer prompt (system_prompt, few_shot)",
        "a larger max_completion_length",
    ]
    if config.dynamic_sampling:
        remedies = remedies[1:] + ["more dynamic_sampling_max_rounds"]
    return (
        f"no learning signal: in all {len(groups)} groups every episode got the same reward ({shown}), so "
        f"every advantage and the update are 0. Likely: {'; '.join(causes)}. Try: {'; '.join(remedies)}."
    )

"""GRPO's advantages: from groups of per-turn rewards to one advantage per turn (and per token).

Kept apart from the loss (:mod:`envgym.agents.training.grpo`) because none of it needs torch: process rewards
and dynamic sampling score groups with these functions before any tensor exists. Each advantage kind of
``GRPOConfig.advantage`` is here: group z-scores (``grpo``), Dr. GRPO's unscaled centring, RLOO's
leave-one-out baseline, ReBN's per-turn returns, GDPO's per-component normalisation and ``turn_grpo``; with
process rewards, :func:`step_advantages` gives each step of a response its own credit.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envgym.agents.training.config import GRPOConfig


# ----------------------------------------------------------------------------------------------------
# Advantages. Input: groups of episodes, each episode a list of per-turn rewards (and per-turn reward
# components for gdpo). Output: one advantage per turn of every episode, same nesting.
#
# Std convention everywhere: the unbiased sample std (Bessel's n-1, like torch.std and TRL); a set of one
# value has std 0. Every division is by (std + advantage_epsilon).
# ----------------------------------------------------------------------------------------------------


def _std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _zscore(values: Sequence[float], epsilon: float, scale: bool = True, std: float | None = None) -> list[float]:
    if not values:
        return []
    mean = statistics.fmean(values)
    if not scale:
        return [v - mean for v in values]
    std = _std(values) if std is None else std
    return [(v - mean) / (std + epsilon) for v in values]


def _scaled_group_advantages(
    groups: Sequence[Sequence[float]], scale_rewards: str, epsilon: float
) -> list[list[float]]:
    """(R_i - mean_group R) / (std + ε), the std taken per group, over the batch, or not at all."""
    batch_std = _std([r for group in groups for r in group])
    return [
        _zscore(group, epsilon, scale=scale_rewards != "none", std=batch_std if scale_rewards == "batch" else None)
        for group in groups
    ]


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """G_t = r_t + γ G_{t+1}: the reward-to-go of each turn."""
    returns, running = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        returns[t] = running
    return returns


def turn_advantages(
    groups: Sequence[Sequence[Sequence[float]]],
    config: GRPOConfig,
    components: Sequence[Sequence[Sequence[dict[str, float]]]] | None = None,
    weights: Sequence[Sequence[Sequence[dict[str, float]]]] | None = None,
) -> list[list[list[float]]]:
    """Per-turn advantages ``A[group][episode][turn]`` from per-turn rewards ``groups[group][episode][turn]``.

    With R_i = Σ_t r_{i,t} the episode return and ε = ``advantage_epsilon``:

    - ``grpo``:      A_i = (R_i - mean(R)) / (std(R) + ε), std per group/batch/none by ``scale_rewards``;
                     every turn of episode i gets A_i.
    - ``dr_grpo``:   A_i = R_i - mean(R)  (Dr. GRPO: no std division, no length normalization bias).
    - ``rloo``:      A_i = R_i - mean_{j≠i} R_j = G/(G-1) · (R_i - mean(R))  (leave-one-out baseline).
    - ``rebn``:      A_{i,t} = (G_{i,t} - mean(G)) / (std(G) + ε) with G_{i,t} = Σ_{k≥t} γ^{k-t} r_{i,k}, mean
                     and std over every turn of every episode in the batch (GEM's return batch normalization).
    - ``gdpo``:      see :func:`gdpo_advantages` (needs ``components``, and ``weights`` when the reward
                     wrappers weighted them).
    - ``turn_grpo``: A_{i,t} = N_t(r_{i,t}) + N_t(Σ_{k>t} r_{i,k}): the turn's own reward and the rewards
                     after it, each normalized (as ``grpo``, by ``scale_rewards``) among the episodes j of the
                     group that reached turn t, so every reward counts once in a turn's advantage (MT-GRPO's
                     turn-level credit, Zeng et al. 2025, arXiv:2505.11821, for any number of turns). For
                     one-turn episodes it equals ``grpo``; a turn reached by one episode only gets 0.
    """
    eps = config.advantage_epsilon
    kind = config.advantage
    if kind == "turn_grpo":
        return _turn_grpo(groups, config)
    if kind == "rebn":
        turn_returns = [[discounted_returns(episode, config.gamma) for episode in group] for group in groups]
        flat = [g for group in turn_returns for episode in group for g in episode]
        mean, std = statistics.fmean(flat) if flat else 0.0, _std(flat)
        return [[[(g - mean) / (std + eps) for g in episode] for episode in group] for group in turn_returns]
    returns = [[sum(episode) for episode in group] for group in groups]
    if kind in ("grpo", "dr_grpo"):
        episode_adv = _scaled_group_advantages(returns, "none" if kind == "dr_grpo" else config.scale_rewards, eps)
    elif kind == "rloo":
        episode_adv = [
            [(r - (sum(group) - r) / (len(group) - 1)) if len(group) > 1 else 0.0 for r in group] for group in returns
        ]
    else:  # gdpo
        if components is None:
            raise ValueError("advantage='gdpo' needs the per-turn reward components of every episode")
        episode_adv = gdpo_advantages(groups, components, weights, eps)
    return [
        [[a] * len(episode) for a, episode in zip(group_adv, group)] for group_adv, group in zip(episode_adv, groups)
    ]


def _turn_grpo(groups: Sequence[Sequence[Sequence[float]]], config: GRPOConfig) -> list[list[list[float]]]:
    advantages = [[[0.0] * len(episode) for episode in group] for group in groups]
    horizon = max((len(episode) for group in groups for episode in group), default=0)
    for t in range(horizon):
        reached = [[i for i, episode in enumerate(group) if len(episode) > t] for group in groups]
        own = [[groups[g][i][t] for i in indices] for g, indices in enumerate(reached)]
        after = [[sum(groups[g][i][t + 1 :]) for i in indices] for g, indices in enumerate(reached)]
        for values in (own, after):
            for g, normalized in enumerate(
                _scaled_group_advantages(values, config.scale_rewards, config.advantage_epsilon)
            ):
                for i, a in zip(reached[g], normalized):
                    advantages[g][i][t] += a
    return advantages


def gdpo_advantages(
    groups: Sequence[Sequence[Sequence[float]]],
    components: Sequence[Sequence[Sequence[dict[str, float]]]],
    weights: Sequence[Sequence[Sequence[dict[str, float]]]] | None,
    epsilon: float,
) -> list[list[float]]:
    """GDPO (Liu et al. 2026, "GDPO: Group reward-Decoupled Normalization Policy Optimization for Multi-reward
    RL Optimization", arXiv:2601.05242), one advantage per episode::

        A_i   = Σ_c w_c · (x^c_i - mean_group(x^c)) / (std_group(x^c) + ε)
        Â_i   = (A_i - mean_batch(A)) / (std_batch(A) + ε)

    x^c_i is the *raw* (unweighted) component c of episode i summed over its turns and w_c its configured
    weight. Normalizing each raw component within the group keeps a rare component from being drowned by a
    frequent one; weighting after the normalization is what makes w_c mean something (z-scores of components
    already multiplied by w_c would cancel it). The batch step keeps the scale independent of the component
    count.

    ``components`` are what the env reported per turn (``info["reward_components"]``, already multiplied by
    their weights); ``weights`` the per-turn ``info["reward_weights"]`` the reward wrappers recorded. A component
    without a recorded weight is taken as raw with weight 1; one weighted 0 contributes nothing. Episodes with
    no components at all count their scalar reward as the one component.
    """
    weights = weights if weights is not None else [[[{} for _ in episode] for episode in group] for group in components]
    component_weights: dict[str, float] = {}
    raw_groups = []
    for group, group_components, group_weights in zip(groups, components, weights):
        totals = [
            _raw_totals(turns, turn_weights, component_weights)
            for turns, turn_weights in zip(group_components, group_weights)
        ]
        if not any(totals):  # no components recorded: the scalar reward is the one component
            totals = [{"reward": sum(episode)} for episode in group]
        raw_groups.append(totals)
    sums = []
    for totals in raw_groups:
        names = sorted({name for total in totals for name in total})
        per_component = [
            [component_weights.get(name, 1.0) * z for z in _zscore([t.get(name, 0.0) for t in totals], epsilon)]
            for name in names
        ]
        sums.append([sum(column) for column in zip(*per_component)] if per_component else [0.0] * len(totals))
    flat = [a for group in sums for a in group]
    mean, std = (statistics.fmean(flat) if flat else 0.0), _std(flat)
    return [[(a - mean) / (std + epsilon) for a in group] for group in sums]


def _raw_totals(
    turns: Sequence[dict[str, float]], turn_weights: Sequence[dict[str, float]], component_weights: dict[str, float]
) -> dict[str, float]:
    """Σ over turns of each component divided by its recorded weight; records each weight in
    ``component_weights`` and refuses a component weighted differently in two places."""
    total: dict[str, float] = {}
    for turn, weights in zip(turns, turn_weights or [{}] * len(turns)):
        for name, value in turn.items():
            weight = float(weights.get(name, 1.0))
            seen = component_weights.setdefault(name, weight)
            if not math.isclose(seen, weight):
                raise ValueError(
                    f"reward component {name!r} has weight {seen} in one turn and {weight} in another; "
                    "GDPO needs one weight per component across the batch"
                )
            total[name] = total.get(name, 0.0) + (float(value) / weight if weight else 0.0)
    return total


def group_has_contrast(
    episodes: Sequence[Sequence[float]],
    config: GRPOConfig,
    components: Sequence[Sequence[dict[str, float]]] | None = None,
) -> bool:
    """Whether the episodes of one group differ in what ``config.advantage`` reads: the per-turn rewards for
    ``rebn``/``turn_grpo`` (equal totals can hide different turns), the per-episode component totals for
    ``gdpo``, the episode totals otherwise. Dynamic sampling drops a group without contrast."""
    if config.advantage in ("rebn", "turn_grpo"):
        keys = {tuple(round(r, 9) for r in episode) for episode in episodes}
    elif config.advantage == "gdpo" and components is not None:
        keys = {tuple(sorted((name, round(v, 9)) for name, v in _sum_turns(turns).items())) for turns in components}
    else:
        keys = {round(sum(episode), 9) for episode in episodes}
    return len(keys) > 1


def _sum_turns(turns: Sequence[dict[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for turn in turns:
        for name, value in turn.items():
            total[name] = total.get(name, 0.0) + float(value)
    return total


def token_advantages(num_tokens: int, turn_ends: Sequence[int], advantages: Sequence[float]) -> list[float]:
    """Spread per-turn advantages over the completion: token j belongs to the first turn whose last policy
    token is at or after j (tokens after the last turn end, if any, to the last turn)."""
    out = [0.0] * num_tokens
    start = 0
    for turn, (end, advantage) in enumerate(zip(turn_ends, advantages)):
        stop = num_tokens if turn == len(turn_ends) - 1 else end + 1
        out[start:stop] = [advantage] * (stop - start)
        start = stop
    return out


def step_returns(rewards: Sequence[float], credit: str = "min") -> list[float]:
    """The return of each step of a response from its process rewards r_1..r_K (steps in order, across turns).

    - ``min`` (PURE, Cheng et al. 2025, "Stop Summation: Min-Form Credit Assignment Is All Process Reward Model
      Needs for Reasoning", arXiv:2504.15275): G_k = min_{j≥k} r_j. A step is worth the worst step still ahead,
      so a long chain of mediocre steps cannot add up to more than its weakest link (the sum form invites
      reward hacking by padding steps).
    - ``sum``: G_k = Σ_{j≥k} r_j, the usual reward-to-go (γ = 1).
    """
    if credit not in ("min", "sum"):
        raise ValueError(f"credit must be one of min, sum; got {credit!r}")
    returns, running = [0.0] * len(rewards), None
    for k in range(len(rewards) - 1, -1, -1):
        r = float(rewards[k])
        running = r if running is None else (min(r, running) if credit == "min" else r + running)
        returns[k] = running
    return returns


def step_advantages(group: Sequence[Sequence[float]], credit: str, epsilon: float) -> list[list[float]]:
    """Per-step advantages of one group, ``A[episode][step]`` from process rewards ``group[episode][step]``::

        A_{i,k} = (G_{i,k} - mean(G)) / (std(G) + ε),   G from :func:`step_returns`

    with the mean and std over every step of every episode of the group (the group baseline of GRPO, taken
    over steps). The trainer adds A_{i,k}, times the component's weight, to the turn advantage of each policy
    token of step k, so the outcome's credit per turn is kept and each step gets its own on top."""
    returns = [step_returns(episode, credit) for episode in group]
    flat = [g for episode in returns for g in episode]
    if not flat:
        return [[] for _ in group]
    mean, std = statistics.fmean(flat), _std(flat)
    return [[(g - mean) / (std + epsilon) for g in episode] for episode in returns]

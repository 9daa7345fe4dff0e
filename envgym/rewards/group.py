"""Group rewards: values computed over the G episodes of one task after they end (never inside ``Env.step``).

The trainer (:mod:`envgym.agents.training.group_rewards`) gives each group's final answers to :func:`group_values`; the
answers are compared with the equivalence the component names (:func:`answer_equivalence`), so ``1/2``, ``0.5``
and ``\\frac{1}{2}`` are one answer for a math env. An answer the env refused when it graded the episode
(``action_valid=False``: ``\\boxed{8 - 5}`` where the value is asked for) is no answer here and cannot vote.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from envgym.rewards.spec import RewardComponent
from envgym.verifiers.vote import cluster_answers, self_consistency, vote_on_answers

Equivalence = Callable[[str, str], bool]


def exact_match(a: str, b: str) -> bool:
    """Two answers are the same text, ignoring surrounding whitespace."""
    return a.strip() == b.strip()


def answer_equivalence(env: Any, kind: str = "env") -> Equivalence:
    """How answers of ``env`` are compared: ``env`` uses the env's own ``answers_equivalent(a, b)`` (math envs
    compare with :func:`envgym.verifiers.math.equivalent`) and exact text for an env without one; ``math`` and
    ``exact`` name the comparison directly."""
    if kind == "math":
        from envgym.verifiers.math import equivalent

        return equivalent
    if kind == "exact":
        return exact_match
    if kind != "env":
        raise ValueError(f"equivalence must be one of env, math, exact; got {kind!r}")
    own = getattr(getattr(env, "unwrapped", env), "answers_equivalent", None)
    return own if callable(own) else exact_match


def collapse(answers: Sequence[str | None], same: Equivalence) -> dict[str, float]:
    """How far a group has collapsed onto one answer: ``group_collapse``, the largest cluster's share of the group
    (1.0: every response gave one answer); ``distinct_answers``, the number of clusters; ``answer_entropy``, the
    entropy (nats) of the answers over the group (responses without an answer count as one more outcome)."""
    clusters = cluster_answers(answers, same)
    sizes = [len(c) for c in clusters] + ([sum(a is None for a in answers)] if None in answers else [])
    total = len(answers) or 1
    entropy = -sum(n / total * math.log(n / total) for n in sizes if n)
    return {
        "group_collapse": max((len(c) for c in clusters), default=0) / total,
        "distinct_answers": float(len(clusters)),
        "answer_entropy": entropy + 0.0,
    }


def group_values(
    component: RewardComponent, answers: Sequence[str | None], same: Equivalence
) -> tuple[list[float], dict[str, Any]]:
    """The unweighted value of a group component for each episode, and what to log about the group.

    - ``majority_vote`` (TTRL, arXiv:2504.16084): 1 for the members of the largest cluster of equivalent answers
      (the pseudo-label), else 0; logs ``vote_agreement``, the majority's share of the group.
    - ``self_consistency``: each answer's share of the group that agrees with it; logs ``vote_agreement`` too.

    Episodes without an answer get 0 and never vote. A collapsed group gets no vote reward at all: fewer than
    ``min_distinct`` distinct answers (default 2: a group that all gave one answer, a constant, cannot win by
    agreeing with itself; its GRPO advantages would be 0 anyway) or an answer entropy below ``min_entropy``.
    Both log the group's :func:`collapse` and ``vote_guarded`` (1.0 when the guard withheld the reward).
    """
    if component.source not in ("majority_vote", "self_consistency"):
        raise ValueError(f"{component.name!r} (source {component.source!r}) is not a group reward")
    shape = collapse(answers, same)
    guarded = shape["distinct_answers"] < component.option("min_distinct") or shape[
        "answer_entropy"
    ] < component.option("min_entropy")
    logged: dict[str, Any] = {**shape, "vote_guarded": float(guarded)}
    if component.source == "majority_vote":
        vote = vote_on_answers(answers, same)
        values = vote.rewards
        logged.update(vote_agreement=vote.agreement, pseudo_label=vote.label)
    else:
        values = self_consistency(answers, same)
        logged["vote_agreement"] = max(values, default=0.0)
    return ([0.0] * len(values) if guarded else values), logged

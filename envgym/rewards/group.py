"""Group rewards: values computed over the G episodes of one task after they end (never inside ``Env.step``).

The trainer (:mod:`envgym.agents.training.group_rewards`) gives each group's final answers to :func:`group_values`; the
answers are compared with the equivalence the component names (:func:`answer_equivalence`), so ``1/2``, ``0.5``
and ``\\frac{1}{2}`` are one answer for a math env.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from envgym.rewards.spec import RewardComponent
from envgym.verifiers.vote import self_consistency, vote_on_answers

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


def group_values(component: RewardComponent, answers: Sequence[str | None],
                 same: Equivalence) -> tuple[list[float], dict[str, Any]]:
    """The unweighted value of a group component for each episode, and what to log about the group.

    - ``majority_vote`` (TTRL, arXiv:2504.16084): 1 for the members of the largest cluster of equivalent answers
      (the pseudo-label), else 0; logs ``vote_agreement``, the majority's share of the group.
    - ``self_consistency``: each answer's share of the group that agrees with it; logs ``vote_agreement`` too.
    Episodes without an answer get 0 and never vote.
    """
    if component.source == "majority_vote":
        vote = vote_on_answers(answers, same)
        return vote.rewards, {"vote_agreement": vote.agreement, "pseudo_label": vote.label}
    if component.source == "self_consistency":
        shares = self_consistency(answers, same)
        return shares, {"vote_agreement": max(shares, default=0.0)}
    raise ValueError(f"{component.name!r} (source {component.source!r}) is not a group reward")

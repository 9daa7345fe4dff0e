"""Majority vote over a group of responses: the label-free reward of Test-Time RL (TTRL, arXiv:2504.16084).

For the G responses to one task, extract each final answer, cluster the answers by equivalence, and take the
largest cluster's answer as the pseudo-label; each response is rewarded 1 if its answer is in that cluster,
else 0 (responses without an answer get 0 and never vote). Ties go to the answer seen first.
:func:`self_consistency` is the graded variant (the share of the group agreeing with each answer), and
:func:`cluster_answers` the clustering both use, which ``maj@k`` in eval shares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence


@dataclasses.dataclass(frozen=True)
class Vote:
    """``label``: the majority answer (None if no response had one); ``rewards``: one per response;
    ``answers``: each response's extracted answer; ``agreement``: the majority's share of all responses."""

    label: str | None
    rewards: list[float]
    answers: list[str | None]
    agreement: float


def majority_vote(
    responses: Sequence[str],
    *,
    extract: Callable[[str], str | None] | None = None,
    same: Callable[[str, str], bool] | None = None,
) -> Vote:
    """TTRL rewards for one task's group. Defaults: math answers (``extract_answer`` and ``equivalent``).

    ``extract`` maps a response to its answer; ``same`` decides whether two answers are the same.
    """
    if isinstance(responses, str) or not responses:
        raise ValueError("responses must be a non-empty list of response strings (one group)")
    if extract is None or same is None:
        from envgym.verifiers.math import equivalent, extract_answer

        extract = extract or extract_answer
        same = same or equivalent
    return vote_on_answers([extract(r) for r in responses], same)


def vote_on_answers(answers: Sequence[str | None], same: Callable[[str, str], bool]) -> Vote:
    """:func:`majority_vote` over answers already extracted (None: the response had none)."""
    clusters = cluster_answers(answers, same)
    if not clusters:
        return Vote(None, [0.0] * len(answers), list(answers), 0.0)
    winner = max(clusters, key=len)  # max keeps the first of equal-sized clusters
    members = set(winner)
    rewards = [1.0 if i in members else 0.0 for i in range(len(answers))]
    return Vote(answers[winner[0]], rewards, list(answers), len(winner) / len(answers))


def cluster_answers(answers: Sequence[str | None], same: Callable[[str, str], bool]) -> list[list[int]]:
    """Indices of ``answers`` grouped by equivalence, clusters in order of first appearance; an answer joins the
    first cluster whose first answer it is ``same`` as. None (no answer) joins no cluster."""
    clusters: list[list[int]] = []
    for index, answer in enumerate(answers):
        if answer is None:
            continue
        for cluster in clusters:
            if same(answer, answers[cluster[0]]):
                cluster.append(index)
                break
        else:
            clusters.append([index])
    return clusters


def self_consistency(answers: Sequence[str | None], same: Callable[[str, str], bool]) -> list[float]:
    """Each answer's share of the group that agrees with it (its cluster's size / G; 0 without an answer): a
    graded form of the majority vote, where a near-tie still separates the larger side from the smaller."""
    shares = [0.0] * len(answers)
    for cluster in cluster_answers(answers, same):
        for index in cluster:
            shares[index] = len(cluster) / len(answers)
    return shares

"""Evaluation metrics over n samples per task: unbiased pass@k and maj@k.

pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", arXiv:2107.03374): with n
samples of which c are correct, the probability that at least one of k samples drawn without replacement
is correct,

    pass@k = 1 - C(n - c, k) / C(n, k)

averaged over tasks. It is unbiased, unlike ``1 - (1 - c/n)^k``.

pass^k (Yao et al. 2024, "τ-bench", arXiv:2406.12045): the probability that k samples drawn without replacement
are *all* correct, ``C(c, k) / C(n, k)``, averaged over tasks: how reliably a model solves a task, where pass@k
says whether it can at all. pass^1 = pass@1.

Standard errors: every mean in results.json has one in ``stderr`` (same key), computed over tasks: the standard
deviation of the per-task values (a task's pass@k, or the mean of its samples' rewards, turns...) over the square
root of the number of tasks. Samples of one task are not independent draws (they share the task), so tasks are
the unit; with equal samples per task the mean of the per-task means is the mean itself. With one task the
error is undefined: ``null`` in results.json, and the reports show the mean alone.

maj@k: the majority answer among the first k samples of a task (ties go to the answer seen first) is
correct; averaged over tasks. Samples without an answer do not vote. Answers are clustered with the env's
equivalence (``same``, e.g. a math env's ``answers_equivalent``: ``1/2``, ``0.5`` and ``\\frac{1}{2}`` are one
answer), the clustering of the trainer's majority-vote reward (:func:`envgym.verifiers.vote.cluster_answers`);
without one, answers vote as exact values.

Failed samples (the env, verifier, sandbox or model request failed: ``error`` is set) are no evidence about
the model, so they are left out before anything is counted: n is a task's number of *healthy* samples. A
task with fewer than k healthy samples has no unbiased pass@k (C(n, k) = 0), so it is left out of pass@k and
maj@k, and ``n_tasks@k`` says over how many tasks each k was averaged (every task, when nothing failed).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from math import comb
from typing import Any

from envgym.verifiers.vote import cluster_answers


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task with ``n`` samples, ``c`` of them correct."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n samples per task; got n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k of one task with ``n`` samples, ``c`` of them correct: all of k samples correct."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass^{k} needs 1 <= k <= n samples per task; got n={n}")
    return comb(c, k) / comb(n, k)


def standard_error(values: Sequence[float]) -> float | None:
    """The standard error of the mean of ``values`` (sample standard deviation over sqrt(n)); None below 2 values,
    where it is not defined (a one-task run has no spread to measure: reporting 0 would claim certainty)."""
    n = len(values)
    if n < 2:
        return None
    centre = sum(values) / n
    return math.sqrt(sum((v - centre) ** 2 for v in values) / (n - 1) / n)


def majority_correct(
    answers: Sequence[Any], correct: Sequence[bool], k: int, same: Callable[[Any, Any], bool] | None = None
) -> bool:
    """Whether the majority answer of the first ``k`` samples is a correct one: the largest cluster of answers
    that are ``same`` (default: equal; ties go to the cluster seen first) holds a correct sample."""
    if len(answers) != len(correct):
        raise ValueError(f"{len(answers)} answers but {len(correct)} correctness flags")
    if not 1 <= k <= len(answers):
        raise ValueError(f"maj@{k} needs 1 <= k <= n samples per task; got n={len(answers)}")
    clusters = cluster_answers(answers[:k], same or (lambda a, b: a == b))
    if not clusters:
        return False
    winner = max(clusters, key=len)  # max keeps the first of equal-sized clusters
    return any(correct[i] for i in winner)


def mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def task_metrics(
    samples_by_task: dict[Any, list[dict[str, Any]]], ks: Sequence[int], same: Callable[[Any, Any], bool] | None = None
) -> dict[str, float]:
    """pass@k, pass^k, maj@k and ``n_tasks@k`` over tasks, from per-sample records with ``correct`` and ``answer``
    (and ``error``, failed when set), in sample order; ``same`` clusters answers for maj@k. ``stderr`` holds the
    standard error of each pass@k, pass^k and maj@k over tasks.

    Failed samples are dropped first; each k is averaged over the tasks with at least k healthy samples (see
    the module docstring), and a k that no task reaches is left out."""
    healthy = {task: [x for x in samples if x.get("error") is None] for task, samples in samples_by_task.items()}
    out: dict[str, Any] = {}
    errors: dict[str, float] = {}
    for k in sorted(set(ks) | {1}):
        tasks = [s for s in healthy.values() if len(s) >= k]
        if not tasks:
            continue
        counts = [(len(s), sum(bool(x["correct"]) for x in s)) for s in tasks]
        per_task = {
            f"pass@{k}": [pass_at_k(n, c, k) for n, c in counts],
            f"pass^{k}": [pass_hat_k(n, c, k) for n, c in counts],
            f"maj@{k}": [
                float(majority_correct([x.get("answer") for x in s], [bool(x["correct"]) for x in s], k, same))
                for s in tasks
            ],
        }
        for name, values in per_task.items():
            out[name] = mean(values)
            errors[name] = standard_error(values)
        out[f"n_tasks@{k}"] = len(tasks)
    out["stderr"] = errors
    return out


def finish_reason(episode: dict[str, Any]) -> str:
    """How an episode (``Episode.to_dict()``) ended: ``error`` (env, verifier, sandbox or request failed),
    ``token_budget`` (the rollout loop cut it), ``truncated`` (the env's turn limit or another limit of its own),
    ``terminated`` (the task ended: answered, solved, failed), else ``unfinished``."""
    turns = episode.get("turns") or []
    if episode.get("error") is not None:
        return "error"
    cut = (episode.get("metadata") or {}).get("truncated_by")
    if cut:
        return str(cut)
    if turns and turns[-1].get("terminated"):
        return "terminated"
    if turns and turns[-1].get("truncated"):
        return "truncated"
    return "unfinished"


def score_breakdown(episodes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What explains a mean reward (``episodes`` as ``Episode.to_dict()``): how every episode ended
    (``finish_reasons``, failures too) and, over healthy ones, the mean of each reward component per episode
    (``reward_components``) and the share of turns the token budget cut (``turn_truncation_rate``: a turn whose
    generation stopped at ``max_completion_length``, which whole-episode ``truncation_rate`` misses when the env
    still answered) and ``policy_failures``, the healthy episodes in which a component scored its minimum for
    something the policy did, and ``failure_reasons``: how often each failure kind an env reports on the last turn
    (``info["call_failure"]``, the call verifier's kinds) ended an episode."""
    reasons = dict(sorted(Counter(finish_reason(e) for e in episodes).items()))
    episodes = [episode for episode in episodes if episode.get("error") is None]
    turns = [turn for episode in episodes for turn in episode.get("turns") or []]
    cut = sum((turn.get("info") or {}).get("finish_reason") == "length" for turn in turns)
    names = sorted({name for turn in turns for name in turn.get("reward_components") or {}})
    components = {
        name: mean(
            [
                sum((turn.get("reward_components") or {}).get(name, 0.0) for turn in episode.get("turns") or [])
                for episode in episodes
            ]
        )
        for name in names
    }
    # Why answers failed, where the env says (a call verifier's failure kind, info["call_failure"]).
    failures = Counter(
        str(kind)
        for episode in episodes
        for kind in [((episode.get("turns") or [{}])[-1].get("info") or {}).get("call_failure")]
        if kind is not None
    )
    # A failure the policy caused scored a component's minimum (info["reward_failures"]): counted, never dropped.
    policy_failures = sum(
        any((t.get("info") or {}).get("reward_failures") for t in e.get("turns") or []) for e in episodes
    )
    return {
        "reward_components": components,
        "turn_truncation_rate": cut / len(turns) if turns else 0.0,
        "finish_reasons": reasons,
        "policy_failures": policy_failures,
        "failure_reasons": dict(failures.most_common()),
    }


def group_table(envs: dict[str, dict[str, Any]], groups: dict[str, str]) -> dict[str, Any]:
    """Per group (``groups``: env id -> group name, in suite order), the unweighted mean of its envs' pass@1, as a
    leaderboard averages its categories, and ``overall``, the unweighted mean of the groups. Envs without a group
    are left out; {} when no env has one."""
    members: dict[str, list[str]] = {}
    for env_id, group in groups.items():
        if env_id in envs and "pass@1" in envs[env_id]:
            members.setdefault(group, []).append(env_id)
    if not members:
        return {}
    table: dict[str, Any] = {
        group: {"envs": ids, "pass@1": mean([envs[env_id]["pass@1"] for env_id in ids])}
        for group, ids in members.items()
    }
    return {"groups": table, "overall": mean([row["pass@1"] for row in table.values()])}

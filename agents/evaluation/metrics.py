"""Evaluation metrics over n samples per task: unbiased pass@k and maj@k.

pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", arXiv:2107.03374): with n
samples of which c are correct, the probability that at least one of k samples drawn without replacement
is correct,

    pass@k = 1 - C(n - c, k) / C(n, k)

averaged over tasks. It is unbiased, unlike ``1 - (1 - c/n)^k``.

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


def majority_correct(answers: Sequence[Any], correct: Sequence[bool], k: int,
                     same: Callable[[Any, Any], bool] | None = None) -> bool:
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


def task_metrics(samples_by_task: dict[Any, list[dict[str, Any]]], ks: Sequence[int],
                 same: Callable[[Any, Any], bool] | None = None) -> dict[str, float]:
    """pass@k, maj@k and ``n_tasks@k`` over tasks, from per-sample records with ``correct`` and ``answer`` (and
    ``error``, failed when set), in sample order; ``same`` clusters answers for maj@k.

    Failed samples are dropped first; each k is averaged over the tasks with at least k healthy samples (see
    the module docstring), and a k that no task reaches is left out."""
    healthy = {task: [x for x in samples if x.get("error") is None] for task, samples in samples_by_task.items()}
    out: dict[str, float] = {}
    for k in sorted(set(ks) | {1}):
        tasks = [s for s in healthy.values() if len(s) >= k]
        if not tasks:
            continue
        out[f"pass@{k}"] = mean([pass_at_k(len(s), sum(bool(x["correct"]) for x in s), k) for s in tasks])
        out[f"maj@{k}"] = mean([float(majority_correct([x.get("answer") for x in s], [bool(x["correct"]) for x in s], k,
                                                       same)) for s in tasks])
        out[f"n_tasks@{k}"] = len(tasks)
    return out


def finish_reason(episode: dict[str, Any]) -> str:
    """How an episode (``Episode.to_dict()``) ended: ``error`` (env, verifier, sandbox or request failed),
    ``token_budget`` or ``max_turns`` (the rollout loop cut it), ``truncated`` (the env's own limit),
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
    generation stopped at ``max_new_tokens``, which whole-episode ``truncation_rate`` misses when the env
    still answered)."""
    reasons = dict(sorted(Counter(finish_reason(e) for e in episodes).items()))
    episodes = [episode for episode in episodes if episode.get("error") is None]
    turns = [turn for episode in episodes for turn in episode.get("turns") or []]
    cut = sum((turn.get("info") or {}).get("finish_reason") == "length" for turn in turns)
    names = sorted({name for turn in turns for name in turn.get("reward_components") or {}})
    components = {name: mean([sum((turn.get("reward_components") or {}).get(name, 0.0) for turn in episode.get("turns") or [])
                              for episode in episodes]) for name in names}
    return {"reward_components": components, "turn_truncation_rate": cut / len(turns) if turns else 0.0,
            "finish_reasons": reasons}

"""Evaluation: ``num_generations`` samples per task over envs or a YAML suite -> per-sample JSONL, results.json,
reports.

Each env is played in GRPO-style groups (the samples of a task are one group), batched ``batch_size``
episodes at a time through :func:`~envgym.agents.rollout.rollout`. Every finished sample is appended to
``samples.jsonl`` at once, so an interrupted run resumes where it stopped: tasks whose samples are all
on file are not played again, provided they were made with the same setup (model, policy settings, seed,
sampling and env settings: :mod:`envgym.agents.evaluation.eval_resume`); samples of another setup are refused, never
reused. Each batch is seeded from the run's seed and its first task, so a resumed run draws what the
uninterrupted run would have (same batch size).

A sample is *correct* when a turn's ``info["correct"]`` says so; envs that never report ``correct`` count
a positive total reward as correct. The answer that votes in maj@k is the last ``info["answer"]`` seen.
A sample whose env, verifier, sandbox or model request failed (``Episode.error``) is not a score of 0: it is
counted in ``n_failed`` and left out of pass@k, maj@k and the means.

With ``keep_tokens`` each sample also keeps its token ids, loss mask and turn ends (and the tokenizer's name) in
the episode's metadata, the keys ``envgym export --tokens`` reads; off by default because they roughly double the size
of ``samples.jsonl`` (about 10 bytes per token).

How each env is evaluated is an :class:`~envgym.agents.evaluation.suite.EnvEval` (a suite file's entry, or the
command line's; :mod:`envgym.agents.evaluation.suite`). maj@k clusters answers with the env's equivalence (a
math env compares values: ``1/2`` and ``0.5`` agree).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import envgym
from envgym.agents.engines.policy import Policy, request_seed
from envgym.agents.evaluation.eval_resume import check_resumable, sample_setup
from envgym.agents.evaluation.metrics import group_table, mean, score_breakdown, standard_error, task_metrics
from envgym.agents.evaluation.suite import EnvEval
from envgym.agents.rollout import rollout
from envgym.agents.runs import RESULTS_FILE, SAMPLES_FILE, TOKEN_KEYS
from envgym.agents.trajectory import Trajectory


def sample_record(
    episode: envgym.Episode, trajectory: Trajectory | None = None, tokenizer: str | None = None
) -> dict[str, Any]:
    """The per-sample line of ``samples.jsonl``: the numbers metrics need, then the whole episode; given the
    episode's ``trajectory``, its metadata also keeps the token ids (:func:`token_metadata`)."""
    flags = [t.info["correct"] for t in episode.turns if "correct" in t.info]
    correct = bool(flags[-1]) if flags else episode.total_reward > 0
    answers = [t.info["answer"] for t in episode.turns if t.info.get("answer") is not None]
    tool_calls = 0
    for turn in episode.turns:
        calls = turn.info.get("tool_calls", 0)
        tool_calls += len(calls) if isinstance(calls, list) else int(calls or 0)
    record = {
        "env_id": episode.env_id,
        "task_index": episode.metadata.get("task_index"),
        "task_id": episode.task_id,
        "sample": episode.metadata.get("sample_index"),
        "reward": episode.total_reward,
        "correct": correct,
        "answer": answers[-1] if answers else None,
        "turns": episode.num_turns,
        "tool_calls": tool_calls,
        "tokens": episode.metadata.get("policy_tokens", sum(t.info.get("policy_tokens", 0) for t in episode.turns)),
        "truncated": episode.truncated or "truncated_by" in episode.metadata,
        "error": episode.error,
        "episode": episode.to_dict(),
    }
    if trajectory is not None:
        record["episode"]["metadata"].update(token_metadata(trajectory, tokenizer))
    return record


def token_metadata(trajectory: Trajectory, tokenizer: str | None) -> dict[str, Any]:
    """What ``envgym export --tokens`` reads: the ids as the policy saw and sampled them (never re-tokenized),
    the loss mask, where each turn ends, and which tokenizer the ids belong to."""
    return {**{key: getattr(trajectory, key) for key in (*TOKEN_KEYS, "turn_ends")}, "tokenizer": tokenizer}


def tokenizer_name(tokenizer: Any, fallback: str | None) -> str | None:
    """The name or path a tokenizer was loaded from (``fallback``, e.g. the model's name, when it does not say)."""
    return getattr(tokenizer, "name_or_path", None) or fallback


def summarize(
    config: EnvEval, records: list[dict[str, Any]], seconds: float, same: Callable[[Any, Any], bool] | None = None
) -> dict[str, Any]:
    """The results.json entry of one env. Failed samples (``error`` set) are counted in ``n_failed`` and left
    out of every other number: their reward is not the model's (see :mod:`envgym.agents.evaluation.metrics` for pass@k).
    ``same`` is the env's answer equivalence, which maj@k clusters answers with."""
    by_task: dict[Any, list[dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: (r["task_index"], r["sample"])):
        by_task.setdefault(record["task_index"], []).append(record)
    healthy = [r for r in records if r.get("error") is None]
    summary: dict[str, Any] = dict(task_metrics(by_task, config.k, same))
    sample_means = {
        "mean_reward": lambda r: r["reward"],
        "avg_turns": lambda r: r["turns"],
        "avg_tool_calls": lambda r: r["tool_calls"],
        "avg_tokens": lambda r: r["tokens"],
        "truncation_rate": lambda r: float(r["truncated"]),
    }
    healthy_by_task = [[r for r in task if r.get("error") is None] for task in by_task.values()]
    healthy_by_task = [task for task in healthy_by_task if task]
    for name, value in sample_means.items():
        summary[name] = mean([value(r) for r in healthy])
        # Tasks are the unit of the standard error (metrics module docstring): one mean per task.
        summary["stderr"][name] = standard_error([mean([value(r) for r in task]) for task in healthy_by_task])
    summary.update(
        n_tasks=len(by_task),
        n_samples=len(records),
        n_failed=len(records) - len(healthy),
        seconds=round(seconds, 3),
        rewards=[r["reward"] for r in healthy],
    )
    summary.update(score_breakdown([r["episode"] for r in records]))
    if len(healthy) < len(records):
        summary["failure_example"] = next(r["error"] for r in records if r.get("error") is not None)
    return summary


def tasks_to_play(config: EnvEval) -> int:
    """``config.n_tasks``, or all of the env's tasks when it has fewer: a suite-wide ``--n-tasks 20`` plays every
    task of a 16-task env (``n_tasks`` in its results says 16) instead of failing on tasks 16 to 19."""
    env = envgym.make(config.env, **config.make_kwargs())
    try:
        source = env.unwrapped.tasks
        return config.n_tasks if source is None else min(config.n_tasks, len(source))
    finally:
        env.close()


def evaluate(
    policy: Policy,
    configs: Sequence[EnvEval],
    out_dir: str | Path,
    *,
    batch_size: int = 32,
    seed: int = 0,
    resume: bool = True,
    model_name: str | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    keep_tokens: bool = False,
) -> dict[str, Any]:
    """Evaluate ``policy`` on every env of ``configs``; writes and returns ``results.json``'s content.

    on_progress: called with (env id, samples done, samples in all) as episodes finish.
    keep_tokens: keep each sample's token ids in ``samples.jsonl`` (a token-level policy only; see the module
        docstring). Resumed tasks whose samples lack them are played again.
    Raises :class:`~envgym.agents.evaluation.eval_resume.ResumeMismatch` when resuming into samples of another setup."""
    if keep_tokens and getattr(policy, "tokenizer", None) is None:
        raise ValueError(f"keep_tokens needs a token-level policy; {policy.name} exchanges messages, not token ids")
    tokenizer = tokenizer_name(getattr(policy, "tokenizer", None), model_name or policy.name) if keep_tokens else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    samples_path = out / SAMPLES_FILE
    setups = {c.env: sample_setup(policy, c, model_name=model_name, seed=seed) for c in configs}
    if resume:
        check_resumable(samples_path, setups)
    done = _load_done(samples_path, {c.env: c.num_generations for c in configs}, keep_tokens) if resume else {}
    with samples_path.open("w", encoding="utf-8") as handle:  # keep only complete tasks from a previous run
        for records in done.values():
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    started = time.perf_counter()
    results: dict[str, Any] = {"model": model_name or policy.name, "envs": {}}
    for config in configs:
        env_started = time.perf_counter()
        records = list(done.get(config.env, []))
        finished_tasks = {r["task_index"] for r in records}
        n_tasks = tasks_to_play(config)
        todo = [t for t in range(n_tasks) if t not in finished_tasks]
        total = n_tasks * config.num_generations
        if on_progress:
            on_progress(config.env, len(records), total)
        groups_per_batch = max(1, batch_size // config.num_generations)
        for start in range(0, len(todo), groups_per_batch):
            tasks = todo[start : start + groups_per_batch]
            envs = envgym.make_vec(config.env, len(tasks) * config.num_generations, **config.make_kwargs())
            try:
                sampling = config.sampling(request_seed(seed, tasks[0]))
                result = rollout(
                    policy,
                    envs,
                    sampling=sampling,
                    num_generations=config.num_generations,
                    task_indices=tasks,
                    seed=seed,
                    max_episode_tokens=config.max_episode_tokens,
                    template_tools=config.template_tools,
                )
            finally:
                envs.close()
            trajectories = result.trajectories if keep_tokens else [None] * len(result.episodes)
            new = [
                {**sample_record(e, t, tokenizer), "setup": setups[config.env]}
                for e, t in zip(result.episodes, trajectories)
            ]
            with samples_path.open("a", encoding="utf-8") as handle:
                for record in new:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            records.extend(new)
            if on_progress:
                on_progress(config.env, len(records), total)
        results["envs"][config.env] = summarize(
            config, records, time.perf_counter() - env_started, same=_answer_equivalence(config)
        )
        results["envs"][config.env]["config"] = config.model_dump()
    groups = group_table(results["envs"], {c.env: c.group for c in configs if c.group})
    if groups:
        results["groups"] = groups
    results["elapsed_s"] = round(time.perf_counter() - started, 3)
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=2))
    return results


def _answer_equivalence(config: EnvEval) -> Callable[[Any, Any], bool]:
    """How the env compares answers (a math env: by value), for maj@k."""
    from envgym.rewards import answer_equivalence

    env = envgym.make(config.env, **config.make_kwargs())
    try:
        return answer_equivalence(env)
    finally:
        env.close()


def _load_done(path: Path, n_by_env: dict[str, int], keep_tokens: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Records of tasks whose every sample is on file (a torn last line from a crash is ignored); with
    ``keep_tokens``, a sample without its token ids does not count (its task is played again to get them)."""
    if not path.exists():
        return {}
    by_task: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if keep_tokens and "prompt_ids" not in (record.get("episode") or {}).get("metadata", {}):
            continue
        if record.get("env_id") in n_by_env:
            by_task.setdefault((record["env_id"], record["task_index"]), []).append(record)
    done: dict[str, list[dict[str, Any]]] = {}
    for (env_id, _), records in sorted(by_task.items(), key=lambda item: (item[0][0], item[0][1])):
        if len({r["sample"] for r in records}) >= n_by_env[env_id]:
            done.setdefault(env_id, []).extend(records[: n_by_env[env_id]])
    return done

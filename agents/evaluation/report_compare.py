"""The before/after page: two eval runs side by side (``envgym demo``'s before and after, or any two runs through
``envgym eval compare A B --out DIR``).

Per env it shows both runs' rewards; per task both runs' transcripts in two columns, and whether the task
*flipped*. A task passes in a run when at least half of its healthy samples are correct (the majority of its
samples, so one lucky sample of four does not count as solved); a task flips when it passes in one run and not
in the other. Tasks whose samples all failed (env, verifier or request errors) pass in neither and never flip.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from envgym.agents.evaluation.report_transcripts import (
    count_and_toggles,
    data_attributes,
    escaped,
    number_text,
    outcome,
    page,
    sample_row,
    sort_number,
    task_filter,
)

FLIPS = {(False, True): "up", (True, False): "down"}


def task_passes(records: list[dict[str, Any]]) -> bool | None:
    """Whether a task passes in a run (at least half of its healthy samples correct); None without one."""
    healthy = [r for r in records if outcome(r) != "error"]
    if not healthy:
        return None
    return 2 * sum(outcome(r) == "pass" for r in healthy) >= len(healthy)


def comparison_page(
    runs: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    nav: list[tuple[str, str]] | None = None,
    names: list[str] | None = None,
) -> str:
    """The page for two runs, each given as (``results.json`` content, ``samples.jsonl`` records); ``names``
    label them (default: their models)."""
    (results_a, samples_a), (results_b, samples_b) = runs
    names = names or [str(results_a["model"]), str(results_b["model"])]
    env_ids = [e for e in results_a["envs"] if e in results_b["envs"]]
    by_task = [_by_task(samples_a), _by_task(samples_b)]
    sections = "".join(_env_section(env_id, names, by_task) for env_id in env_ids)
    options = "".join(f"<option>{escaped(e)}</option>" for e in env_ids)
    controls = (
        f"<label>env <select id='env'><option value='all'>all</option>{options}</select></label>"
        + task_filter()
        + "<label><input id='flipped-only' type='checkbox'> flipped tasks only</label>"
        + count_and_toggles()
    )
    alone = [e for e in [*results_a["envs"], *results_b["envs"]] if e not in env_ids]
    note = f"<p>Left out, in one run only: {escaped(', '.join(dict.fromkeys(alone)))}.</p>" if alone else ""
    body = (
        f"<p>A: <b>{escaped(names[0])}</b> · B: <b>{escaped(names[1])}</b>. A task passes when at least half of "
        "its samples are correct; it flips when it passes in one run only.</p>"
        f"{note}{_rewards_table(env_ids, results_a, results_b, by_task)}<div class='filters'>{controls}</div>"
        f"{sections}"
    )
    return page(f"{names[0]} vs {names[1]}", body, nav)


def _rewards_table(
    env_ids: list[str],
    results_a: dict[str, Any],
    results_b: dict[str, Any],
    by_task: list[dict[tuple[str, Any], list[dict[str, Any]]]],
) -> str:
    """Per env: mean reward and pass@1 of both runs, and how many tasks flipped each way."""
    rows = []
    for env_id in env_ids:
        a, b = results_a["envs"][env_id], results_b["envs"][env_id]
        flips = [_flip(by_task, key) for key in _task_keys(by_task, env_id)]
        delta = _delta(a.get("mean_reward"), b.get("mean_reward"))
        cells = [
            number_text(a.get("mean_reward")),
            number_text(b.get("mean_reward")),
            delta,
            number_text(a.get("pass@1")),
            number_text(b.get("pass@1")),
            str(flips.count("up")),
            str(flips.count("down")),
        ]
        rows.append(
            f"<tr class='env-rewards'><td>{escaped(env_id)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    header = "".join(
        f"<th>{h}</th>"
        for h in (
            "env",
            "mean reward A",
            "mean reward B",
            "B - A",
            "pass@1 A",
            "pass@1 B",
            "flipped to pass",
            "flipped to fail",
        )
    )
    return f"<table><tr>{header}</tr>{''.join(rows)}</table>"


def _env_section(env_id: str, names: list[str], by_task: list[dict[tuple[str, Any], list[dict[str, Any]]]]) -> str:
    rows = []
    for key in _task_keys(by_task, env_id):
        sides = [runs.get(key, []) for runs in by_task]
        flip = _flip(by_task, key)
        first = next(r for side in sides for r in side)
        label = {"up": "flipped: fail → pass", "down": "flipped: pass → fail"}.get(flip or "", "")
        summary = (
            f"task {escaped(key[1])} <small>({escaped(first.get('task_id'))})</small> · "
            + " · ".join(f"{run}: {_side_summary(side)}" for run, side in zip("AB", sides))
            + (f"<span class='badge {flip}'>{label}</span>" if flip else "")
        )
        columns = "".join(
            f"<div><h4>{run}: {escaped(name)}</h4>"
            + ("".join(sample_row(r, env_id=env_id, filterable=False) for r in side) or "<p>no samples</p>")
            + "</div>"
            for run, name, side in zip("AB", names, sides)
        )
        attributes = data_attributes(env=env_id, task=key[1], task_id=first.get("task_id"), flipped=flip)
        rows.append(
            f"<section class='row card task-pair'{attributes}><details><summary>{summary}</summary>"
            f"<div class='side'>{columns}</div></details></section>"
        )
    return f"<h2>{escaped(env_id)}</h2>{''.join(rows)}"


def _side_summary(records: list[dict[str, Any]]) -> str:
    if not records:
        return "no samples"
    passed = sum(outcome(r) == "pass" for r in records)
    rewards = [r["reward"] for r in records if outcome(r) != "error" and isinstance(r.get("reward"), (int, float))]
    mean = f"{sum(rewards) / len(rewards):.3f}" if rewards else "n/a"
    return f"{passed}/{len(records)} correct, mean reward {mean}"


def _by_task(records: list[dict[str, Any]]) -> dict[tuple[str, Any], list[dict[str, Any]]]:
    grouped: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for record in sorted(records, key=lambda r: sort_number(r.get("sample"))):
        grouped.setdefault((record.get("env_id"), record.get("task_index")), []).append(record)
    return grouped


def _task_keys(by_task: list[dict[tuple[str, Any], list[dict[str, Any]]]], env_id: str) -> list[tuple[str, Any]]:
    keys = {key for runs in by_task for key in runs if key[0] == env_id}
    return sorted(keys, key=lambda key: (sort_number(key[1]), str(key[1])))


def _flip(by_task: list[dict[tuple[str, Any], list[dict[str, Any]]]], key: tuple[str, Any]) -> str | None:
    """``up`` (fails in A, passes in B), ``down`` (the other way) or None."""
    return FLIPS.get((task_passes(by_task[0].get(key, [])), task_passes(by_task[1].get(key, []))))


def _delta(a: Any, b: Any) -> str:
    return f"{b - a:+.3f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) else "n/a"


def write_comparison(run_a: str | Path, run_b: str | Path, out_dir: str | Path) -> Path:
    """Write ``comparison.html`` for two run folders (each with ``results.json`` and ``samples.jsonl``) into
    ``out_dir``; returns its path."""
    from envgym.agents.evaluation.report import read_run

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "comparison.html"
    folders = [Path(run) if Path(run).is_dir() else Path(run).parent for run in (run_a, run_b)]
    nav = [
        (f"report {name}", Path(os.path.relpath(folder / "report.html", out)).as_posix())
        for name, folder in zip("AB", folders)
        if (folder / "report.html").exists()
    ]
    runs = [read_run(run_a), read_run(run_b)]
    names = [str(results["model"]) for results, _ in runs]
    if names[0] == names[1]:  # one model run two ways (prompts, settings): the folders tell them apart
        names = [f"{name} ({folder.resolve().name})" for name, folder in zip(names, folders)]
    path.write_text(comparison_page(runs, nav, names), encoding="utf-8")
    return path

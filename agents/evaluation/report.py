"""Reports of an eval run: a Markdown table and a self-contained HTML page with plots, and run comparison.

The HTML embeds its plots (pass@k curves, reward histograms per env) as base64 PNGs, so the one file can
be mailed or attached to an issue. Next to it, one transcript page per env shows every sample's turns
(:mod:`envgym.agents.evaluation.report_transcripts`); two runs compare side by side in
:mod:`envgym.agents.evaluation.report_compare`.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from pathlib import Path
from typing import Any

from envgym.agents.evaluation.metrics import finish_reason
from envgym.agents.evaluation.report_transcripts import failed_call

COLUMNS = (
    "pass@1",
    "mean_reward",
    "avg_turns",
    "avg_tool_calls",
    "avg_tokens",
    "truncation_rate",
    "turn_truncation_rate",
    "n_tasks",
    "n_samples",
    "n_failed",
    "policy_failures",
)
"""``n_failed`` has its own column: failed samples are left out of every other number (see ``summarize``).
``policy_failures``: samples the reward scored at a component's minimum for something the model did."""


_KINDS = ("pass@", "pass^", "maj@")


def metric_columns(results: dict[str, Any]) -> list[str]:
    """pass@1, the other pass@k, pass^k and maj@k found in the results (sorted by kind, then k; pass^1 is pass@1 and
    is left out), then the fixed columns."""
    keys = {
        key
        for summary in results["envs"].values()
        for key in summary
        if re.fullmatch(r"(pass@|pass\^|maj@)\d+", key) and key != "pass^1"
    }
    ordered = sorted(keys, key=lambda key: (_KINDS.index(key.rstrip("0123456789")), int(key.lstrip("pasmj@^"))))
    return ordered + [c for c in COLUMNS if c not in ordered]


def table_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The metrics table: a mean with a standard error (results.json's ``stderr``) is shown as ``mean ± se``."""
    columns = metric_columns(results)
    rows = [
        [env_id] + [_with_error(summary.get(c), (summary.get("stderr") or {}).get(c)) for c in columns]
        for env_id, summary in results["envs"].items()
    ]
    return ["env"] + columns, rows


def group_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The per-group table (suite entries with a ``group``): each group's mean pass@1 over its envs, then overall;
    no rows when the suite names no groups."""
    table = results.get("groups") or {}
    rows = [
        [group, str(len(row["envs"])), _format(row["pass@1"])] for group, row in (table.get("groups") or {}).items()
    ]
    if rows:
        rows.append(["overall", str(sum(len(r["envs"]) for r in table["groups"].values())), _format(table["overall"])])
    return ["group", "envs", "pass@1"], rows


def _with_error(value: Any, error: Any) -> str:
    if isinstance(error, float) and isinstance(value, float):
        return f"{value:.3f} ± {error:.3f}"
    return _format(value)


def markdown(results: dict[str, Any], samples: list[dict[str, Any]] | None = None) -> str:
    """The report: the metrics table, then per env what explains its score (reward components, turns cut by
    the token budget, how episodes ended) and, given the ``samples.jsonl`` records, example transcripts."""
    header, rows = table_rows(results)
    lines = [f"# Evaluation of `{results['model']}`", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    group_header, groups = group_rows(results)
    if groups:
        lines += ["", "By group (unweighted means of the envs' pass@1, then of the groups):", ""]
        lines += ["| " + " | ".join(group_header) + " |", "|" + "---|" * len(group_header)]
        lines += ["| " + " | ".join(row) + " |" for row in groups]
    lines += ["", f"Elapsed: {results.get('elapsed_s', 0):.1f} s."]
    for env_id, summary in results["envs"].items():
        lines += ["", f"## {env_id}: why this score", ""] + _explanation(summary)
        for title, record in example_samples([r for r in samples or [] if r.get("env_id") == env_id]):
            lines += [
                "",
                f"### {title} sample: task {record.get('task_index')}, sample {record.get('sample')}, "
                f"reward {_format(record.get('reward'))}",
                "",
                "```text",
                transcript(record["episode"]),
                "```",
            ]
    return "\n".join(lines) + "\n"


def _explanation(summary: dict[str, Any]) -> list[str]:
    components = summary.get("reward_components") or {}
    parts = ", ".join(f"{name} {_format(value)}" for name, value in components.items()) or "none reported"
    reasons = ", ".join(f"{reason} {count}" for reason, count in (summary.get("finish_reasons") or {}).items())
    failures = ", ".join(f"{kind} {count}" for kind, count in (summary.get("failure_reasons") or {}).items())
    return [
        f"- mean reward {_format(summary.get('mean_reward'))}; mean reward components per episode: {parts}",
        f"- turns cut by the token budget (max_completion_length): {_format(summary.get('turn_truncation_rate'))}; "
        f"episodes truncated: {_format(summary.get('truncation_rate'))}",
        f"- how episodes ended: {reasons or 'no episodes'}",
    ] + ([f"- why calls failed: {failures}"] if failures else [])


def example_samples(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The best, worst and typical (reward nearest the median) healthy samples, each shown once."""
    healthy = sorted(
        (r for r in records if r.get("error") is None and r.get("episode")),
        key=lambda r: (r["reward"], r.get("task_index") or 0, r.get("sample") or 0),
    )
    if not healthy:
        return []
    chosen = [("Best", healthy[-1]), ("Worst", healthy[0]), ("Typical", healthy[(len(healthy) - 1) // 2])]
    shown, out = set(), []
    for title, record in chosen:
        if id(record) not in shown:
            shown.add(id(record))
            out.append((title, record))
    return out


def transcript(episode: dict[str, Any], limit: int = 800) -> str:
    """An episode as text: the prompt, then each turn's action, the env's answer and the turn's reward."""

    def clip(text: Any) -> str:
        text = text if isinstance(text, str) else str(text)
        return text if len(text) <= limit else text[:limit] + f" ... [{len(text) - limit} more characters]"

    lines = [f"[{m.get('role')}] {clip(m.get('content'))}" for m in episode.get("prompt") or []]
    for number, turn in enumerate(episode.get("turns") or [], 1):
        action = turn.get("action")
        lines.append(f"[assistant] {clip(action.get('content') if isinstance(action, dict) else action)}")
        lines += [f"[{m.get('role')}] {clip(m.get('content'))}" for m in turn.get("observation") or []]
        info = turn.get("info") or {}
        lines.append(
            f"    (turn {number}: reward {_format(turn.get('reward'))}, "
            f"components {turn.get('reward_components') or {}}, generation {info.get('finish_reason', '?')})"
        )
        failure = failed_call(info)
        if failure:
            lines.append(f"    ({clip(failure)})")
    lines.append(f"    (ended: {finish_reason(episode)})")
    return "\n".join(lines).replace("```", "'''")  # a fence inside would end the Markdown code block


def html_report(results: dict[str, Any], transcript_pages: dict[str, str] | None = None) -> str:
    """The report page; ``transcript_pages`` (env id -> file name) links each env to its transcripts."""
    header, rows = table_rows(results)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    group_header, groups = group_rows(results)
    group_table = (
        "<h2>By group</h2><table><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in group_header)
        + "</tr>"
        + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in groups)
        + "</table>"
        if groups
        else ""
    )
    images = "".join(
        f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,{data}"/>'
        f"<figcaption>{html.escape(title)}</figcaption></figure>"
        for title, data in _plots(results)
    )
    pages = transcript_pages or {}
    why = "".join(
        f"<h2>{html.escape(env_id)}: why this score</h2><ul>"
        + "".join(f"<li>{html.escape(line[2:])}</li>" for line in _explanation(summary))
        + (f'<li><a href="{html.escape(pages[env_id])}">every transcript</a></li>' if env_id in pages else "")
        + "</ul>"
        for env_id, summary in results["envs"].items()
    )
    nav = "".join(
        f'<a href="{html.escape(page)}">{html.escape(env_id)} transcripts</a> ' for env_id, page in pages.items()
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>envgym eval</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:4px 8px;text-align:right}td:first-child{text-align:left}img{max-width:100%}</style></head><body>"
        f"{f'<nav>{nav}</nav>' if nav else ''}"
        f"<h1>Evaluation of {html.escape(str(results['model']))}</h1><table><tr>{head}</tr>{body}</table>{group_table}"
        f"<p>Elapsed: {results.get('elapsed_s', 0):.1f} s.</p>{why}{images}</body></html>"
    )


def write_reports(results: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``report.md`` (with example transcripts from ``samples.jsonl`` when it is there), ``report.html``
    and, for each env with samples on file, its transcript page, next to ``results.json``; returns the paths
    of the two reports."""
    from envgym.agents.evaluation.report_transcripts import page_name, transcript_page

    out = Path(out_dir)
    md, page = out / "report.md", out / "report.html"
    samples = _read_samples(out / "samples.jsonl")
    md.write_text(markdown(results, samples), encoding="utf-8")
    pages = {}
    for env_id in results["envs"]:
        records = [r for r in samples if r.get("env_id") == env_id]
        if records:
            pages[env_id] = page_name(env_id)
            nav = [("report", "report.html")] + [(e, page_name(e)) for e in results["envs"] if e != env_id]
            (out / pages[env_id]).write_text(
                transcript_page(env_id, records, str(results["model"]), nav), encoding="utf-8"
            )
    page.write_text(html_report(results, pages), encoding="utf-8")
    return md, page


def read_run(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run folder's ``results.json`` and ``samples.jsonl`` records (none when the file is missing).
    ``path`` may also name the ``results.json`` itself."""
    path = Path(path)
    results_path = path / "results.json" if path.is_dir() else path
    if not results_path.exists():
        raise FileNotFoundError(f"{results_path} does not exist; give a run folder written by `envgym eval --out`")
    return json.loads(results_path.read_text()), _read_samples(results_path.parent / "samples.jsonl")


def _read_samples(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:  # a torn last line of an interrupted run
            continue
    return records


def compare(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Rows of env x metric with run A, run B and B - A, for the envs and metrics both runs have."""
    rows = []
    for env_id in [e for e in a["envs"] if e in b["envs"]]:
        for metric in metric_columns({"envs": {env_id: a["envs"][env_id]}}):
            x, y = a["envs"][env_id].get(metric), b["envs"][env_id].get(metric)
            if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                rows.append([env_id, metric, _format(x), _format(y), f"{y - x:+.3f}"])
    return ["env", "metric", str(a["model"]), str(b["model"]), "B - A"], rows


def _plots(results: dict[str, Any]) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = [("pass@k per env", _png(pass_at_k_figure(results)))]
    envs = [(env_id, s.get("rewards") or []) for env_id, s in results["envs"].items()]
    figure, axes = plt.subplots(1, max(1, len(envs)), figsize=(3.2 * max(1, len(envs)), 3), squeeze=False)
    for axis, (env_id, rewards) in zip(axes[0], envs):
        axis.hist(rewards, bins=10, color="#4477aa")
        axis.set_title(env_id, fontsize=8)
        axis.set_xlabel("episode reward")
    plots.append(("reward histogram per env", _png(figure)))
    return plots


def pass_at_k_figure(results: dict[str, Any]) -> Any:
    """pass@k against k per env; k is a count of samples, so the axis ticks only integers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(6, 4))
    for env_id, summary in results["envs"].items():
        ks = sorted(int(key[5:]) for key in summary if key.startswith("pass@"))
        if ks:
            axis.plot(ks, [summary[f"pass@{k}"] for k in ks], marker="o", label=env_id)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set(xlabel="k", ylabel="pass@k", ylim=(-0.02, 1.02), title="pass@k")
    axis.legend(fontsize=7)
    return figure


def _png(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def _format(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)

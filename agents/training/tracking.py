"""Experiment tracking: the numbers of ``metrics.jsonl`` (and of ``envgym eval``'s results), the run's config and
sample episodes sent to trackio, Weights & Biases and TensorBoard, each through its own library.

``report_to`` (a recipe key, ``--report-to`` on ``envgym train`` and ``envgym eval``) names the trackers: a list
or a comma string of ``trackio``, ``wandb``, ``tensorboard``; ``none`` or empty for none. Every numeric metric
goes under the name and step it has in ``metrics.jsonl``; text entries (warnings) stay in the file only, since
a scalar chart cannot hold them. Episodes become tables (``wandb.Table``, ``trackio.Table``, a Markdown table
in a TensorBoard text summary).

Nothing here needs the network: W&B follows ``WANDB_MODE`` (``offline`` writes the run under ``WANDB_DIR``, else
under the output folder, for a later ``wandb sync``); trackio writes its local SQLite store (``TRACKIO_DIR``,
default ``~/.cache/huggingface/trackio``); TensorBoard writes event files to ``OUT/tensorboard``. The project is
``envgym`` unless ``WANDB_PROJECT`` / ``TRACKIO_PROJECT`` say otherwise. Light at import: each library loads
when its tracker opens.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TRACKERS = ("trackio", "wandb", "tensorboard")
"""The names ``report_to`` accepts, each with the import name of its library below."""
_LIBRARY = {"trackio": "trackio", "wandb": "wandb", "tensorboard": "tensorboard"}
SAMPLE_COLUMNS = [
    "step",
    "env_id",
    "task_id",
    "sample",
    "reward",
    "correct",
    "turns",
    "tool_calls",
    "error",
    "transcript",
]
"""Columns of an episode table: the ``samples.jsonl`` numbers, then the conversation as text."""
MAX_EVAL_SAMPLES = 200
"""Episodes per env in ``envgym eval``'s table: enough to read, few enough for TensorBoard's text view."""


def parse_report_to(value: str | Sequence[str] | None) -> list[str]:
    """The tracker names in ``value`` (a list or a comma string), in order, once each; ``none``/empty -> [].
    Raises ValueError naming the accepted trackers for anything else."""
    if value is None:
        return []
    names = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(name, str) for name in names):
        raise ValueError(f"report_to must be tracker names ({', '.join(TRACKERS)}), got {value!r}")
    cleaned = [name.strip().lower() for name in names if name.strip()]
    if cleaned == ["none"]:
        return []
    unknown = [name for name in cleaned if name not in TRACKERS]
    if unknown:
        raise ValueError(
            f"report_to: unknown tracker {', '.join(map(repr, unknown))}; accepted: "
            f"{', '.join(TRACKERS)} (a list or comma-separated), or none"
        )
    return list(dict.fromkeys(cleaned))


def check_installed(names: Sequence[str]) -> None:
    """Raise ImportError naming the extra to install when a tracker's library is missing (cheap: imports nothing)."""
    missing = [_LIBRARY[name] for name in names if importlib.util.find_spec(_LIBRARY[name]) is None]
    if missing:
        raise ImportError(
            f"report_to needs the {' and '.join(missing)} package{'s' * (len(missing) > 1)}: "
            "pip install 'envgym[tracking]'"
        )


class Tracker:
    """One run in one tracking library. Subclasses open the run in ``__init__`` with the run's config."""

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        """Record scalar ``metrics`` at ``step``."""
        raise NotImplementedError

    def log_table(self, name: str, rows: list[dict[str, Any]], step: int) -> None:
        """Record ``rows`` (dicts with the keys of :data:`SAMPLE_COLUMNS`) as the table ``name`` at ``step``."""
        raise NotImplementedError

    def finish(self) -> None:
        """Flush and close the run."""
        raise NotImplementedError


class TrackioTracker(Tracker):
    """trackio's local run (its SQLite store under ``TRACKIO_DIR``); no system-metrics thread."""

    def __init__(self, *, project: str, name: str, config: dict[str, Any], out_dir: Path):
        import trackio

        self._trackio = trackio
        self.run = trackio.init(
            project=os.environ.get("TRACKIO_PROJECT", project),
            name=name,
            config=config,
            auto_log_cpu=False,
            auto_log_gpu=False,
        )

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        self.run.log(metrics, step=step)

    def log_table(self, name: str, rows: list[dict[str, Any]], step: int) -> None:
        table = self._trackio.Table(columns=SAMPLE_COLUMNS, data=[[row[c] for c in SAMPLE_COLUMNS] for row in rows])
        self.run.log({name: table}, step=step)

    def finish(self) -> None:
        if self._trackio.context_vars.current_run.get() is self.run:
            self._trackio.finish()  # also forgets it as the current run, which trackio would finish again at exit
        else:
            self.run.finish()


class WandbTracker(Tracker):
    """A W&B run; ``WANDB_MODE=offline`` keeps it on disk. Its own run object, so runs in one process never mix."""

    def __init__(self, *, project: str, name: str, config: dict[str, Any], out_dir: Path):
        import wandb

        self._wandb = wandb
        directory = Path(os.environ.get("WANDB_DIR") or out_dir)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            # The environment is read here, per run: wandb's own copy is taken once per process.
            self.run = wandb.init(
                project=os.environ.get("WANDB_PROJECT", project),
                name=name,
                config=config,
                dir=str(directory),
                mode=os.environ.get("WANDB_MODE") or None,
                reinit="create_new",
            )
        except wandb.errors.UsageError as error:  # e.g. no API key: say how to stay on disk
            raise RuntimeError(
                f"report_to wandb: {error} (or set WANDB_MODE=offline to keep the run on disk "
                "and `wandb sync` it later)"
            ) from error

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        self.run.log(metrics, step=step)

    def log_table(self, name: str, rows: list[dict[str, Any]], step: int) -> None:
        table = self._wandb.Table(columns=SAMPLE_COLUMNS, data=[[row[c] for c in SAMPLE_COLUMNS] for row in rows])
        self.run.log({name: table}, step=step)

    def finish(self) -> None:
        self.run.finish()


class TensorBoardTracker(Tracker):
    """Event files in ``OUT/tensorboard``: scalars, the config and episode tables as Markdown text summaries."""

    def __init__(self, *, project: str, name: str, config: dict[str, Any], out_dir: Path):
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(out_dir / "tensorboard"))
        self.writer.add_text("config", "```json\n" + json.dumps(config, indent=2) + "\n```", 0)

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        for key, value in metrics.items():
            self.writer.add_scalar(key, value, step)
        self.writer.flush()  # a run that dies still leaves its curve

    def log_table(self, name: str, rows: list[dict[str, Any]], step: int) -> None:
        self.writer.add_text(name, markdown_table(rows), step)
        self.writer.flush()

    def finish(self) -> None:
        self.writer.close()


_BACKENDS: dict[str, type[Tracker]] = {
    "trackio": TrackioTracker,
    "wandb": WandbTracker,
    "tensorboard": TensorBoardTracker,
}


class Trackers:
    """The trackers of one run, fed together: numbers filtered once, rows built once."""

    def __init__(self, trackers: list[Tracker]):
        self.trackers = trackers

    def log_metrics(self, metrics: dict[str, Any], step: int) -> None:
        """Send the numeric entries of ``metrics`` (bools as 0/1; ``step`` itself is the axis)."""
        numbers = scalar_metrics(metrics)
        for tracker in self.trackers:
            tracker.log_metrics(numbers, step)

    def log_samples(self, name: str, records: list[dict[str, Any]], step: int) -> None:
        """Send ``samples.jsonl`` records (:func:`envgym.agents.evaluation.evaluate.sample_record`) as the table
        ``name``."""
        if not records:
            return
        rows = [sample_row(record, step) for record in records]
        for tracker in self.trackers:
            tracker.log_table(name, rows, step)

    def finish(self) -> None:
        for tracker in self.trackers:
            tracker.finish()


def open_trackers(
    report_to: str | Sequence[str] | None,
    *,
    out_dir: str | Path,
    name: str,
    config: dict[str, Any],
    project: str = "envgym",
) -> Trackers:
    """Open one run per tracker named in ``report_to``, each given ``config`` (made JSON-safe)."""
    names = parse_report_to(report_to)
    check_installed(names)
    safe_config = json.loads(json.dumps(config, default=str))
    return Trackers(
        [_BACKENDS[tracker](project=project, name=name, config=safe_config, out_dir=Path(out_dir)) for tracker in names]
    )


def scalar_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    """The numeric entries of a metrics line without ``step`` (NaN and infinities kept: they are findings)."""
    numbers: dict[str, float] = {}
    for key, value in metrics.items():
        if key != "step" and isinstance(value, (int, float)):
            numbers[key] = int(value) if isinstance(value, bool) else value
    return numbers


def step_samples(
    groups: list[list[Any]], step: int, count: int, *, keep_tokens: bool = False, tokenizer: str | None = None
) -> list[dict[str, Any]]:
    """``count`` episodes of a training step's rollouts (groups of trajectories), drawn at random seeded by the
    step, as ``samples.jsonl`` records in rollout order; ``keep_tokens`` keeps their token ids (the tokenizer
    named ``tokenizer``) for ``envgym export --tokens``."""
    from envgym.agents.evaluation.evaluate import sample_record

    trajectories = [trajectory for group in groups for trajectory in group]
    chosen = sorted(random.Random(step).sample(range(len(trajectories)), min(count, len(trajectories))))
    return [
        sample_record(trajectories[index].episode, trajectories[index] if keep_tokens else None, tokenizer)
        for index in chosen
    ]


def sample_row(record: dict[str, Any], step: int) -> dict[str, Any]:
    """A table row (:data:`SAMPLE_COLUMNS`) from a ``samples.jsonl`` record; the conversation as plain text."""
    reward = record.get("reward")
    return {
        "step": step,
        "env_id": record.get("env_id"),
        "task_id": str(record.get("task_id")),
        "sample": record.get("sample"),
        "reward": reward if isinstance(reward, (int, float)) and math.isfinite(reward) else None,
        "correct": bool(record.get("correct")),
        "turns": record.get("turns"),
        "tool_calls": record.get("tool_calls"),
        "error": record.get("error") or "",
        "transcript": transcript(record.get("episode") or {}),
    }


def transcript(episode: dict[str, Any]) -> str:
    """An episode (``Episode.to_dict()``) as ``role: text`` blocks, tool calls written as JSON."""
    import envgym

    blocks = []
    for message in envgym.Episode.from_dict(episode).messages():
        text = message.get("content") or ""
        if message.get("tool_calls"):
            text = f"{text}\ntool_calls: {json.dumps(message['tool_calls'], ensure_ascii=False)}".strip()
        blocks.append(f"{message.get('role', '?')}: {text}")
    return "\n\n".join(blocks)


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """Rows as a Markdown table (what TensorBoard's text plugin renders); cell pipes and newlines escaped."""

    def cell(value: Any) -> str:
        return str("" if value is None else value).replace("|", "\\|").replace("\n", "<br>")

    lines = ["| " + " | ".join(SAMPLE_COLUMNS) + " |", "|" + "---|" * len(SAMPLE_COLUMNS)]
    lines += ["| " + " | ".join(cell(row[c]) for c in SAMPLE_COLUMNS) + " |" for row in rows]
    return "\n".join(lines)


def log_eval_results(
    report_to: str | Sequence[str] | None, results: dict[str, Any], samples: list[dict[str, Any]], out_dir: str | Path
) -> None:
    """Send an ``envgym eval`` run to the trackers: each env's numbers as ``ENV_ID/metric`` at step 0, the
    model and env settings as the config, and up to :data:`MAX_EVAL_SAMPLES` episodes per env as the table
    ``samples/ENV_ID``."""
    if not parse_report_to(report_to):
        return
    envs = results.get("envs", {})
    config = {"model": results.get("model"), "envs": {env_id: entry.get("config") for env_id, entry in envs.items()}}
    trackers = open_trackers(report_to, out_dir=out_dir, name=Path(out_dir).name, config=config)
    try:
        trackers.log_metrics(
            {f"{env_id}/{key}": value for env_id, entry in envs.items() for key, value in entry.items()}, step=0
        )
        for env_id in envs:
            records = [record for record in samples if record.get("env_id") == env_id][:MAX_EVAL_SAMPLES]
            trackers.log_samples(f"samples/{env_id}", records, step=0)
    finally:
        trackers.finish()

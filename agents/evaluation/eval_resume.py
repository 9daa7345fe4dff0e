"""Resuming an eval only into the setup that made its samples.

Every line of ``samples.jsonl`` carries ``setup``: everything that shapes a sample, namely the model name, the
policy's own settings (engine, endpoint, dtype...: :func:`~envgym.agents.engines.policy.policy_settings`), the run's
seed, and the env's evaluation settings (sampling, limits, tools, env kwargs, n) except the two that only say
how many tasks to play and how to read the metrics (``n_tasks``, ``k``: more tasks extend a run, other ks
re-read it). A resumed run reuses samples only when their setup equals its own and refuses any difference with
the list of what differs, so a changed ``--model`` or temperature never reports old samples under new settings.

Not part of the setup: the device, ``batch_size`` and the server's URL. They change which random draws a
sample gets, not the distribution it is drawn from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgym.agents.engines.policy import policy_settings

if TYPE_CHECKING:
    from envgym.agents.evaluation.suite import EnvEval

# EnvEval fields that do not shape a sample.
NOT_SHAPING = ("n_tasks", "k", "group")


class ResumeMismatch(ValueError):
    """The output folder holds samples made with another setup (the message says what differs)."""


def sample_setup(policy: Any, config: EnvEval, *, model_name: str | None, seed: int) -> dict[str, Any]:
    """The setup every sample of ``config`` is recorded with (JSON-normalised, so it compares equal to a
    setup read back from ``samples.jsonl``)."""
    env = {key: value for key, value in config.model_dump().items() if key not in NOT_SHAPING}
    setup = {"model": model_name or policy.name, "policy": policy_settings(policy), "seed": seed, "env": env}
    return json.loads(json.dumps(setup))


def check_resumable(path: Path, setups: dict[str, dict[str, Any]]) -> None:
    """Raise :class:`ResumeMismatch` when a sample in ``path`` for an env of ``setups`` (env id -> setup) was
    made with another setup. Lines of other envs, and a torn last line, are not looked at."""
    if not path.exists():
        return
    differences: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        env_id = record.get("env_id")
        if env_id not in setups or env_id in differences:
            continue
        old = record.get("setup")
        if old is None:
            differences[env_id] = ["the samples on file do not record their setup (written by an older envgym)"]
        elif old != setups[env_id]:
            differences[env_id] = _differences(old, setups[env_id])
    if differences:
        listed = "; ".join(f"{env_id}: {', '.join(items)}" for env_id, items in differences.items())
        raise ResumeMismatch(
            f"{path} holds samples made with another setup ({listed}). Samples are reused only by the setup that "
            "made them: write to another --out (out_dir), or pass --no-resume (resume=False) to discard them."
        )


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """``"key: old -> new"`` for every leaf that differs (nested keys dotted: ``policy.dtype``)."""
    items = []
    for key in sorted(set(old) | set(new), key=str):
        before, after = old.get(key, "(unset)"), new.get(key, "(unset)")
        if isinstance(before, dict) and isinstance(after, dict):
            items += _differences(before, after, f"{prefix}{key}.")
        elif before != after:
            items.append(f"{prefix}{key}: {before!r} -> {after!r}")
    return items

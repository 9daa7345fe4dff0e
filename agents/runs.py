"""What a run folder holds: the files ``envgym eval`` and ``envgym train --save-rollouts`` write, and reading their
episodes back (``envgym export``, Inspect logs). Light: JSON and :class:`~envgym.episode.Episode` only."""

from __future__ import annotations

import json
from pathlib import Path

from envgym.episode import Episode

SAMPLES_FILE = "samples.jsonl"
"""One line per eval sample: its numbers, then the whole episode (:mod:`envgym.agents.evaluation.evaluate`)."""
RESULTS_FILE = "results.json"
"""An eval run's metrics per env."""
ROLLOUTS_FILE = "rollouts.jsonl"
"""Episodes a training run saved (``--save-rollouts``), in the samples' format, with the step."""
RUN_FILES = (SAMPLES_FILE, ROLLOUTS_FILE)
TOKEN_KEYS = ("prompt_ids", "completion_ids", "loss_mask")
"""The token ids a sample keeps in its episode's metadata (with ``turn_ends`` and ``tokenizer``) for
``envgym export --tokens``."""


def read_episodes(run: str | Path) -> list[tuple[str, Episode]]:
    """Every episode of a run, each with where it came from (``file:line``), in file order."""
    run = Path(run)
    if run.is_dir():
        files = [run / name for name in RUN_FILES if (run / name).is_file()]
        if not files:
            raise ValueError(
                f"{run} holds none of {', '.join(RUN_FILES)}: give an envgym eval or train output "
                "folder, or a JSONL file of episodes"
            )
    elif run.is_file():
        files = [run]
    else:
        raise ValueError(f"{run} does not exist")
    episodes = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                episodes.append((f"{path}:{number}", _episode(line, f"{path}:{number}")))
    if not episodes:
        raise ValueError(f"{run} holds no episodes")
    return episodes


def _episode(line: str, where: str) -> Episode:
    try:
        record = json.loads(line)
        # a samples.jsonl/rollouts.jsonl record wraps the episode; write_jsonl writes it bare
        return Episode.from_dict(record["episode"] if "episode" in record else record)
    except (json.JSONDecodeError, TypeError, ValueError, KeyError) as error:
        raise ValueError(f"{where}: not an episode record ({type(error).__name__}: {error})"[:300]) from None

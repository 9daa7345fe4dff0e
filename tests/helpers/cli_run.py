"""Run ``envgym`` in a subprocess and report what it printed and which modules it imported (``-X importtime``),
so a test proves that a bad input was refused before any model library (or model) was loaded."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path


@dataclasses.dataclass
class CliRun:
    returncode: int
    lines: list[str]
    """Non-empty lines of stdout and stderr, the import-time report left out."""
    imported: set[str]
    """Every module the process imported."""


def run_envgym(*args: str, cwd: str | Path | None = None, timeout: float = 120) -> CliRun:
    """``python -X importtime -m envgym ARGS`` (offline, never waiting on the Hub)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "envgym", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )
    report = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[-1].strip() for line in report}
    lines = [
        line
        for line in (result.stdout + "\n" + result.stderr).splitlines()
        if line.strip() and not line.startswith("import time:")
    ]
    return CliRun(result.returncode, lines, imported)

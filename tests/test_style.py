"""The tree is formatted and linted as pyproject.toml's [tool.ruff] says: `ruff format --check` and `ruff check`
run here, so `make test` fails on a change either would flag (the fix: `ruff format` and `ruff check --fix`)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["format", "lint"])
def test_ruff_finds_nothing_to_change(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]

"""The layers of docs/design.md hold: import-linter checks the contracts in pyproject.toml over every import
statement of the tree (lazy ones inside functions too), and a deliberate upward import breaks them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = ("envgym", "envs", "sandbox", "agents")


def test_every_layer_contract_is_kept(capsys):
    exit_code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert exit_code == 0, capsys.readouterr().out


def test_a_lazy_upward_import_breaks_the_layers(tmp_path):
    """A copy of the tree whose core imports the CLI inside a function: the contract names that import."""
    for folder in SOURCE_FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    core = tmp_path / "envgym" / "core.py"
    core.write_text(core.read_text() + "\n\ndef _upward():\n    from envgym.cli.app import app\n\n    return app\n")
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]
        + ["--config", "pyproject.toml", "--no-cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "envgym.core -> envgym.cli.app" in result.stdout

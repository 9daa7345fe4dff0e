"""envgym init and envgym check from the command line: scaffold, install into a fresh venv, list, check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.cli_run import run_envgym


def test_init_then_install_in_a_fresh_venv_lists_the_env_and_its_checks_pass(tmp_path: Path):
    package = tmp_path / "my-envs"
    assert run_envgym("init", "my-envs", "--dir", str(package)).returncode == 0
    venv = tmp_path / "venv"
    # --without-pip: the venv's python runs the system's pip and setuptools (a venv's own bundled setuptools may be
    # too old to build an editable wheel), and takes envgym from the system site-packages; no network is needed.
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(package)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    listed = subprocess.run(
        [python, "-m", "envgym", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=tmp_path,
    )
    assert "my_envs/Reverse-v0" in listed.stdout, listed.stderr[-2000:]
    checked = subprocess.run(
        [python, "-m", "envgym", "check", "my_envs/Reverse-v0"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        cwd=tmp_path,
    )
    assert checked.returncode == 0 and "1 of 1 envs pass check_env and the audit" in checked.stdout, checked.stdout
    tested = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        cwd=package,
    )
    assert tested.returncode == 0 and "4 passed" in tested.stdout, tested.stdout[-2000:]


def test_check_a_package_folder_works_without_installing_it(tmp_path: Path):
    run_envgym("init", "folder-envs", "--dir", str(tmp_path / "pkg"))
    result = run_envgym("check", str(tmp_path / "pkg"), timeout=300)
    assert result.returncode == 0, result.lines
    assert result.lines[-2].startswith("ok   folder_envs/Reverse-v0: check_env passed; audit:")


def test_check_fails_on_an_env_that_pays_for_a_hedge(tmp_path: Path):
    run_envgym("init", "hedged-envs", "--dir", str(tmp_path / "pkg"))
    env_file = tmp_path / "pkg" / "hedged_envs" / "reverse.py"
    # The classic bug: any of several answers counts, so listing candidates earns reward.
    source = env_file.read_text().replace(
        "correct = answer == self.task.answer", "correct = self.task.answer in action_text(action)"
    )
    env_file.write_text(source)
    result = run_envgym("check", str(tmp_path / "pkg"), timeout=300)
    assert result.returncode == 1
    assert any(line.startswith("FAIL hedged_envs/Reverse-v0: audit: earns_reward") for line in result.lines), (
        result.lines
    )


def test_check_refuses_a_folder_without_entry_points_in_one_line(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    result = run_envgym("check", str(tmp_path))
    assert result.returncode == 2 and len(result.lines) == 1 and "declares no [project.entry-points" in result.lines[0]


def test_check_refuses_an_unknown_id_with_a_suggestion():
    result = run_envgym("check", "math/Arithmetc-v0")
    assert result.returncode == 2 and "did you mean" in " ".join(result.lines).lower()


def test_init_refuses_a_bad_name_in_one_line(tmp_path: Path):
    result = run_envgym("init", "my envs", "--dir", str(tmp_path / "x"))
    assert result.returncode == 2 and len(result.lines) == 1 and "bad package name 'my envs'" in result.lines[0]


def test_check_builds_the_env_with_env_kwargs():
    result = run_envgym("check", "math/Arithmetic-v0", "--env-kwargs", '{"no_such_argument": 1}')
    assert result.returncode == 1
    assert any(line.startswith("FAIL math/Arithmetic-v0: check_env: TypeError") for line in result.lines), result.lines


def test_check_refuses_env_kwargs_that_are_not_a_json_object_in_one_line():
    result = run_envgym("check", "math/Arithmetic-v0", "--env-kwargs", "[1]")
    assert result.returncode == 2 and len(result.lines) == 1 and "--env-kwargs must be a JSON object" in result.lines[0]

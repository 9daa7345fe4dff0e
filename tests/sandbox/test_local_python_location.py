"""The local sandbox works wherever the Python interpreter lives: a venv under /tmp, /home or /opt, a venv
reached through a symlink, a venv whose base interpreter lives elsewhere."""

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from envgym.sandbox import local

COVERING = {"--ro-bind": 2, "--bind": 2, "--dev-bind": 2, "--symlink": 2, "--tmpfs": 1, "--dev": 1, "--proc": 1}


def _mounts(command: list[str]) -> list[str]:
    """Destinations of bwrap's mount operations, in order (``--dir`` only creates a directory: not a mount)."""
    destinations, index = [], 0
    while index < len(command):
        arity = COVERING.get(command[index])
        if arity:
            destinations.append(command[index + arity])
            index += arity + 1
        else:
            index += 1
    return destinations


def _assert_nothing_covers_the_python_paths(command: list[str], paths: list[str]) -> None:
    mounts = _mounts(command)
    for path in paths:
        bound_at = mounts.index(path)
        covering = [
            later for later in mounts[bound_at + 1 :] if path == later or path.startswith(later.rstrip("/") + "/")
        ]
        assert covering == [], f"{covering} mounted after {path} hides it"


@pytest.mark.parametrize(
    "prefix, base",
    [
        ("/tmp/ci/venv", "/root/.pyenv/versions/3.11.7"),
        ("/home/someone/venv", "/usr"),
        ("/opt/venv", "/opt/python/3.11"),
    ],
)
@pytest.mark.parametrize("is_root", [True, False])
def test_no_mount_after_the_python_installation_covers_it(monkeypatch, prefix, base, is_root):
    for name, value in (("prefix", prefix), ("exec_prefix", prefix), ("base_prefix", base), ("base_exec_prefix", base)):
        monkeypatch.setattr(sys, name, value)
    monkeypatch.setattr(sys, "executable", f"{prefix}/bin/python")
    paths = local.python_paths()
    assert prefix in paths and (base in paths or base == "/usr")
    _assert_nothing_covers_the_python_paths(local._bwrap_command(is_root), paths)


def test_a_venv_reached_through_a_symlink_is_mounted_under_both_names(monkeypatch, tmp_path):
    real = tmp_path / "real-venv"
    (real / "bin").mkdir(parents=True)
    link = tmp_path / "venv-link"
    link.symlink_to(real)
    monkeypatch.setattr(sys, "prefix", str(link))
    monkeypatch.setattr(sys, "exec_prefix", str(link))
    paths = local.python_paths()
    assert str(link) in paths and str(real.resolve()) in paths
    _assert_nothing_covers_the_python_paths(local._bwrap_command(False), paths)


@pytest.mark.parametrize("prefix", ["/", "/tmp"])
def test_a_python_prefix_that_would_cover_the_sandbox_is_refused(monkeypatch, prefix):
    monkeypatch.setattr(sys, "prefix", prefix)
    with pytest.raises(RuntimeError, match="would cover the sandbox's own"):
        local.python_paths()


SCRIPT = """
import sys
from envgym.sandbox import run
result = run("import venv_only_marker, sys; print(venv_only_marker.VALUE, sys.version_info[:2])")
print(sys.prefix)
print(result.status, result.stdout.strip(), result.stderr[-500:])
"""


@pytest.fixture(scope="module")
def venv_under_tmp():
    """A real venv under /tmp that sees envgym (through the base interpreter's site-packages)."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="envgym-venv-") as folder:
        venv = Path(folder) / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
            check=True,
            timeout=120,
        )
        purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
        Path(purelib, "venv_only_marker.py").write_text("VALUE = 'from the venv'\n")
        yield venv


def _run_through(python: Path) -> list[str]:
    # Jobs see the standard library and declared packages only (test_package_view.py): declare the venv's.
    completed = subprocess.run(
        [str(python), "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ENVGYM_SANDBOX_PACKAGES": "venv_only_marker"},
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.splitlines()


def test_jobs_run_from_a_venv_under_tmp_and_see_its_declared_packages(venv_under_tmp):
    prefix, outcome = _run_through(venv_under_tmp / "bin" / "python")
    assert prefix == str(venv_under_tmp)
    assert outcome.startswith("ok from the venv (3, "), outcome


def test_jobs_run_from_a_venv_reached_through_a_symlink(venv_under_tmp):
    link = venv_under_tmp.parent / "venv-link"
    link.symlink_to(venv_under_tmp)
    try:
        prefix, outcome = _run_through(link / "bin" / "python")
    finally:
        link.unlink()
    assert prefix == str(link)
    assert outcome.startswith("ok from the venv (3, "), outcome

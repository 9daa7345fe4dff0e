"""Hostile programs: each is contained, and the host is unchanged afterwards.

The ``backend`` fixture (conftest.py) runs every test on each backend and then asserts that no process
of the job is left running. These tests are what docs/sandbox.md cites.
"""

import os
import socket
import threading
import time

import pytest

from envgym.sandbox import run


def test_infinite_loop_times_out_on_its_cpu_budget(backend):
    result = run("while True:\n    pass", timeout=1, backend=backend)
    assert result.status == "timeout" and result.wall_s < 3.5


def test_sleeping_forever_is_stopped_by_the_wall_clock_backstop(backend):
    result = run("import time\ntime.sleep(10**6)", timeout=0.5, backend=backend)
    assert result.status == "timeout" and result.wall_s < 3


FORK_BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"


def test_fork_bomb_is_contained(backend):
    assert run(FORK_BOMB, timeout=1, backend=backend).status in ("timeout", "error")
    assert run("print('still here')", backend=backend).stdout == "still here\n"


def test_one_jobs_fork_bomb_does_not_stop_another_job_from_forking(backend):
    """The process limit is per job, not shared by the pool (without root: per slot user namespace)."""
    bomb = threading.Thread(target=run, args=(FORK_BOMB,), kwargs={"timeout": 2, "backend": backend})
    bomb.start()
    time.sleep(0.5)
    code = "import subprocess\nfor _ in range(20):\n    subprocess.run(['true'], check=True)\nprint('forked fine')"
    result = run(code, timeout=5, backend=backend)
    bomb.join()
    assert result.stdout == "forked fine\n", result.stderr


def test_thousands_of_threads_are_refused(backend):
    code = (
        "import threading, time\nfor _ in range(5000):\n"
        "    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()\nprint('all started')"
    )
    result = run(code, timeout=2, backend=backend)
    assert result.status in ("error", "memory", "timeout") and "all started" not in result.stdout


def test_allocating_10_gb_is_a_memory_verdict(backend):
    result = run("x = bytearray(10 * 1024**3)", memory_mb=256, backend=backend)
    assert result.status == "memory"


def test_a_5_gb_file_is_stopped_by_the_file_size_limit(backend):
    code = "with open('big', 'wb') as f:\n    for _ in range(5 * 1024):\n        f.write(b'x' * 2**20)"
    result = run(code, timeout=10, backend=backend)
    assert result.status == "error" and "File too large" in result.stderr


def test_100_mb_of_stdout_is_cut_at_the_output_limit(backend):
    result = run("import sys\nsys.stdout.write('x' * 100_000_000)", timeout=5, backend=backend)
    assert result.status == "output_limit" and len(result.stdout) <= 1 << 20


def test_unbounded_recursion_is_an_error(backend):
    result = run("def f(n):\n    return f(n + 1)\nf(0)", backend=backend)
    assert result.status == "error" and "RecursionError" in result.stderr


def test_recursion_without_a_limit_ends_only_the_job(backend):
    code = "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1)\nf(0)"
    result = run(code, timeout=2, memory_mb=128, backend=backend)
    assert result.status in ("error", "memory", "timeout") and result.exit_code != 0
    assert run("print('next')", backend=backend).stdout == "next\n"


def test_ctypes_segfault_is_an_error_with_the_signal(backend):
    result = run("import ctypes\nctypes.string_at(0)", backend=backend)
    assert result.status == "error" and result.exit_code == -11


def test_killing_the_parent_and_everything_fails_and_the_sandbox_keeps_working(backend):
    code = (
        "import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
        "    except OSError as e:\n        print(pid, e.errno)"
    )
    run(code, backend=backend)
    assert run("print('alive')", backend=backend).stdout == "alive\n"


def test_a_setsid_background_child_does_not_outlive_the_job(backend):
    # The parent waits for the middle process: the grandchild has left the process group when the job ends.
    code = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(600)\n"
        "    os._exit(0)\nos.wait()\nprint('parent done')"
    )
    assert run(code, backend=backend).stdout == "parent done\n"
    # the fixture then asserts that no process of the job survives


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted = []

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    yield server.getsockname()[1], accepted, accept
    server.close()


def test_tcp_to_the_hosts_loopback_is_refused(backend, listener):
    port, accepted, accept = listener
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\nprint('connected')"
    result = run(code, backend=backend)
    accept()
    assert result.status == "error" and "connected" not in result.stdout and accepted == []


def test_dns_lookups_fail(backend):
    result = run("import socket\nprint(socket.getaddrinfo('example.com', 80))", backend=backend)
    assert result.status == "error" and result.stdout == ""


def test_etc_shadow_is_not_readable(backend):
    result = run("print(open('/etc/shadow').read())", backend=backend)
    assert result.status == "error" and result.stdout == ""


def test_the_callers_files_are_not_visible(backend, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    secret.chmod(0o644)
    result = run(f"print(open({str(secret)!r}).read())", backend=backend)
    assert "hunter2" not in result.stdout and result.status == "error"


def test_the_callers_environment_variables_are_not_visible(backend):
    os.environ["ENVGYM_TEST_SECRET"] = "hunter2"
    try:
        code = (
            "import os, glob\nprint(dict(os.environ))\nfor p in glob.glob('/proc/*/environ'):\n"
            "    try:\n        print(open(p, 'rb').read())\n    except OSError:\n        pass"
        )
        result = run(code, backend=backend)
    finally:
        del os.environ["ENVGYM_TEST_SECRET"]
    assert result.status == "ok" and "hunter2" not in result.stdout


def test_writing_outside_the_job_directory_fails_and_the_host_is_unchanged(backend, tmp_path):
    """Only the job's own scratch space is writable (for Docker that is the container's tmpfs /tmp)."""
    target = tmp_path / "planted.txt"
    code = (
        "import os\nfor path in ('/usr/planted', '/etc/planted', '/planted', "
        f"{str(target)!r}):\n    try:\n        open(path, 'w').write('x')\n        print('wrote', path)\n"
        "    except OSError:\n        pass"
    )
    result = run(code, backend=backend)
    assert result.stdout == "" and not target.exists() and not os.path.exists("/usr/planted")


def test_files_left_in_tmp_are_gone_for_the_next_job(backend):
    run("import tempfile\nopen(tempfile.gettempdir() + '/left-behind', 'w').write('x')", backend=backend)
    result = run("import os, tempfile\nprint(os.path.exists(tempfile.gettempdir() + '/left-behind'))", backend=backend)
    assert result.stdout == "False\n"


def test_rm_rf_home_through_subprocess_leaves_the_host_alone(backend, tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("still here")
    code = f"import subprocess\nsubprocess.run('rm -rf ~ / {tmp_path} 2>/dev/null; echo done', shell=True)"
    result = run(code, timeout=10, backend=backend)
    assert "done" in result.stdout and canary.read_text() == "still here" and os.path.exists("/usr/bin/python3")
    assert run("print('fine')", backend=backend).stdout == "fine\n"


def test_a_job_cannot_see_another_jobs_processes(backend):
    """Not even their command lines: a job's /proc (local: its slot's PID namespace) holds only its own."""
    marker = "4242.5"
    other = threading.Thread(
        target=run,
        args=(f"import subprocess\nsubprocess.run(['sleep', '{marker}'])",),
        kwargs={"timeout": 1, "backend": backend},
    )
    other.start()
    code = (
        "import glob, time\nseen = set()\nfor _ in range(20):\n    for path in glob.glob('/proc/[0-9]*/cmdline'):\n"
        "        try:\n            seen.add(open(path, 'rb').read())\n        except OSError:\n            pass\n"
        "    time.sleep(0.05)\n"
        f"print(any(b'{marker}' in line for line in seen))"
    )
    result = run(code, timeout=3, backend=backend)
    other.join()
    assert result.stdout == "False\n", result.stderr


def test_local_jobs_cannot_leave_files_in_places_other_jobs_share(local_backend):
    """/, /tmp, /dev and /dev/shm are read-only for jobs, so nothing passes from one job to the next."""
    code = (
        "for path in ('/planted', '/tmp/planted', '/tmp/jobs/planted', '/dev/planted', '/dev/shm/planted', "
        "'/sandbox/planted'):\n    try:\n        open(path, 'w').write('x')\n        print('wrote', path)\n"
        "    except OSError:\n        pass"
    )
    result = run(code, backend=local_backend)
    assert (result.status, result.stdout) == ("ok", "")


def test_jobs_do_not_see_each_other(backend):
    """A job lingering in one slot cannot read the directory of a job in another slot."""
    results = []
    writer = threading.Thread(
        target=lambda: results.append(
            run("open('mine.txt', 'w').write('private')\nimport time\ntime.sleep(1.5)", timeout=1, backend=backend)
        )
    )
    writer.start()
    reader = run(
        "import glob\nprint(glob.glob('/tmp/**/mine.txt', recursive=True) + "
        "glob.glob('/sandbox*/**/mine.txt', recursive=True))",
        backend=backend,
    )
    writer.join()
    assert reader.stdout == "[]\n"

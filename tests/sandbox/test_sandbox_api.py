"""The run/run_many/arun contract, shown on the local backend."""

import asyncio
import os
import signal
import time

import pytest

from envgym.sandbox import arun, run, run_many
from envgym.sandbox.local import LocalBackend
from envgym.sandbox.result import make_request


def test_stdin_reaches_the_program_and_stdout_comes_back(local_backend):
    result = run("print(input()[::-1])", stdin="abc\n", backend=local_backend)
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "cba\n")


def test_a_raised_exception_is_an_error_with_the_traceback(local_backend):
    result = run("raise ValueError('boom')", backend=local_backend)
    assert result.status == "error" and result.exit_code == 1
    assert 'File "main.py", line 1' in result.stderr and "ValueError: boom" in result.stderr


def test_sys_exit_code_is_kept(local_backend):
    assert run("import sys; sys.exit(3)", backend=local_backend).exit_code == 3


def test_files_are_written_next_to_the_program(local_backend):
    result = run("print(open('data/x.txt').read())", files={"data/x.txt": "hello"}, backend=local_backend)
    assert result.stdout == "hello\n"


def test_files_of_one_job_are_gone_in_the_next(local_backend):
    run("open('left.txt', 'w').write('x')", backend=local_backend)
    assert run("import os; print(os.listdir('.'))", backend=local_backend).stdout == "['main.py']\n"


def test_bash_runs(local_backend):
    assert run("echo $((6 * 7))", language="bash", backend=local_backend).stdout == "42\n"


def test_c_is_compiled_and_run(local_backend):
    code = '#include <stdio.h>\nint main(void) { int n; scanf("%d", &n); printf("%d\\n", n * 2); return 0; }'
    result = run(code, language="c", stdin="21", backend=local_backend, timeout=10)
    assert (result.status, result.stdout) == ("ok", "42\n")


def test_a_compile_error_is_an_error(local_backend):
    result = run("int main( {", language="cpp", backend=local_backend, timeout=10)
    assert result.status == "error" and "error" in result.stderr


def test_run_many_keeps_the_input_order(local_backend):
    results = run_many([f"print({i})" for i in range(20)], backend=local_backend)
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(20)]


def test_run_many_takes_per_job_arguments(local_backend):
    results = run_many([{"code": "print(input())", "stdin": "a"}, "print('b')"], backend=local_backend)
    assert [r.stdout for r in results] == ["a\n", "b\n"]


def test_arun_awaits_without_blocking_the_loop(local_backend):
    async def main():
        return await asyncio.gather(*(arun(f"print({i})", backend=local_backend) for i in range(8)))

    assert [r.stdout for r in asyncio.run(main())] == [f"{i}\n" for i in range(8)]


def test_cpu_time_not_wall_time_decides_the_timeout(local_backend):
    """Sleeping 1.2 s under a 1 s budget is fine: it uses no CPU, and the wall backstop is 2 * 1 + 1 s."""
    assert run("import time; time.sleep(1.2); print('done')", timeout=1, backend=local_backend).status == "ok"


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"language": "cobol"}, "unknown language"),
        ({"timeout": 0}, "timeout must be"),
        ({"memory_mb": 4}, "memory_mb must be"),
        ({"files": {"../x": ""}}, "relative paths"),
    ],
)
def test_bad_arguments_are_refused_with_what_is_accepted(arguments, message):
    with pytest.raises((ValueError, TypeError), match=message):
        run("print(1)", **arguments)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown sandbox backend 'nope'"):
        run("print(1)", backend="nope")


def _zygote_pid(backend: LocalBackend) -> int:
    """The host pid of the pool's zygote (a descendant of the bwrap process)."""
    for _ in range(100):
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if (
                b"zygote.py" in cmdline
                and b"bwrap" not in cmdline
                and f'"uid_base": {backend._uid_base},'.encode() in cmdline
            ):
                return int(entry)
        time.sleep(0.05)
    raise AssertionError("zygote not found")


def test_a_dead_zygote_gives_infra_error_then_restarts():
    backend = LocalBackend(slots=1)
    try:
        future = backend.submit(make_request("import time; time.sleep(30)", timeout=20))
        os.kill(_zygote_pid(backend), signal.SIGKILL)
        assert future.result(timeout=10).status == "infra_error"
        assert run("print('back')", backend=backend).stdout == "back\n"
    finally:
        backend.close()


def test_without_bwrap_a_warning_says_so_and_rlimits_seccomp_and_the_uid_drop_still_apply():
    import envgym.sandbox.local as local

    local._warned_no_bwrap = False
    with pytest.warns(RuntimeWarning, match="bubblewrap .* is not installed"):
        backend = LocalBackend(use_bwrap=False, slots=1)
    try:
        code = "import os, socket\nprint(os.getuid() != 0)\ntry:\n    socket.socket()\nexcept OSError as e:\n    print(e.errno)"  # noqa: E501 -- data, kept whole
        assert run(code, backend=backend).stdout == "True\n13\n"
        assert run("x = bytearray(10 * 1024**3)", memory_mb=256, backend=backend).status == "memory"
        assert backend.job_processes() == []
    finally:
        backend.close()

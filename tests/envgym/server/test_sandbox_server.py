"""`envgym serve sandbox`: SandboxFusion compatibility, envgym's own endpoint, limits and load."""

import asyncio
import base64

import httpx
import pytest

sandbox_fusion = pytest.importorskip("sandbox_fusion")
from envgym.sandbox import run
from envgym.sandbox.local import LocalBackend
from envgym.sandbox.remote import RemoteBackend
from envgym.server.launch import app_in_thread
from envgym.server.sandbox import create_app


@pytest.fixture(scope="module")
def local_backend():
    backend = LocalBackend()
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def server_url(local_backend):
    with app_in_thread(create_app(local_backend, max_request_mb=1)) as url:
        yield url


def test_the_sandbox_fusion_client_runs_code(server_url):
    request = sandbox_fusion.RunCodeRequest(code="print(input() * 2)", language="python", stdin="ab")
    response = sandbox_fusion.run_code(request, endpoint=server_url, max_attempts=1)
    assert response.status == sandbox_fusion.RunStatus.Success
    assert response.run_result.stdout == "abab\n" and response.run_result.return_code == 0


def test_the_sandbox_fusion_client_sees_failures_and_timeouts(server_url):
    failed = sandbox_fusion.run_code(
        sandbox_fusion.RunCodeRequest(code="import sys; sys.exit(4)", language="python"),
        endpoint=server_url,
        max_attempts=1,
    )
    assert failed.status == sandbox_fusion.RunStatus.Failed and failed.run_result.return_code == 4
    slow = sandbox_fusion.run_code(
        sandbox_fusion.RunCodeRequest(code="while True: pass", language="python", run_timeout=1),
        endpoint=server_url,
        max_attempts=1,
    )
    assert slow.run_result.status == sandbox_fusion.CommandRunStatus.TimeLimitExceeded
    mapping = sandbox_fusion.SummaryMapping(RunTimeout="timeout")
    assert sandbox_fusion.summary_run_code_result(slow, mapping) == "timeout"


def test_base64_files_reach_the_program(server_url):
    body = {
        "code": "print(open('in.txt').read())",
        "language": "python",
        "files": {"in.txt": base64.b64encode(b"from a file").decode()},
    }
    assert httpx.post(f"{server_url}/run_code", json=body).json()["run_result"]["stdout"] == "from a file\n"


def test_ping_says_what_protects_the_jobs(server_url):
    answer = httpx.get(f"{server_url}/v1/ping").json()
    assert answer["status"] == "ok" and answer["backend"]["backend"] == "local"


def test_an_unsupported_language_is_a_400_that_lists_the_supported_ones(server_url):
    response = httpx.post(f"{server_url}/run_code", json={"code": "x", "language": "cobol"})
    assert response.status_code == 400 and "supported" in response.json()["detail"]


def test_bodies_over_the_size_limit_are_refused(server_url):
    response = httpx.post(f"{server_url}/run_code", json={"code": "#" * 2_000_000, "language": "python"})
    assert response.status_code == 413


def test_a_token_is_required_when_set(local_backend):
    with app_in_thread(create_app(local_backend, token="s3cret")) as url:
        assert httpx.get(f"{url}/v1/ping").status_code == 401
        assert httpx.get(f"{url}/v1/ping", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        remote = RemoteBackend(url, token="s3cret")
        assert run("print('hi')", backend=remote).stdout == "hi\n"
        remote.close()


def test_the_remote_backend_gives_the_same_result_as_local(server_url, local_backend):
    remote = RemoteBackend(server_url)
    try:
        for code in ("print(6 * 7)", "raise KeyError('k')", "import sys; sys.exit(2)"):
            here, there = run(code, backend=local_backend), run(code, backend=remote)
            assert (there.status, there.exit_code, there.stdout) == (here.status, here.exit_code, here.stdout)
            assert there.backend == "remote:local"
    finally:
        remote.close()


def test_an_unreachable_server_is_an_infra_error_not_a_failure():
    remote = RemoteBackend("http://127.0.0.1:9")
    try:
        assert run("print(1)", backend=remote).status == "infra_error"
    finally:
        remote.close()


def _program(i: int) -> str:
    kind = i % 4
    if kind == 0:
        return f"print({i} * {i})"
    if kind == 1:
        return f"import sys; print('e{i}', file=sys.stderr); sys.exit({i % 7 + 1})"
    if kind == 2:
        return f"print(sum(range({i * 1000})))"
    return f"raise ValueError({i})"


def test_200_concurrent_requests_are_all_answered_like_sequential_runs(server_url, local_backend):
    sequential = [run(_program(i), backend=local_backend) for i in range(200)]

    async def main():
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=200)) as client:
            return await asyncio.gather(
                *(
                    client.post(f"{server_url}/run_code", json={"code": _program(i), "language": "python"})
                    for i in range(200)
                )
            )

    responses = asyncio.run(main())
    assert [r.status_code for r in responses] == [200] * 200
    concurrent_verdicts = [
        (r.json()["status"], r.json()["run_result"]["return_code"], r.json()["run_result"]["stdout"]) for r in responses
    ]
    expected = [("Success" if s.ok else "Failed", s.exit_code, s.stdout) for s in sequential]
    assert concurrent_verdicts == expected

"""RemoteEnv: the Env API over HTTP (or a WebSocket per session), sync and async, with the env's own
exceptions and safe retries."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading

import pytest

import envgym
from envgym.remote import RemoteEnv, RemoteEnvError, ServerUnavailable
from envgym.server.app import ServerSettings
from envgym.server.launch import serve_in_thread
from envgym.utils.check import check_env

GUESS = "games/GuessNumber-v0"
GUESSES = [f"<guess>{g}</guess>" for g in (50, 25, 37, 43, 40, 41, 42, 44, 10, 90, 60)]


@pytest.fixture(params=["http", "websocket"])
def transport(request):
    return request.param


@pytest.fixture
def remote_id(thread_server):
    """A registry id whose entry point is RemoteEnv: what makes remote envs usable in make/make_vec."""
    envgym.register("remote/GuessNumber-v0", "envgym.remote:RemoteEnv", base_url=thread_server, env_id=GUESS)
    yield "remote/GuessNumber-v0"
    envgym.registration.registry.pop("remote/GuessNumber-v0")


def play(env, actions, seed=0, task_index=2):
    trace = [env.reset(seed=seed, options={"task_index": task_index})]
    for action in actions:
        trace.append(env.step(action))
        if trace[-1][2] or trace[-1][3]:
            break
    return trace


def test_import_envgym_loads_no_server_code_until_remote_env_is_used():
    code = "import sys, envgym; before = 'envgym.remote' in sys.modules; envgym.RemoteEnv; print(before, 'envgym.remote' in sys.modules)"  # noqa: E501 -- data, kept whole
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == [
        "False",
        "True",
    ]


def test_a_remote_env_passes_check_env(remote_id):
    env = envgym.make(remote_id)
    check_env(env)
    env.close()


def test_a_remote_env_plays_exactly_like_the_local_env(thread_server, transport):
    remote = envgym.RemoteEnv(thread_server, GUESS, max_turns=5, transport=transport)
    assert play(remote, GUESSES) == play(envgym.make(GUESS, max_turns=5), GUESSES)
    remote.close()


async def test_the_async_api_plays_like_the_sync_api(thread_server, transport):
    remote = RemoteEnv(thread_server, GUESS, transport=transport)
    trace = [await remote.areset(seed=0, options={"task_index": 2})]
    for action in GUESSES:
        trace.append(await remote.astep(action))
        if trace[-1][2] or trace[-1][3]:
            break
    await remote.aclose()
    assert trace == play(envgym.make(GUESS), GUESSES)


def test_make_vec_runs_remote_envs(remote_id):
    remote = envgym.make_vec(remote_id, 4, mode="thread")
    local = envgym.make_vec(GUESS, 4, mode="sync")
    assert remote.reset(seed=7) == local.reset(seed=7)
    for action in GUESSES[:4]:
        assert remote.step([action] * 4) == local.step([action] * 4)
    remote.close()
    local.close()


def test_server_side_env_errors_come_back_as_the_same_exceptions(thread_server, transport):
    env = RemoteEnv(thread_server, GUESS, transport=transport)
    with pytest.raises(envgym.ResetNeeded, match="reset"):
        env.step("<guess>1</guess>")
    with pytest.raises(envgym.InvalidOptions, match="out of range|task_index"):
        env.reset(options={"task_index": -3})
    env.reset(options={"task": envgym.Task("t", [{"role": "user", "content": "?"}], answer=5)})
    with pytest.raises(envgym.InvalidAction, match="role 'assistant'"):
        env.step({"role": "tool", "content": "x"})
    assert env.step("<guess>5</guess>")[2] is True
    with pytest.raises(envgym.ResetNeeded, match="ended"):
        env.step("<guess>5</guess>")
    env.close()
    with pytest.raises(envgym.UnknownEnv, match="Did you mean"):
        RemoteEnv(thread_server, "games/GuessNumbr-v0").reset()


def test_a_bearer_token_is_sent_and_a_wrong_one_is_a_clear_error(transport):
    with serve_in_thread(ServerSettings(workers="thread", token="tok")) as url:
        with pytest.raises(RemoteEnvError, match="forbidden: the bearer token"):
            RemoteEnv(url, GUESS, token="bad", transport=transport).reset()
        env = RemoteEnv(url, GUESS, token="tok", transport=transport)
        assert env.reset(seed=0)[0] and env.step("<guess>50</guess>")[0]
        env.close()


def test_a_websocket_dropped_between_turns_is_reopened_and_the_episode_goes_on(thread_server):
    remote = RemoteEnv(thread_server, GUESS, transport="websocket")
    local = envgym.make(GUESS)
    assert remote.reset(seed=0, options={"task_index": 2}) == local.reset(seed=0, options={"task_index": 2})
    for action in GUESSES[:3]:
        remote._socket[1].close()  # as if the network dropped it
        assert remote.step(action) == local.step(action)
    remote.close()


async def test_a_session_closed_on_the_server_is_lost_over_the_websocket_and_reset_opens_a_new_one(thread_server):
    import httpx

    from envgym.remote import SessionLost

    remote = RemoteEnv(thread_server, GUESS, transport="websocket")
    await remote.areset(seed=0)
    old = remote.session_id
    async with httpx.AsyncClient(base_url=thread_server) as http:
        await http.delete(f"/sessions/{old}", headers={"X-Session-Token": remote._session_token})
    with pytest.raises(SessionLost, match="reset"):
        await remote.astep("<guess>50</guess>")
    await remote.areset(seed=0)
    assert remote.session_id != old and (await remote.astep("<guess>50</guess>"))[0]
    await remote.aclose()


def test_a_malformed_websocket_frame_gets_an_error_frame_and_the_socket_stays_usable(thread_server, http, open_session):
    from websockets.sync.client import connect

    session_id, headers = open_session(http)
    with connect(
        f"ws{thread_server.removeprefix('http')}/sessions/{session_id}/ws", additional_headers=headers
    ) as socket_:
        socket_.send("{not json")
        assert '"status":400' in socket_.recv()
        socket_.send('{"op": "jump"}')
        assert '"status":422' in socket_.recv()
        socket_.send('{"op": "reset", "seed": 0}')
        assert socket_.recv().startswith('{"status":200,"body":{"messages"')


def test_an_unknown_transport_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="'http' or 'websocket', got 'grpc'"):
        RemoteEnv("http://127.0.0.1:1", GUESS, transport="grpc")


def test_an_unreachable_server_is_a_clear_error_after_retries():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = RemoteEnv(f"http://127.0.0.1:{port}", GUESS, max_retries=2, backoff_s=0.01)
    with pytest.raises(ServerUnavailable, match=r"after 3 attempt\(s\).*Is it running"):
        env.reset()


class DropFirstStepAnswer:
    """A TCP proxy that forwards everything but throws away the server's answer to the first /step request
    and cuts that connection, as a flaky network would after the server already stepped."""

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.dropped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client, socket.create_connection(("127.0.0.1", self.upstream_port)) as upstream:
            while request := _read_http_message(client):
                upstream.sendall(request)
                answer = _read_http_message(upstream)
                if b"/step " in request.split(b"\r\n", 1)[0] and self.dropped == 0:
                    self.dropped += 1
                    return
                client.sendall(answer)

    def close(self) -> None:
        self.listener.close()


def _read_http_message(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_a_step_whose_answer_was_lost_is_retried_and_applied_once(thread_server):
    proxy = DropFirstStepAnswer(int(thread_server.rsplit(":", 1)[1]))
    env = RemoteEnv(f"http://127.0.0.1:{proxy.port}", GUESS, backoff_s=0.01)
    local = envgym.make(GUESS)
    assert env.reset(seed=0, options={"task_index": 4}) == local.reset(seed=0, options={"task_index": 4})
    assert env.step("<guess>50</guess>") == local.step("<guess>50</guess>")
    assert proxy.dropped == 1
    assert env.step("<guess>20</guess>")[4]["turn"] == 2  # the retried turn was not played twice
    env.close()
    proxy.close()


async def test_sync_and_async_calls_can_take_turns_on_one_websocket_env(thread_server):
    remote = RemoteEnv(thread_server, GUESS, transport="websocket")
    local = envgym.make(GUESS)
    assert await remote.areset(seed=0, options={"task_index": 2}) == local.reset(seed=0, options={"task_index": 2})
    assert await asyncio.to_thread(remote.step, GUESSES[0]) == local.step(GUESSES[0])
    assert await remote.astep(GUESSES[1]) == local.step(GUESSES[1])
    await remote.aclose()

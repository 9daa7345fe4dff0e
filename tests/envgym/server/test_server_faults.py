"""Faults: a worker process killed mid-episode, a server restart, a client that vanishes."""

from __future__ import annotations

import os
import signal
import time

import httpx
import pytest

from envgym.remote import RemoteEnv, RemoteEnvError, ServerUnavailable, SessionLost
from envgym.server.launch import LocalServer

GUESS = "games/GuessNumber-v0"


def worker_pid(server_url: str, env: RemoteEnv) -> int:
    headers = {"X-Session-Token": env._session_token}
    return httpx.get(f"{server_url}/sessions/{env.session_id}", headers=headers).json()["worker_pid"]


def test_a_worker_killed_mid_episode_fails_only_its_sessions(process_server):
    envs = [RemoteEnv(process_server.url, GUESS, max_turns=20) for _ in range(4)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
        env.step("<guess>1</guess>")
    pids = [worker_pid(process_server.url, env) for env in envs]
    assert len(set(pids)) == 2, "sessions are spread over both workers"
    victim = pids[0]
    os.kill(victim, signal.SIGKILL)

    for env, pid in zip(envs, pids):
        if pid == victim:
            with pytest.raises(SessionLost, match="worker process .* died"):
                env.step("<guess>2</guess>")
        else:  # the other worker's sessions play their episodes to the end
            turns = 1
            while True:
                _, _, terminated, truncated, info = env.step(f"<guess>{turns + 1}</guess>")
                turns += 1
                if terminated or truncated:
                    break
            assert info["turn"] == turns
    replacement = RemoteEnv(process_server.url, GUESS)
    assert replacement.reset(seed=0)[0], "a new session works (the dead worker was replaced)"
    for env in [*envs, replacement]:
        env.close()
    assert httpx.get(f"{process_server.url}/health").json()["sessions"] == 0


def test_after_a_server_restart_clients_get_a_clear_error_and_reset_opens_a_new_session():
    server = LocalServer(workers="thread").start()
    env = RemoteEnv(server.url, GUESS, max_retries=1, backoff_s=0.01)
    env.reset(seed=0)
    env.step("<guess>50</guess>")
    server.kill()
    with pytest.raises(ServerUnavailable, match="did not answer"):
        env.step("<guess>60</guess>")

    with LocalServer(workers="thread", port=server.port):
        with pytest.raises(SessionLost, match="server restarted"):
            env.step("<guess>60</guess>")
        messages, info = env.reset(seed=0)
        assert messages and env.step("<guess>50</guess>")[4]["turn"] == 1
        env.close()


def test_a_vanished_client_is_reaped_after_the_idle_timeout_and_its_capacity_freed():
    with LocalServer(workers="process", num_workers=1, max_sessions=1, idle_timeout=1) as server:
        abandoned = RemoteEnv(server.url, GUESS)
        abandoned.reset(seed=0)  # ... and the client never calls again
        with pytest.raises(RemoteEnvError, match="at capacity") as refused:
            RemoteEnv(server.url, GUESS).reset()
        assert refused.value.status == 503
        deadline = time.monotonic() + 15
        while httpx.get(f"{server.url}/health").json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.2)
        newcomer = RemoteEnv(server.url, GUESS)
        assert newcomer.reset(seed=0)[0]
        with pytest.raises(SessionLost, match="idle timeout"):
            abandoned.step("<guess>50</guess>")
        newcomer.close()

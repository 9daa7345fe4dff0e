"""The env server's HTTP API: sessions, the wire format, request ids, capacity and idle reaping."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import numpy as np
import pytest

import envgym
from envgym.core import Env, Task
from envgym.episode import to_jsonable
from envgym.server.app import ServerSettings
from envgym.server.launch import serve_in_thread

GUESS = "games/GuessNumber-v0"


class RichInfoEnv(Env):
    """Puts every awkward kind of value into info: numpy scalars and arrays, tuples, nesting, None."""

    def _reset(self, task: Task | None, options):
        return [{"role": "user", "content": "say anything"}], {"array": np.arange(3), "nested": {"t": (1, "a")}}

    def _step(self, action):
        info = {
            "reward_components": {"correct": 0.5, "format": 0.25},
            "np_int": np.int64(7),
            "np_float": np.float32(0.5),
            "matrix": np.eye(2),
            "tuple": (1, 2, [3, {"deep": None}]),
            "text": "ünïcode ✓",
            "echo": action,
        }
        return [{"role": "user", "content": "noted", "name": "judge"}], 0.75, True, False, info


class SlowEnv(Env):
    """Records whether two of its steps ever overlapped; the first steps of two instances wait for each other,
    so they finish only if two sessions run together."""

    overlaps = 0
    meet = threading.Barrier(2)

    def __init__(self):
        self._inside = threading.Lock()
        self._met = False

    def _reset(self, task, options):
        return [{"role": "user", "content": "go"}], {}

    def _step(self, action):
        if not self._inside.acquire(blocking=False):
            SlowEnv.overlaps += 1
            return [], 0.0, False, False, {}
        try:
            if not self._met:
                self._met = True
                SlowEnv.meet.wait(timeout=30)  # raises BrokenBarrierError (a failed step) if sessions never meet
            time.sleep(0.05)
        finally:
            self._inside.release()
        return [{"role": "user", "content": "ok"}], 0.0, False, False, {}


@pytest.fixture(scope="module", autouse=True)
def test_envs():
    envgym.register("test/RichInfo-v0", RichInfoEnv)
    envgym.register("test/Slow-v0", SlowEnv)
    yield
    envgym.registration.registry.pop("test/RichInfo-v0")
    envgym.registration.registry.pop("test/Slow-v0")


def test_health_reports_sessions_and_workers(http, open_session):
    health = http.get("/health").json()
    assert health["status"] == "ok"
    assert health["workers"] == {"kind": "thread", "count": 4}
    assert health["max_sessions"] == 1024


def test_envs_lists_the_registry(http, open_session):
    ids = [spec["id"] for spec in http.get("/envs").json()]
    assert GUESS in ids and ids == sorted(ids)


def test_openapi_schema_documents_every_session_route(http, open_session):
    paths = http.get("/openapi.json").json()["paths"]
    assert {
        "/sessions",
        "/sessions/{session_id}/reset",
        "/sessions/{session_id}/step",
        "/sessions/{session_id}",
        "/envs",
        "/health",
    } <= set(paths)
    step_schema = paths["/sessions/{session_id}/step"]["post"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ]
    assert step_schema["$ref"].endswith("/StepResult")


def test_every_field_of_the_step_result_crosses_the_wire(http, open_session):
    session, headers = open_session(http, "test/RichInfo-v0")
    reset = http.post(f"/sessions/{session}/reset", json={"seed": 0}, headers=headers).json()
    assert reset["info"] == {"array": [0, 1, 2], "nested": {"t": [1, "a"]}}
    action = {
        "role": "assistant",
        "content": "hi",
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
    }
    step = http.post(f"/sessions/{session}/step", json={"action": action}, headers=headers).json()
    local = envgym.make("test/RichInfo-v0")
    local.reset(seed=0)
    messages, reward, terminated, truncated, info = local.step(action)
    assert step == {
        "messages": messages,
        "reward": reward,
        "terminated": terminated,
        "truncated": truncated,
        "info": to_jsonable(info),
    }
    assert step["info"]["matrix"] == [[1.0, 0.0], [0.0, 1.0]] and step["info"]["echo"] == action


def test_reset_with_the_same_seed_and_task_replays_the_local_env(http, open_session):
    session, headers = open_session(http)
    local = envgym.make(GUESS)
    for task_index in (0, 5):
        remote = http.post(
            f"/sessions/{session}/reset", json={"seed": 3, "options": {"task_index": task_index}}, headers=headers
        ).json()
        assert remote == dict(zip(("messages", "info"), local.reset(seed=3, options={"task_index": task_index})))
        for guess in (50, 25, 75):
            step = http.post(
                f"/sessions/{session}/step", json={"action": f"<guess>{guess}</guess>"}, headers=headers
            ).json()
            assert step == dict(
                zip(("messages", "reward", "terminated", "truncated", "info"), local.step(f"<guess>{guess}</guess>"))
            )


def test_a_task_given_in_reset_options_is_played(http, open_session):
    session, headers = open_session(http)
    task = {"id": "mine", "messages": [{"role": "user", "content": "guess 42"}], "answer": 42}
    reset = http.post(f"/sessions/{session}/reset", json={"options": {"task": task}}, headers=headers).json()
    assert reset["info"]["task_id"] == "mine"
    step = http.post(f"/sessions/{session}/step", json={"action": "<guess>42</guess>"}, headers=headers).json()
    assert step["terminated"] and step["reward"] == 1.0


def test_a_step_repeated_with_its_request_id_is_applied_once(http, open_session):
    session, headers = open_session(http)
    http.post(f"/sessions/{session}/reset", json={"seed": 0}, headers=headers)
    first = http.post(
        f"/sessions/{session}/step", json={"action": "<guess>50</guess>", "request_id": "r1"}, headers=headers
    )
    again = http.post(
        f"/sessions/{session}/step", json={"action": "<guess>50</guess>", "request_id": "r1"}, headers=headers
    )
    assert again.json() == first.json()
    assert http.get(f"/sessions/{session}", headers=headers).json()["steps"] == 1
    next_turn = http.post(
        f"/sessions/{session}/step", json={"action": "<guess>50</guess>", "request_id": "r2"}, headers=headers
    )
    assert next_turn.json()["info"]["turn"] == 2


async def test_calls_on_one_session_run_one_at_a_time_and_sessions_run_together(thread_server):
    async with httpx.AsyncClient(base_url=thread_server) as client:
        created = [(await client.post("/sessions", json={"env_id": "test/Slow-v0"})).json() for _ in range(2)]
        headers = [{"X-Session-Token": c["token"]} for c in created]
        for c, h in zip(created, headers):
            await client.post(f"/sessions/{c['session_id']}/reset", json={}, headers=h)
        steps = [
            client.post(f"/sessions/{c['session_id']}/step", json={"action": "x"}, headers=h, timeout=60)
            for c, h in zip(created, headers)
            for _ in range(4)
        ]
        responses = await asyncio.gather(*steps)
    assert all(r.status_code == 200 for r in responses), "the two sessions' first steps never ran together"
    assert SlowEnv.overlaps == 0


def test_capacity_limit_refuses_with_503_and_closing_frees_a_place(open_session):
    with serve_in_thread(ServerSettings(workers="thread", max_sessions=2)) as url, httpx.Client(base_url=url) as http:
        first, headers = open_session(http)
        open_session(http)
        refused = http.post("/sessions", json={"env_id": GUESS})
        assert refused.status_code == 503 and refused.json()["error"] == "at_capacity"
        assert "2 of 2 sessions" in refused.json()["message"] and refused.headers["retry-after"] == "1"
        assert http.delete(f"/sessions/{first}", headers=headers).json() == {"session_id": first, "closed": True}
        assert http.post("/sessions", json={"env_id": GUESS}).status_code == 201


def test_an_idle_session_is_reaped_and_its_capacity_freed(open_session):
    settings = ServerSettings(workers="thread", max_sessions=1, idle_timeout_s=0.3)
    with serve_in_thread(settings) as url, httpx.Client(base_url=url) as http:
        session, headers = open_session(http)
        assert http.post("/sessions", json={"env_id": GUESS}).status_code == 503
        deadline = time.monotonic() + 10
        while http.get("/health").json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)
        gone = http.post(f"/sessions/{session}/reset", json={}, headers=headers)
        assert gone.status_code == 410 and "idle timeout" in gone.json()["message"]
        assert http.post("/sessions", json={"env_id": GUESS}).status_code == 201


def test_a_bearer_token_guards_everything_but_health():
    with serve_in_thread(ServerSettings(workers="thread", token="s3cret")) as url, httpx.Client(base_url=url) as http:
        assert http.get("/health").status_code == 200
        missing = http.get("/envs")
        assert missing.status_code == 401 and missing.json()["error"] == "unauthorized"
        wrong = http.get("/envs", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 403 and wrong.json()["error"] == "forbidden"
        assert http.get("/envs", headers={"Authorization": "Bearer s3cret"}).status_code == 200

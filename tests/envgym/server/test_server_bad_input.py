"""Bad input gets a clear JSON error (code + what to do), and the server keeps serving afterwards."""

from __future__ import annotations

import httpx
import pytest

from envgym.server.app import ServerSettings
from envgym.server.launch import serve_in_thread

GUESS = "games/GuessNumber-v0"
JSON = {"content-type": "application/json"}


@pytest.fixture
def session(http, open_session):
    session_id, headers = open_session(http)
    assert http.post(f"/sessions/{session_id}/reset", json={"seed": 0}, headers=headers).status_code == 200
    return session_id, headers


@pytest.fixture(autouse=True)
def server_still_serves(thread_server):
    """After every bad request, a fresh session still plays a turn."""
    yield
    with httpx.Client(base_url=thread_server) as http:
        created = http.post("/sessions", json={"env_id": GUESS}).json()
        headers = {"X-Session-Token": created["token"]}
        http.post(f"/sessions/{created['session_id']}/reset", json={}, headers=headers)
        assert (
            http.post(
                f"/sessions/{created['session_id']}/step", json={"action": "<guess>1</guess>"}, headers=headers
            ).status_code
            == 200
        )
        http.delete(f"/sessions/{created['session_id']}", headers=headers)


def expect(response: httpx.Response, status: int, code: str, *words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "message"} and body["error"] == code, body
    for word in words:
        assert word in body["message"], body["message"]


def test_malformed_json_is_400(http, session):
    session_id, headers = session
    response = http.post(f"/sessions/{session_id}/step", content=b'{"action": "<guess>5', headers={**headers, **JSON})
    expect(response, 400, "malformed_json", "not valid JSON")


def test_a_wrong_type_is_422_naming_the_field(http, session):
    session_id, headers = session
    expect(
        http.post(f"/sessions/{session_id}/step", json={"action": 42}, headers=headers),
        422,
        "invalid_request",
        "body.action",
    )
    expect(
        http.post(f"/sessions/{session_id}/reset", json={"seed": "zero"}, headers=headers),
        422,
        "invalid_request",
        "body.seed",
    )
    expect(http.post("/sessions", json={"kwargs": {}}), 422, "invalid_request", "body.env_id")


def test_an_action_message_with_the_wrong_role_is_422_invalid_action(http, session):
    session_id, headers = session
    response = http.post(
        f"/sessions/{session_id}/step", json={"action": {"role": "user", "content": "hi"}}, headers=headers
    )
    expect(response, 422, "invalid_action", "role 'assistant'")


def test_bad_reset_options_are_422_invalid_options(http, session):
    session_id, headers = session
    response = http.post(f"/sessions/{session_id}/reset", json={"options": {"task_index": -1}}, headers=headers)
    expect(response, 422, "invalid_options", "task_index")


def test_an_unknown_env_id_is_404_with_a_suggestion(http):
    expect(http.post("/sessions", json={"env_id": "games/GuesNumber-v0"}), 404, "unknown_env", "Did you mean", GUESS)


def test_env_kwargs_the_env_rejects_are_422(http):
    response = http.post("/sessions", json={"env_id": GUESS, "kwargs": {"low": 9, "high": 1}})
    expect(response, 422, "invalid_env_kwargs", "need low < high")
    expect(http.post("/sessions", json={"env_id": GUESS, "kwargs": {"colour": 1}}), 422, "invalid_env_kwargs", "colour")


def test_an_unknown_session_is_404(http):
    expect(
        http.post("/sessions/0123456789abcdef/step", json={"action": "x"}),
        404,
        "session_not_found",
        "Create a new session",
    )


def test_a_wrong_or_missing_session_token_is_403(http, session):
    session_id, _ = session
    wrong = http.post(f"/sessions/{session_id}/step", json={"action": "x"}, headers={"X-Session-Token": "guess"})
    expect(wrong, 403, "forbidden", "X-Session-Token")
    expect(http.delete(f"/sessions/{session_id}"), 403, "forbidden", "no X-Session-Token")


def test_an_oversized_body_is_413_before_it_is_read(http, session):
    session_id, headers = session
    big = {"action": "x" * (3 * 1024 * 1024)}
    expect(
        http.post(f"/sessions/{session_id}/step", json=big, headers=headers), 413, "body_too_large", "limit of 2097152"
    )


def test_an_oversized_chunked_body_is_413_too():
    with (
        serve_in_thread(ServerSettings(workers="thread", max_body_bytes=1000)) as url,
        httpx.Client(base_url=url) as http,
    ):
        chunks = (b'{"env_id": "' + b"x" * 500 for _ in range(4))  # a generator body goes out chunked
        expect(http.post("/sessions", content=chunks, headers=JSON), 413, "body_too_large", "limit of 1000")
        assert http.get("/health").status_code == 200


def test_a_step_after_close_is_410(http, session):
    session_id, headers = session
    http.delete(f"/sessions/{session_id}", headers=headers)
    expect(
        http.post(f"/sessions/{session_id}/step", json={"action": "x"}, headers=headers),
        410,
        "session_gone",
        "closed by its client",
    )


def test_a_step_after_the_episode_ended_is_409_reset_needed(http, open_session):
    session_id, headers = open_session(http)
    http.post(
        f"/sessions/{session_id}/reset",
        json={"options": {"task": {"id": "t", "messages": [], "answer": 7}}},
        headers=headers,
    )
    assert http.post(f"/sessions/{session_id}/step", json={"action": "<guess>7</guess>"}, headers=headers).json()[
        "terminated"
    ]
    expect(
        http.post(f"/sessions/{session_id}/step", json={"action": "<guess>7</guess>"}, headers=headers),
        409,
        "reset_needed",
        "reset()",
    )


def test_a_step_before_any_reset_is_409(http, open_session):
    session_id, headers = open_session(http)
    expect(
        http.post(f"/sessions/{session_id}/step", json={"action": "x"}, headers=headers),
        409,
        "reset_needed",
        "before reset()",
    )


def test_an_unknown_route_is_a_json_404(http):
    expect(http.get("/sessoins"), 404, "route_not_found", "GET /sessoins")

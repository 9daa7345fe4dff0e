"""The env server speaks OpenEnv at /openenv/{env_id}: OpenEnv's validator and its own client are the judges
(against the deployed shape, `envgym serve env` in a child process with process workers, and an in-thread server).

The protocol details (errors, statelessness of HTTP reset/step, tokens) are checked with a plain WebSocket
client, so a failure names the message that went wrong."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

import envgym
from envgym.server.app import ServerSettings
from envgym.server.launch import serve_in_thread

websockets_sync = pytest.importorskip("websockets.sync.client")
websockets_exceptions = pytest.importorskip("websockets.exceptions")

GUESS = "games/GuessNumber-v0"
MULTIHOP = "search/MultiHopQA-v0"


def openenv_url(server_url: str, env_id: str) -> str:
    return f"{server_url}/openenv/{env_id}"


def ws_url(server_url: str, env_id: str) -> str:
    return openenv_url(server_url, env_id).replace("http://", "ws://", 1) + "/ws"


def exchange(socket, message: dict) -> dict:
    socket.send(json.dumps(message))
    return json.loads(socket.recv(timeout=30))


CRITERIA = {
    "openapi_version_available",
    "health_endpoint",
    "metadata_endpoint",
    "schema_endpoint",
    "mcp_endpoint",
    "mode_endpoint_consistency",
}


def test_openenvs_runtime_validation_accepts_the_served_env(process_server):
    """The function behind `openenv validate --url` (the command itself takes ~10 s to import; see below)."""
    validation = pytest.importorskip("openenv.cli._validation")
    report = validation.validate_running_environment(openenv_url(process_server.url, GUESS))
    assert report["passed"] and report["standard_profile"] == "openenv-http/1.x"
    assert {c["id"] for c in report["criteria"] if c["passed"]} == CRITERIA


@pytest.mark.slow
def test_openenv_validate_command_accepts_the_served_env(process_server):
    pytest.importorskip("openenv")
    command = [
        sys.executable,
        "-m",
        "openenv.cli",
        "validate",
        "--url",
        openenv_url(process_server.url, GUESS),
        "--json",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and {c["id"] for c in report["criteria"] if c["passed"]} == CRITERIA


def test_openenv_client_plays_guess_number_to_the_end(process_server):
    openenv_core = pytest.importorskip("openenv.core")
    low, high, turns = 1, 100, 0
    with openenv_core.GenericEnvClient(base_url=openenv_url(process_server.url, GUESS)).sync() as client:
        result = client.reset(seed=3)
        assert "Guess it" in result.observation["messages"][-1]["content"] and result.done is False
        while not result.done:
            guess = (low + high) // 2
            result = client.step({"message": f"<guess>{guess}</guess>"})
            turns += 1
            feedback = result.observation["messages"][-1]["content"]
            low, high = (
                (guess + 1, high) if "higher" in feedback else (low, guess - 1) if "lower" in feedback else (low, high)
            )
        state = client.state()
    assert result.reward == 1.0 and result.observation["terminated"] and "Correct" in feedback
    assert result.metadata["reward_components"]["correct"] == 1.0
    assert state["step_count"] == turns and state["env_id"] == GUESS


def test_openenv_client_plays_multihop_qa_to_the_end(thread_server):
    openenv_core = pytest.importorskip("openenv.core")
    reference = envgym.make(MULTIHOP)
    reference.reset(seed=5, options={"task_index": 2})
    task = reference.unwrapped.task
    reference.close()
    with openenv_core.GenericEnvClient(base_url=openenv_url(thread_server, MULTIHOP)).sync() as client:
        result = client.reset(seed=5, task_index=2)
        assert task.messages[-1]["content"] in result.observation["messages"][-1]["content"]
        assert result.metadata["tools"][0]["function"]["name"] == "search"
        for entity in task.metadata["path"]:
            result = client.step({"message": f"<search>{entity}</search>"})
            assert entity in result.observation["messages"][0]["content"] and not result.done
        result = client.step({"message": f"<answer>{task.answer[0]}</answer>"})
    assert result.done and result.reward == 1.0 and result.metadata["correct"] is True


def test_a_turn_with_tool_calls_reaches_a_function_calling_env(thread_server):
    with websockets_sync.connect(ws_url(thread_server, "tools/ShopOrders-v0")) as socket:
        first = exchange(socket, {"type": "reset", "data": {"seed": 0}})
        assert first["type"] == "observation" and first["data"]["metadata"]["tools"]
        call = {"id": "c1", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}
        answer = exchange(socket, {"type": "step", "data": {"message": "", "tool_calls": [call]}})
    assert answer["type"] == "observation"
    assert answer["data"]["observation"]["messages"][0]["role"] == "tool"
    assert "no tool named 'no_such_tool'" in answer["data"]["observation"]["messages"][0]["content"]


def test_a_websocket_session_is_an_env_session_closed_with_the_connection(thread_server, http):
    before = http.get("/health").json()["sessions"]
    with websockets_sync.connect(ws_url(thread_server, GUESS)) as socket:
        exchange(socket, {"type": "reset", "data": {}})
        assert http.get("/health").json()["sessions"] == before + 1
    for _ in range(100):  # the server closes the session as the socket closes
        if http.get("/health").json()["sessions"] == before:
            break
    assert http.get("/health").json()["sessions"] == before


def test_a_bad_message_is_an_error_reply_and_the_episode_goes_on(thread_server):
    with websockets_sync.connect(ws_url(thread_server, GUESS)) as socket:
        exchange(socket, {"type": "reset", "data": {"seed": 1}})
        wrong_field = exchange(socket, {"type": "step", "data": {"text": "<guess>5</guess>"}})
        not_json = socket.send("{not json") or json.loads(socket.recv(timeout=30))
        unknown_type = exchange(socket, {"type": "jump"})
        still_playing = exchange(socket, {"type": "step", "data": {"message": "<guess>50</guess>"}})
    assert wrong_field["type"] == "error" and wrong_field["data"]["code"] == "VALIDATION_ERROR"
    assert "data.message" in wrong_field["data"]["message"] and "data.text" in wrong_field["data"]["message"]
    assert not_json["data"]["code"] == "INVALID_JSON"
    assert (
        unknown_type["data"]["code"] == "VALIDATION_ERROR"
        and "reset, step, state, close" in unknown_type["data"]["message"]
    )
    assert still_playing["type"] == "observation"


def test_stepping_before_reset_is_the_envs_reset_needed_error(thread_server):
    with websockets_sync.connect(ws_url(thread_server, GUESS)) as socket:
        answer = exchange(socket, {"type": "step", "data": {"message": "<guess>50</guess>"}})
    assert answer["type"] == "error" and answer["data"]["error"] == "reset_needed"


def test_reset_task_index_plays_the_same_task_as_in_process(thread_server):
    reference = envgym.make(GUESS)
    messages, _ = reference.reset(seed=0, options={"task_index": 7})
    with websockets_sync.connect(ws_url(thread_server, GUESS)) as socket:
        answer = exchange(socket, {"type": "reset", "data": {"seed": 0, "task_index": 7}})
    assert answer["data"]["observation"]["messages"] == messages
    assert answer["data"]["metadata"]["task_id"] == reference.unwrapped.task.id


def test_http_reset_answers_the_first_observation_and_keeps_no_session(thread_server, http):
    response = http.post(f"/openenv/{GUESS}/reset", json={"seed": 0, "task_index": 7})
    assert response.status_code == 200
    body = response.json()
    assert body["done"] is False and body["reward"] is None and body["observation"]["messages"][0]["role"] == "user"
    assert http.get("/health").json()["sessions"] == 0


def test_http_step_is_stateless_in_openenv_so_it_points_to_the_websocket(http):
    response = http.post(f"/openenv/{GUESS}/step", json={"action": {"message": "<guess>50</guess>"}})
    assert response.status_code == 409 and response.json()["error"] == "reset_needed"
    assert f"/openenv/{GUESS}/ws" in response.json()["message"]


def test_schema_maps_a_chat_turn_to_an_openenv_action_and_observation(http):
    schema = http.get(f"/openenv/{GUESS}/schema").json()
    assert schema["action"]["required"] == ["message"] and "tool_calls" in schema["action"]["properties"]
    assert {"messages", "terminated", "truncated", "done", "reward", "metadata"} <= set(
        schema["observation"]["properties"]
    )
    assert {"episode_id", "step_count", "env_id"} <= set(schema["state"]["properties"])


def test_each_env_has_its_own_openapi_document_rooted_at_its_prefix(http):
    document = http.get(f"/openenv/{MULTIHOP}/openapi.json").json()
    assert {"/reset", "/step", "/state", "/health", "/schema", "/metadata", "/mcp"} <= set(document["paths"])
    assert document["servers"] == [{"url": f"/openenv/{MULTIHOP}"}] and MULTIHOP in document["info"]["title"]
    assert http.get(f"/openenv/{MULTIHOP}/metadata").json()["name"] == MULTIHOP


def test_mcp_jsonrpc_says_where_the_tools_are(http):
    answer = http.post(f"/openenv/{MULTIHOP}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()
    assert answer["id"] == 1 and answer["error"]["code"] == -32601
    assert f"envgym serve tools {MULTIHOP}" in answer["error"]["message"]


def test_an_unknown_env_is_a_404_over_http_and_an_error_over_the_websocket(thread_server, http):
    response = http.get("/openenv/games/NoSuchGame-v0/health")
    assert response.status_code == 404 and response.json()["error"] == "unknown_env"
    assert http.get("/openenv/games").status_code == 404
    with websockets_sync.connect(ws_url(thread_server, "games/NoSuchGame-v0")) as socket:
        answer = json.loads(socket.recv(timeout=30))
    assert answer["type"] == "error" and "NoSuchGame" in answer["data"]["message"]


def test_a_token_protected_server_refuses_websocket_handshakes_without_it():
    with serve_in_thread(ServerSettings(workers="thread", num_workers=1, token="s3cret")) as url:
        with pytest.raises(Exception, match="403"):
            websockets_sync.connect(ws_url(url, GUESS))
        with websockets_sync.connect(
            ws_url(url, GUESS), additional_headers={"Authorization": "Bearer s3cret"}
        ) as socket:
            assert exchange(socket, {"type": "reset", "data": {}})["type"] == "observation"
        assert httpx.get(f"{url}/openenv/{GUESS}/health").status_code == 401


def test_a_reaped_session_answers_session_error_and_closes_the_socket():
    with serve_in_thread(ServerSettings(workers="thread", num_workers=1, idle_timeout_s=0.2)) as url:
        with websockets_sync.connect(ws_url(url, GUESS)) as socket:
            exchange(socket, {"type": "reset", "data": {}})
            deadline = time.monotonic() + 30
            while httpx.get(f"{url}/health").json()["sessions"] and time.monotonic() < deadline:
                time.sleep(0.1)
            answer = exchange(socket, {"type": "step", "data": {"message": "<guess>50</guess>"}})
            assert answer["data"]["code"] == "SESSION_ERROR" and "idle timeout" in answer["data"]["message"]
            with pytest.raises(websockets_exceptions.ConnectionClosed):
                socket.recv(timeout=30)

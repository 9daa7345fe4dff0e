"""OpenEnvEnv plays OpenEnv servers: the echo env that ships as OpenEnv's `openenv init` template (served by
OpenEnv's own server with uvicorn in a child process), and envgym's own OpenEnv endpoint. Importing openenv
takes seconds (it loads gradio); the module's fixtures pay it once."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import envgym
from envgym.core import InvalidAction
from envgym.server.app import ServerSettings
from envgym.server.launch import serve_in_thread
from envgym.utils import check_env

pytest.importorskip("openenv")
from envgym.integrations.openenv import OpenEnvError, observation_messages  # noqa: E402

GUESS = "games/GuessNumber-v0"


@pytest.fixture(scope="module")
def echo_server(tmp_path_factory):
    """URL of OpenEnv's echo template env (`openenv init echo_env`), served by uvicorn in a child process."""
    from openenv.cli.commands.init import init  # `openenv init`, in this process: its imports are the client's too

    root = tmp_path_factory.mktemp("openenv")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", "")  # no `uv` to find: init then skips `uv lock`, which would need the network
        init("echo_env", output_dir=str(root))
    app = root / "echo_env" / "server" / "app.py"
    # The template allows one session; gymnasium's checker opens a second env while the first is connected.
    app.write_text(app.read_text().replace("max_concurrent_envs=1", "max_concurrent_envs=4"))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "server.app:app", "--fd", str(listener.fileno()), "--log-level", "warning"],
        cwd=root / "echo_env",
        pass_fds=[listener.fileno()],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    listener.close()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the echo server did not start:\n{server.stdout.read() if server.poll() is not None else ''}"
                )
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def envgym_server():
    with serve_in_thread(ServerSettings(workers="thread", num_workers=2)) as url:
        yield url


def test_openenv_env_plays_the_echo_template_through_openenvs_client(echo_server):
    env = envgym.make("openenv/Remote-v0", base_url=echo_server, max_turns=2)
    try:
        messages, info = env.reset(seed=0)
        assert messages == [{"role": "user", "content": "Echo Env environment ready!"}]
        messages, reward, terminated, truncated, info = env.step("Hello")
        assert messages == [{"role": "user", "content": "Hello"}] and reward == pytest.approx(0.5)
        assert info["original_message"] == "Hello" and info["observation"]["message_length"] == 5
        assert (terminated, truncated) == (False, False)
        *_, terminated, truncated, info = env.step("again")
        assert (terminated, truncated) == (False, True) and info["step"] == 2  # the echo never ends: max_turns cuts it
    finally:
        env.close()


def test_openenv_env_passes_check_env_against_the_echo_server(echo_server):
    envgym.register(
        "test/EchoOverOpenEnv-v0", "envgym.integrations.openenv:OpenEnvEnv", max_turns=3, base_url=echo_server
    )
    env = envgym.make("test/EchoOverOpenEnv-v0")
    try:
        check_env(env)
    finally:
        env.close()


def test_openenv_env_over_envgyms_endpoint_plays_like_the_env_in_process(envgym_server):
    reference = envgym.make(GUESS)
    expected, _ = reference.reset(seed=0, options={"task_index": 4})
    secret = reference.unwrapped.task.answer
    env = envgym.make("openenv/Remote-v0", base_url=f"{envgym_server}/openenv/{GUESS}")
    try:
        messages, info = env.reset(seed=0, options={"reset_kwargs": {"task_index": 4}})
        assert messages == expected and info["task_id"] == reference.unwrapped.task.id
        messages, reward, terminated, truncated, info = env.step(f"<guess>{secret}</guess>")
    finally:
        env.close()
    assert (reward, terminated, truncated) == (1.0, True, False) and info["reward_components"]["correct"] == 1.0
    assert info["observation"] == {"terminated": True, "truncated": False}


def test_a_server_error_raises_openenv_error_never_a_reward(envgym_server):
    env = envgym.make("openenv/Remote-v0", base_url=f"{envgym_server}/openenv/{GUESS}")
    try:
        with pytest.raises(OpenEnvError, match="unknown fields"):
            env.reset(seed=0, options={"reset_kwargs": {"options": {"task": {"not_a_task_field": 1}}}})
    finally:
        env.close()


def test_a_server_that_does_not_answer_is_an_openenv_error():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    env = envgym.make("openenv/Remote-v0", base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(OpenEnvError, match="/schema"):
        env.reset()


def test_an_action_field_the_server_lacks_is_named_with_the_fields_it_has(echo_server):
    env = envgym.make("openenv/Remote-v0", base_url=echo_server, action_field="text")
    with pytest.raises(OpenEnvError, match=r"fields \['message', 'metadata'\]"):
        env.reset()


def test_tool_calls_for_a_server_without_them_are_an_invalid_action(echo_server):
    env = envgym.make("openenv/Remote-v0", base_url=echo_server)
    try:
        env.reset()
        call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        with pytest.raises(InvalidAction, match="takes no tool calls"):
            env.step({"role": "assistant", "content": "", "tool_calls": [call]})
    finally:
        env.close()


def test_observation_messages_keeps_chat_messages_and_turns_anything_else_into_one_user_message():
    chat = [{"role": "user", "content": "hi"}]
    assert observation_messages({"messages": chat, "done": False}) == chat
    assert observation_messages({"prompt": "Guess a word", "turn": 3, "reward": None}) == [
        {"role": "user", "content": "Guess a word"}
    ]
    assert observation_messages({"board": "x..", "legal": "a1 b2"}) == [
        {"role": "user", "content": '{"board": "x..", "legal": "a1 b2"}'}
    ]


def test_the_docs_examples_run_against_a_server(envgym_server, capsys):
    page = Path(__file__).resolve().parents[3] / "docs" / "openenv.md"
    text = page.read_text()
    assert (
        "openenv validate --url http://127.0.0.1:8000/openenv/games/GuessNumber-v0" in text
    )  # run in tests/envgym/server
    namespace: dict = {}
    for code in re.findall(r"```python\n(.*?)```", text, re.DOTALL):
        exec(compile(code.replace("http://127.0.0.1:8000", envgym_server), str(page), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "Correct! The number was" in printed and "order_id" in printed

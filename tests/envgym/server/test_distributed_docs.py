"""docs/distributed.md runs as written: its bash commands (the server in the background, the benchmark to
the end) and then its Python blocks in order, against that server."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
from pathlib import Path

import pytest

from envgym.server.launch import READY_LINE

PAGE = Path(__file__).resolve().parents[3] / "docs" / "distributed.md"
DOC_URL = "http://envhost:8000"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.DOTALL)


def start_documented_server(command: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """The page's `envgym serve env` line, on loopback and a free port (tests never bind 0.0.0.0)."""
    command = [*command]
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = "0"
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        for line in server.stdout:
            if line.startswith(READY_LINE) and not found:
                found.append(line.split()[len(READY_LINE.split())])
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(60):
        server.kill()
        raise AssertionError(f"the documented server command did not start: {shlex.join(command)}")
    return server, found[0]


def test_the_page_commands_and_code_run(monkeypatch):
    from envgym import registration

    registration.load_plugins()  # first, so the copy below holds the built-in envs (and is what gets restored)
    monkeypatch.setattr(registration, "registry", dict(registration.registry))
    env = dict(os.environ)
    server, url = None, None
    try:
        for block in blocks("bash"):
            for line in block.strip().splitlines():
                if line.startswith("export "):
                    key, _, value = line.removeprefix("export ").partition("=")
                    env[key] = value
                    monkeypatch.setenv(key, value)
                elif line.startswith("envgym serve env"):
                    server, url = start_documented_server(shlex.split(line), env)
                else:
                    assert server is not None, "the page runs commands before it starts the server"
                    out = subprocess.run(
                        shlex.split(line), capture_output=True, text=True, env=env, timeout=300, check=True
                    ).stdout
                    result = json.loads(out.strip().splitlines()[-1])
                    assert result["bench"] == "server" and result["server"]["steps_per_s"] > 0
                    assert result["server_websocket"]["steps_per_s"] > 0
        assert url is not None
        namespace: dict = {"__name__": "docs_distributed"}
        for code in blocks("python"):
            assert DOC_URL in code or "ray" in code, "every example talks to the documented server or to Ray"
            exec(compile(code.replace(DOC_URL, url), str(PAGE), "exec"), namespace)
        assert len(namespace["returns"]) == 32 and len(namespace["episodes"]) == 8
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=15)
            server.stdout.close()


@pytest.mark.parametrize("shown", ["envgym serve env", "envgym bench server --json", "ray_rollouts", "make_vec"])
def test_the_page_shows(shown):
    assert shown in PAGE.read_text()

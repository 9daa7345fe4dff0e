"""`envgym serve env`: run the env server (light module: heavy imports happen inside the command)."""

from __future__ import annotations

import os
from typing import Any

import typer

READY_LINE = "envgym env server listening on"


def serve_env(
    host: str = typer.Option("127.0.0.1", help="Interface to bind. 0.0.0.0 exposes it to the network: set --token then."),
    port: int = typer.Option(8000, help="Port to listen on (0: any free port; the ready line says which)."),
    workers: str = typer.Option("process", help="Where envs run: 'process' (worker processes) or 'thread'."),
    num_workers: int = typer.Option(None, help="Worker processes or threads (default: the CPU count)."),
    max_sessions: int = typer.Option(1024, help="Open sessions allowed at once (more get 503 at_capacity)."),
    idle_timeout: float = typer.Option(600.0, help="Close sessions idle this many seconds (0: never)."),
    token: str = typer.Option(None, envvar="ENVGYM_SERVER_TOKEN", help="Require 'Authorization: Bearer TOKEN'."),
    max_body_bytes: int = typer.Option(2 * 1024 * 1024, help="Refuse request bodies larger than this (413)."),
    log_level: str = typer.Option("warning", help="uvicorn log level."),
) -> None:
    """Serve envgym envs over HTTP as stateful sessions (create, reset, step, close)."""
    from envgym.server.app import ServerSettings

    settings = ServerSettings(host, port, workers, num_workers, max_sessions, idle_timeout or None, token, max_body_bytes)
    run_server(settings, log_level=log_level)


def run_server(settings: "ServerSettings", log_level: str = "warning") -> None:  # noqa: F821 - lazy import
    """Bind, serve, and print ``READY_LINE http://HOST:PORT`` once the workers are up (``--port 0`` users
    and process supervisors read the port from it)."""
    from envgym.server.app import create_app

    serve_app(create_app(settings), settings.host, settings.port, READY_LINE, log_level=log_level, backlog=2048,
              timeout_keep_alive=75, ws_max_size=settings.max_body_bytes)


def serve_app(app: Any, host: str, port: int, ready_line: str, log_level: str = "warning", **config: Any) -> None:
    """Serve an ASGI app with uvicorn on ``host:port`` (0: a free port) and print ``ready_line URL (pid N)``
    once it accepts connections. Every ``envgym serve`` HTTP server starts here."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    shown_host = f"[{host}]" if family == socket.AF_INET6 else host
    url = f"http://{shown_host}:{sock.getsockname()[1]}"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list | None = None) -> None:
            await super().startup(sockets=sockets)
            print(f"{ready_line} {url} (pid {os.getpid()})", flush=True)

    Server(uvicorn.Config(app, log_level=log_level, **config)).run(sockets=[sock])

"""Start a server: in this process, printing a ready line (:func:`serve_app`, what every ``envgym serve`` HTTP
command runs), in a child process (:class:`LocalServer`) or in a thread of this process (:func:`serve_in_thread`,
:func:`app_in_thread`), waiting until it serves. For the CLI, tests, benchmarks and notebooks.

    with LocalServer(workers="thread", idle_timeout=5) as server:
        env = RemoteEnv(server.url, "games/GuessNumber-v0")
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envgym.server.app import ServerSettings

READY_LINE = "envgym env server listening on"


class LocalServer:
    """``envgym serve env`` on 127.0.0.1 and a free port; options are the command's, as
    keyword arguments (``max_sessions=8`` -> ``--max-sessions 8``)."""

    def __init__(self, *, port: int = 0, startup_timeout_s: float = 60.0, **options: Any):
        self.port = port
        self.options = options
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.output: list[str] = []

    def start(self) -> LocalServer:
        command = [sys.executable, "-m", "envgym", "serve", "env", "--host", "127.0.0.1", "--port", str(self.port)]
        for name, value in self.options.items():
            if value is not None:
                command += [f"--{name.replace('_', '-')}", str(value)]
        # The server's settings are exactly the options given: no token inherited from this environment.
        environment = {k: v for k, v in os.environ.items() if k != "ENVGYM_SERVER_TOKEN"}
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment
        )
        ready = threading.Event()
        self._pump_thread = threading.Thread(target=self._pump, args=(ready,), daemon=True)
        self._pump_thread.start()
        deadline = time.monotonic() + self.startup_timeout_s
        while not ready.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the env server did not start ({' '.join(command)}):\n" + "".join(self.output[-40:])
                )
        return self

    def _pump(self, ready: threading.Event) -> None:
        """Keep reading the server's output (a full pipe would stall it) and spot the ready line."""
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            if line.startswith(READY_LINE):
                self.url = line.split()[len(READY_LINE.split())]
                self.port = int(self.url.rsplit(":", 1)[1])
                ready.set()

    @property
    def pid(self) -> int:
        assert self.process is not None, "the server is not started"
        return self.process.pid

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM (uvicorn shuts down cleanly and stops its workers), then SIGKILL if it hangs."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._pump_thread.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def kill(self) -> None:
        """SIGKILL: the server dies as in a crash, with no shutdown."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.stop()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@contextlib.contextmanager
def app_in_thread(app: Any, *, host: str = "127.0.0.1", port: int = 0, start_timeout: float = 60.0) -> Iterator[str]:
    """Serve any ASGI ``app`` with uvicorn in a daemon thread of this process (``port=0``: a free port); yields
    its URL and stops the server on exit. Every in-process server of the project (env, search) starts here."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the in-thread server did not start within {start_timeout:.0f} s")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def serve_in_thread(settings: ServerSettings | None = None, port: int = 0) -> Iterator[str]:
    """Run the env server in a thread of this process on ``port`` (0: a free one; ``settings.port`` is not
    used) and yield its URL. Envs registered in this process (``envgym.register`` in a notebook or test) are
    servable with ``workers="thread"``."""
    from envgym.server.app import ServerSettings, create_app

    settings = settings or ServerSettings(workers="thread")
    with app_in_thread(create_app(settings), host=settings.host, port=port) as url:
        yield url


def run_server(settings: ServerSettings, log_level: str = "warning") -> None:
    """Bind, serve, and print ``READY_LINE http://HOST:PORT`` once the workers are up (``--port 0`` users
    and process supervisors read the port from it)."""
    from envgym.server.app import create_app

    serve_app(
        create_app(settings),
        settings.host,
        settings.port,
        READY_LINE,
        log_level=log_level,
        backlog=2048,
        timeout_keep_alive=75,
        ws_max_size=settings.max_body_bytes,
    )


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

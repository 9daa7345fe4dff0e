"""envgym.sandbox: run untrusted code (model output) with real isolation, fast.

    from envgym.sandbox import run
    result = run("print(input()[::-1])", stdin="abc\\n")   # ExecResult(status="ok", stdout="cba\\n", ...)

Backends: ``local`` (default; a forked zygote in bubblewrap with rlimits, seccomp and a uid per job),
``docker`` (warm containers, ``pip install envgym[docker]``) and ``remote`` (an ``envgym serve sandbox``
server; set ``ENVGYM_SANDBOX_URL``). ``backend=None`` uses ``ENVGYM_SANDBOX_BACKEND`` or ``local``. What each
backend protects against, and what not, is in docs/sandbox.md.

``timeout`` is a CPU-time budget (verdicts do not flip when the machine is busy); a wall-clock backstop of
``2 * timeout + 1`` seconds stops programs that sleep or block.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from envgym.sandbox.result import LANGUAGES, STATUSES, ExecResult, make_request

__all__ = ["ExecResult", "LANGUAGES", "STATUSES", "Backend", "arun", "get_backend", "run", "run_many"]

BACKENDS = ("local", "docker", "remote")
_backends: dict[str, Any] = {}
_backends_lock = threading.Lock()


class Backend(Protocol):
    """What ``run`` needs from a backend: queue a checked request, get a future of an ExecResult."""

    name: str

    def submit(self, request: dict[str, Any]): ...

    def close(self) -> None: ...


def get_backend(backend: str | Backend | None = None) -> Backend:
    """The shared backend instance for a name (started on first use), or ``backend`` itself."""
    if backend is not None and not isinstance(backend, str):
        return backend
    name = backend or os.environ.get("ENVGYM_SANDBOX_BACKEND", "local")
    if name not in BACKENDS:
        raise ValueError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)} or pass an instance")
    with _backends_lock:
        if name not in _backends:
            _backends[name] = _create(name)
        return _backends[name]


def _create(name: str) -> Backend:
    if name == "local":
        from envgym.sandbox.local import LocalBackend

        return LocalBackend()
    if name == "docker":
        from envgym.sandbox.docker import DockerBackend

        return DockerBackend()
    from envgym.sandbox.remote import RemoteBackend

    return RemoteBackend()


def run(
    code: str,
    *,
    language: str = "python",
    stdin: str = "",
    files: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    memory_mb: int = 512,
    backend: str | Backend | None = None,
) -> ExecResult:
    """Run one program and wait for its :class:`ExecResult` (never raises for the program's faults)."""
    request = make_request(code, language=language, stdin=stdin, files=files, timeout=timeout, memory_mb=memory_mb)
    return get_backend(backend).submit(request).result()


def run_many(
    jobs: Iterable[str | Mapping[str, Any]], *, backend: str | Backend | None = None, **defaults: Any
) -> list[ExecResult]:
    """Run many programs concurrently (bounded by the backend); results come back in input order.

    Each job is a code string or a dict of ``run`` keyword arguments (``{"code": ..., "stdin": ...}``);
    ``defaults`` fill in what a job leaves out.
    """
    chosen = get_backend(backend)
    requests = []
    for job in jobs:
        arguments = {**defaults, **({"code": job} if isinstance(job, str) else dict(job))}
        requests.append(make_request(arguments.pop("code"), **arguments))
    futures = [chosen.submit(request) for request in requests]
    return [future.result() for future in futures]


async def arun(
    code: str,
    *,
    language: str = "python",
    stdin: str = "",
    files: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    memory_mb: int = 512,
    backend: str | Backend | None = None,
) -> ExecResult:
    """``run`` for asyncio code: awaits the result without blocking the event loop."""
    request = make_request(code, language=language, stdin=stdin, files=files, timeout=timeout, memory_mb=memory_mb)
    return await asyncio.wrap_future(get_backend(backend).submit(request))

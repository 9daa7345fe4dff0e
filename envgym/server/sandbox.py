"""`envgym serve sandbox`: the sandbox over HTTP, speaking SandboxFusion's ``POST /run_code``.

Endpoints:
- ``POST /run_code``: SandboxFusion's request/response (``code, language, stdin, run_timeout,
  compile_timeout, memory_limit_MB, files`` as base64 text files); the ``sandbox-fusion`` client and verl's
  SandboxFusion tool work unchanged. ``fetch_files`` is accepted and answered with no files.
- ``POST /v1/run``: envgym's own request (``make_request`` fields) and ``ExecResult``; ``backend="remote"``
  uses it.
- ``GET /v1/ping``: liveness and what protects the jobs.

It binds 127.0.0.1 unless told otherwise, can require ``Authorization: Bearer <token>``, refuses bodies
over ``max_request_mb`` and runs at most ``max_concurrency`` jobs at once (the others wait their turn).
This module stays light (the CLI imports it); FastAPI is imported when the app is built.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

SF_LANGUAGES = {"python": "python", "python3": "python", "bash": "bash", "cpp": "cpp", "c": "c"}


def create_app(
    backend: Any = None, *, token: str | None = None, max_concurrency: int = 64, max_request_mb: float = 16.0
):
    """The FastAPI app serving ``backend`` (a name or instance, default ``local``)."""
    import asyncio

    from fastapi import FastAPI, HTTPException, Request
    from fastapi.responses import JSONResponse

    from envgym.sandbox import get_backend
    from envgym.sandbox.result import ExecResult, make_request

    chosen = get_backend(backend)
    gate = asyncio.Semaphore(max_concurrency)
    limit = int(max_request_mb * 1024 * 1024)
    app = FastAPI(title="envgym sandbox", description=__doc__)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if token is not None and request.headers.get("authorization") != f"Bearer {token}":
            return JSONResponse({"detail": "missing or wrong bearer token"}, status_code=401)
        size = request.headers.get("content-length")
        if size is not None and int(size) > limit:
            return JSONResponse({"detail": f"request body over {max_request_mb:g} MB"}, status_code=413)
        return await call_next(request)

    async def execute(arguments: dict[str, Any]) -> ExecResult:
        try:
            request = make_request(**arguments)
        except (TypeError, ValueError) as error:
            raise HTTPException(status_code=400, detail=str(error)) from None
        async with gate:
            return await asyncio.wrap_future(chosen.submit(request))

    @app.get("/v1/ping")
    async def ping() -> dict[str, Any]:
        describe = getattr(chosen, "describe", None)
        return {"status": "ok", "backend": describe() if describe else {"backend": chosen.name}}

    @app.post("/v1/run")
    async def run_native(body: dict[str, Any]) -> dict[str, Any]:
        allowed = {"code", "language", "stdin", "files", "timeout", "memory_mb"}
        unknown = set(body) - allowed
        if unknown:
            raise HTTPException(
                status_code=400, detail=f"unknown fields {sorted(unknown)}; accepted: {sorted(allowed)}"
            )
        return (await execute(body)).to_dict()

    @app.post("/run_code")
    async def run_code(body: dict[str, Any]) -> dict[str, Any]:
        language = SF_LANGUAGES.get(str(body.get("language")))
        if language is None:
            raise HTTPException(
                status_code=400,
                detail=f"language {body.get('language')!r} is not supported here; supported: {sorted(SF_LANGUAGES)}",
            )
        timeout = float(body.get("run_timeout") or 10)
        if language in ("c", "cpp"):
            timeout += float(body.get("compile_timeout") or 10)
        arguments = {
            "code": body.get("code"),
            "language": language,
            "stdin": body.get("stdin") or "",
            "files": _decode_files(body.get("files") or {}),
            "timeout": timeout,
            "memory_mb": int(body.get("memory_limit_MB") or 1024),
        }
        return _to_sandbox_fusion(await execute(arguments))

    return app


def _decode_files(files: dict[str, str | None]) -> dict[str, str]:
    from fastapi import HTTPException

    decoded = {}
    for name, content in files.items():
        if content is None:
            continue
        try:
            decoded[name] = base64.b64decode(content, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise HTTPException(
                status_code=400, detail=f"file {name!r}: content must be base64 of UTF-8 text"
            ) from None
    return decoded


def _to_sandbox_fusion(result) -> dict[str, Any]:
    """An ExecResult in SandboxFusion's RunCodeResponse shape."""
    if result.status == "infra_error":
        return {
            "status": "SandboxError",
            "message": result.stderr,
            "compile_result": None,
            "run_result": None,
            "executor_pod_name": None,
            "files": {},
        }
    run_status = "TimeLimitExceeded" if result.status == "timeout" else "Finished"
    run_result = {
        "status": run_status,
        "execution_time": result.wall_s,
        "cpu_time": result.cpu_s,
        "return_code": None if result.status == "timeout" else result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
    }
    message = "" if result.status in ("ok", "error", "timeout") else result.status
    return {
        "status": "Success" if result.status == "ok" else "Failed",
        "message": message,
        "compile_result": None,
        "run_result": run_result,
        "executor_pod_name": None,
        "files": {},
    }

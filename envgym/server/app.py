"""The env server: envgym envs as stateful HTTP sessions (``envgym serve env``).

    POST   /sessions                 {"env_id", "kwargs"}            -> {"session_id", "token", ...}
    POST   /sessions/{id}/reset      {"seed", "options", "request_id"} -> {"messages", "info"}
    POST   /sessions/{id}/step       {"action", "request_id"}          -> {"messages", "reward", "terminated",
                                                                        "truncated", "info"}
    GET    /sessions/{id}                                              -> session facts (steps, idle time, worker pid)
    DELETE /sessions/{id}
    GET    /envs, GET /health, GET /openapi.json, GET /docs
    /openenv/{env_id}/...        every env as an OpenEnv environment (WebSocket /ws, /reset, /schema...;
                                 see envgym.server.openenv_app and docs/openenv.md)

Session calls carry the session's token in ``X-Session-Token``. With ``token`` set, every call but
``/health`` (WebSocket handshakes included) also needs ``Authorization: Bearer TOKEN``. Bodies over
``max_body_bytes`` are refused (413) before they are read. Errors are always JSON: ``{"error": code,
"message": what was wrong and what to do}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import time
from typing import Any

from fastapi import FastAPI, Header
from fastapi.openapi.utils import get_openapi

from envgym.server.errors import exception_handlers, send_error
from envgym.server.fast_lane import FastLane, document
from envgym.server.openenv_app import OpenEnvRoutes
from envgym.server.protocol import CreateSession, ErrorBody, ServerError, SessionCreated
from envgym.server.sessions import SessionManager
from envgym.server.workers import make_workers


@dataclasses.dataclass
class ServerSettings:
    """How the env server runs. The defaults are safe for one machine: loopback only, bounded, reaped."""

    host: str = "127.0.0.1"
    """Interface to bind; 0.0.0.0 exposes the server to the network (then set ``token``)."""
    port: int = 8000
    workers: str = "process"
    """``process``: envs in worker processes (parallel CPU, crash isolation); ``thread``: in this process."""
    num_workers: int | None = None
    """Worker processes or threads; default: the CPU count."""
    max_sessions: int = 1024
    """Open sessions allowed at once; one more is refused with 503 ``at_capacity``."""
    idle_timeout_s: float | None = 600.0
    """A session without a call for this long is closed and its capacity freed (None or 0: never)."""
    token: str | None = None
    """If set, every call but ``/health`` needs ``Authorization: Bearer TOKEN``."""
    max_body_bytes: int = 2 * 1024 * 1024
    """Larger request bodies are refused with 413."""


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (400, 401, 403, 404, 409, 410, 413, 422, 500, 503)
}


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """The ASGI app. Workers start with the app's lifespan and stop with it."""
    settings = settings or ServerSettings()
    holder: dict[str, SessionManager] = {}
    started = time.monotonic()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        workers = make_workers(settings.workers, settings.num_workers)
        manager = holder["sessions"] = SessionManager(workers, settings.max_sessions, settings.idle_timeout_s)
        reaper = asyncio.create_task(manager.reap_forever())
        try:
            yield
        finally:
            reaper.cancel()
            await workers.shutdown()

    app = FastAPI(
        title="envgym env server",
        version="1",
        description=__doc__,
        lifespan=lifespan,
        responses=_ERRORS,
        exception_handlers=exception_handlers(hint=" (see /docs)"),
    )
    app.add_middleware(OpenEnvRoutes, sessions=lambda: holder["sessions"])  # /openenv/{env_id}/...
    app.add_middleware(FastLane, sessions=lambda: holder["sessions"])  # outside OpenEnvRoutes: per-turn routes first
    app.add_middleware(Guard, token=settings.token, max_body_bytes=settings.max_body_bytes)  # outermost

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            errors = {
                str(status): {
                    "description": "Error",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
                }
                for status in _ERRORS
            }
            app.openapi_schema = document(schema, errors)
        return app.openapi_schema

    app.openapi = openapi

    def sessions() -> SessionManager:
        return holder["sessions"]

    @app.get("/health", summary="Liveness and load")
    async def health() -> dict[str, Any]:
        manager = sessions()
        return {
            "status": "ok",
            "sessions": len(manager.sessions),
            "max_sessions": manager.max_sessions,
            "idle_timeout_s": manager.idle_timeout_s,
            "workers": {"kind": manager.workers.kind, "count": manager.workers.num_workers},
            "uptime_s": time.monotonic() - started,
        }

    @app.get("/envs", summary="The envs this server can run (the registry)")
    async def envs() -> list[dict[str, Any]]:
        import envgym

        return [spec.to_dict() for spec in envgym.list_envs()]

    @app.post("/sessions", status_code=201, response_model=SessionCreated, summary="Open a session")
    async def create_session(body: CreateSession) -> Any:
        session = await sessions().create(body.env_id, body.kwargs, body.request_id)
        return SessionCreated(
            session_id=session.id, token=session.token, env_id=session.env_id, idle_timeout_s=sessions().idle_timeout_s
        )

    @app.get("/sessions/{session_id}", summary="Facts about a session")
    async def describe(session_id: str, x_session_token: str | None = Header(None)) -> dict[str, Any]:
        manager = sessions()
        return manager.describe(manager.get(session_id, x_session_token))

    @app.delete("/sessions/{session_id}", summary="Close a session and free its capacity")
    async def close(session_id: str, x_session_token: str | None = Header(None)) -> dict[str, Any]:
        manager = sessions()
        await manager.close(manager.get(session_id, x_session_token), "it was closed by its client")
        return {"session_id": session_id, "closed": True}

    return app


class Guard:
    """ASGI middleware in front of every route: bearer token and request size.

    Plain ASGI (not Starlette's BaseHTTPMiddleware) so it costs microseconds per request. A body announced
    larger than the limit is refused before it is read; a chunked one is cut off once it passes the limit."""

    def __init__(self, app: Any, token: str | None, max_body_bytes: int):
        self.app, self.token, self.max_body_bytes = app, token, max_body_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            return await self._websocket(scope, receive, send)
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if self.token is not None and scope["path"] != "/health":
            refusal = self._refusal(headers)
            if refusal is not None:
                return await send_error(send, refusal)
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            return await send_error(send, ServerError("body_too_large", self._too_large(int(length))))
        if length is not None:
            return await self.app(scope, receive, send)
        return await self._limited(scope, receive, send)

    def _refusal(self, headers: dict[bytes, bytes]) -> ServerError | None:
        """The error when the bearer token is missing or wrong; None when it is right."""
        given = headers.get(b"authorization", b"")
        if not given:
            return ServerError("unauthorized", "this server needs 'Authorization: Bearer TOKEN'")
        if not hmac.compare_digest(given, b"Bearer " + (self.token or "").encode()):
            return ServerError("forbidden", "the bearer token in the Authorization header is wrong")
        return None

    async def _websocket(self, scope: dict, receive: Any, send: Any) -> None:
        """A handshake without the right token is refused (HTTP 403) before any app code runs. Message sizes
        are bounded by the server's ``ws_max_size`` (set to ``max_body_bytes``)."""
        if self.token is not None and self._refusal(dict(scope["headers"])) is not None:
            await receive()  # the websocket.connect event
            return await send({"type": "websocket.close", "code": 1008})
        await self.app(scope, receive, send)

    async def _limited(self, scope: dict, receive: Any, send: Any) -> None:
        """A body without Content-Length is counted as it arrives."""
        state = {"received": 0, "answered": False}

        async def counted_receive() -> dict:
            message = await receive()
            state["received"] += len(message.get("body", b""))
            if state["received"] > self.max_body_bytes and not state["answered"]:
                state["answered"] = True
                await send_error(send, ServerError("body_too_large", self._too_large(state["received"])))
                return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict) -> None:
            if not state["answered"]:
                await send(message)

        await self.app(scope, counted_receive, guarded_send)

    def _too_large(self, size: int) -> str:
        return f"the request body ({size} bytes so far) is over this server's limit of {self.max_body_bytes} bytes"

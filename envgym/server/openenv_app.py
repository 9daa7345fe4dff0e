"""Every env of the env server as an OpenEnv environment, at ``/openenv/{env_id}``.

An OpenEnv server serves one environment at its root; the env server serves all registered envs, so each gets
its own OpenEnv root, e.g. ``http://127.0.0.1:8000/openenv/games/GuessNumber-v0``, which is the ``base_url``
to give OpenEnv's clients and ``openenv validate``. Under it, as OpenEnv 0.10 defines them:

    WS   /ws            the episode: {"type": "reset"|"step"|"state"|"close"|"mcp", "data": ...} messages, one
                        env session per connection (OpenEnv's EnvClient plays here)
    POST /reset         stateless, as in OpenEnv: a fresh env answers the first observation and is closed
    POST /step          stateless in OpenEnv (a fresh env per call); an envgym env only steps inside an episode,
                        so this answers 409 ``reset_needed`` pointing to /ws
    GET  /state, /health, /schema, /metadata, /openapi.json, /docs;  POST /mcp (JSON-RPC)

Episodes run in the same session manager and workers as the envgym protocol (the same capacity, idle
reaping and crash isolation); the workers encode OpenEnv's observations (see :mod:`.openenv_protocol`).
Requests reach this app through :class:`OpenEnvRoutes`, which sits behind the fast lane, so the envgym
protocol's per-turn routes never pass through it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

from fastapi import Body, FastAPI, Request, WebSocket
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import ValidationError

from envgym.server.errors import exception_handlers, validation_error
from envgym.server.openenv_protocol import (
    OPENENV_API_VERSION,
    ChatAction,
    EpisodeState,
    ObservationResponse,
    ResetKwargs,
    StepBody,
    schemas,
)
from envgym.server.protocol import ServerError
from envgym.server.sessions import SessionManager, env_spec

PREFIX = "/openenv"
_ROUTE = re.compile(
    r"^/openenv/(?P<env_id>.+?)(?P<endpoint>/(?:reset|step|state|health|schema|metadata|mcp|ws|openapi\.json|docs))/?$"
)
_ENV_ID_KEY = "envgym.env_id"  # where the routes find the env id in the ASGI scope
_JSON = "application/json"


class OpenEnvRoutes:
    """ASGI middleware: ``/openenv/{env_id}/{endpoint}`` goes to the OpenEnv app with the env id in the scope
    and ``/openenv/{env_id}`` as its root path; every other request goes on to ``app``."""

    def __init__(self, app: Any, sessions: Callable[[], SessionManager]):
        self.app = app
        self.openenv = create_openenv_app(sessions)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] not in ("http", "websocket") or not (path == PREFIX or path.startswith(PREFIX + "/")):
            return await self.app(scope, receive, send)
        match = _ROUTE.match(path)
        if match is None:
            return await _not_found(scope, receive, send, path)
        env_id = match["env_id"]
        root_path = scope.get("root_path", "") + f"{PREFIX}/{env_id}"
        await self.openenv({**scope, "root_path": root_path, _ENV_ID_KEY: env_id}, receive, send)


async def _not_found(scope: dict, receive: Any, send: Any, path: str) -> None:
    message = (
        f"no OpenEnv endpoint at {path}: each env's OpenEnv root is /openenv/ENV_ID (e.g. "
        f"/openenv/games/GuessNumber-v0), with /ws, /reset, /step, /state, /health, /schema, /metadata, "
        f"/mcp, /openapi.json and /docs under it"
    )
    if scope["type"] == "websocket":
        await receive()  # the websocket.connect event
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
        return
    response = JSONResponse({"error": "route_not_found", "message": message}, status_code=404)
    await response(scope, receive, send)


def create_openenv_app(sessions: Callable[[], SessionManager]) -> FastAPI:
    """The OpenEnv routes of one env (the env id comes from the scope, put there by :class:`OpenEnvRoutes`)."""
    app = FastAPI(
        title="envgym env (OpenEnv protocol)",
        version=OPENENV_API_VERSION,
        description=__doc__,
        openapi_url=None,  # served per env below: FastAPI's own caches one schema and one server URL for all
        docs_url=None,
        redoc_url=None,
        exception_handlers=exception_handlers(),
    )

    @app.post(
        "/reset",
        response_model=ObservationResponse,
        summary="Start an episode (stateless: answers its first observation)",
    )
    async def reset(request: Request, body: ResetKwargs = Body(default_factory=ResetKwargs)) -> Response:
        manager = sessions()
        session = await manager.create(_env_id(request), {}, None)
        try:
            answer = await manager.reset(session, body.seed, body.envgym_options(), None, wire="openenv")
        finally:
            await manager.close(session, "it answered one stateless OpenEnv /reset")
        return Response(answer, media_type=_JSON)

    @app.post(
        "/step",
        summary="Stateless step: answers 409 reset_needed (episodes play over /ws)",
        responses={409: {"description": "An envgym env only steps inside an episode: use /ws"}},
    )
    async def step(request: Request, body: StepBody) -> Response:
        raise ServerError(
            "reset_needed",
            f"OpenEnv's HTTP /step is stateless (every call gets a fresh env), and envgym env {_env_id(request)} "
            f"only steps inside an episode started by reset. Play episodes over the WebSocket "
            f"{request.scope['root_path']}/ws (OpenEnv's EnvClient does), or over envgym's sessions (POST /sessions).",
        )

    @app.get("/state", response_model=EpisodeState, summary="State of a fresh env (stateless; /ws has the episode's)")
    async def state(request: Request) -> dict[str, Any]:
        return EpisodeState(env_id=_env_id(request)).model_dump()

    @app.get("/health", summary="OpenEnv health check")
    async def health(request: Request) -> dict[str, str]:
        _env_id(request)
        return {"status": "healthy"}

    @app.get("/schema", summary="JSON schemas of the action, observation and state")
    async def schema(request: Request) -> dict[str, Any]:
        _env_id(request)
        return schemas()

    @app.get("/metadata", summary="Name and description of the env")
    async def metadata(request: Request) -> dict[str, Any]:
        spec = env_spec(_env_id(request))
        return {
            "name": spec.id,
            "description": spec.description or f"envgym env {spec.id}",
            "version": f"v{spec.version}",
            "documentation_url": None,
            "readme_content": None,
            "author": None,
        }

    @app.post("/mcp", summary="MCP JSON-RPC (tool calls travel inside the assistant's turn instead)")
    async def mcp(request: Request) -> dict[str, Any]:
        env_id = _env_id(request)
        try:
            rpc = json.loads(await request.body())
        except ValueError:
            return _rpc_error(None, -32700, "Parse error: the body is not JSON")
        return answer_jsonrpc(rpc, env_id)

    @app.websocket("/ws")
    async def websocket(socket: WebSocket) -> None:
        await socket.accept()
        await _play(socket, sessions())

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(request: Request) -> dict[str, Any]:
        schema = dict(app.openapi())
        schema["info"] = {**schema["info"], "title": f"{_env_id(request)} (envgym env, OpenEnv protocol)"}
        schema["servers"] = [{"url": request.scope["root_path"]}]
        return schema

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=request.scope["root_path"] + "/openapi.json", title=f"{_env_id(request)} over OpenEnv"
        )

    return app


def _env_id(request: Request | WebSocket) -> str:
    env_id = request.scope[_ENV_ID_KEY]
    env_spec(env_id)  # unknown ids answer 404 unknown_env
    return env_id


def answer_jsonrpc(rpc: Any, env_id: str) -> dict[str, Any]:
    """OpenEnv's ``/mcp`` answers an env without MCP tools with a JSON-RPC error; so does this, saying where
    the tools are: in the assistant's turn (``tool_calls``), or in ``envgym serve tools``."""
    if not isinstance(rpc, dict) or rpc.get("jsonrpc") != "2.0" or not isinstance(rpc.get("method"), str):
        request_id = rpc.get("id") if isinstance(rpc, dict) else None
        return _rpc_error(request_id, -32600, 'Invalid Request: expected {"jsonrpc": "2.0", "method": ..., "id": ...}')
    return _rpc_error(
        rpc.get("id"),
        -32601,
        f"Method not found: {rpc['method']}. envgym env {env_id} takes tool calls inside the assistant's turn: "
        f'step with {{"message": ..., "tool_calls": [...]}} (reset\'s metadata[\'tools\'] lists the tools). '
        f"`envgym serve tools {env_id}` serves its tools as an MCP server.",
    )


def _rpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": request_id}


# envgym error code -> OpenEnv's WebSocket error code.
_WS_CODES = {
    "invalid_request": "VALIDATION_ERROR",
    "invalid_action": "VALIDATION_ERROR",
    "invalid_options": "VALIDATION_ERROR",
    "malformed_json": "INVALID_JSON",
    "at_capacity": "CAPACITY_REACHED",
    "unknown_env": "FACTORY_ERROR",
    "invalid_env_kwargs": "FACTORY_ERROR",
    "session_gone": "SESSION_ERROR",
}


async def _play(socket: WebSocket, manager: SessionManager) -> None:
    """One OpenEnv session: an env session opened with the connection and closed with it."""
    try:
        session = await manager.create(_env_id(socket), {}, None)
    except ServerError as error:
        await _send(socket, _ws_error(error))
        await socket.close(1011 if error.status >= 500 else 1008)
        return
    episode = EpisodeState(env_id=session.env_id)
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text") if message.get("text") is not None else message.get("bytes", b"")
            try:
                reply = await _answer(raw, manager, session, episode)
            except ServerError as error:
                await _send(socket, _ws_error(error))
                if error.code == "session_gone":  # the env state is lost (idle reaping, dead worker)
                    await socket.close(1011)
                    return
                continue
            if reply is None:  # {"type": "close"}
                await socket.close()
                return
            await _send(socket, reply)
    finally:
        await manager.close(session, "its OpenEnv WebSocket closed")


async def _answer(raw: str | bytes, manager: SessionManager, session: Any, episode: EpisodeState) -> bytes | None:
    try:
        message = json.loads(raw)
    except ValueError as error:
        raise ServerError("malformed_json", f"the message is not valid JSON ({error})") from None
    if not isinstance(message, dict):
        raise ServerError(
            "invalid_request", f"a message must be a JSON object with a 'type', got {type(message).__name__}"
        )
    kind, data = message.get("type"), message.get("data", {})
    if kind == "step":
        action = _parse(ChatAction, data, "data")
        answer = await manager.step(session, action.to_envgym(), None, wire="openenv")
        episode.step_count += 1
        return b'{"type":"observation","data":' + answer + b"}"
    if kind == "reset":
        kwargs = _parse(ResetKwargs, data, "data")
        answer = await manager.reset(session, kwargs.seed, kwargs.envgym_options(), None, wire="openenv")
        episode.episode_id, episode.step_count = kwargs.episode_id or uuid.uuid4().hex, 0
        return b'{"type":"observation","data":' + answer + b"}"
    if kind == "state":
        return json.dumps({"type": "state", "data": episode.model_dump()}).encode()
    if kind == "close":
        return None
    if kind == "mcp":
        return json.dumps({"type": "mcp", "data": answer_jsonrpc(data, session.env_id)}).encode()
    raise ServerError(
        "invalid_request", f"unknown message type {kind!r}; OpenEnv's are reset, step, state, close and mcp"
    )


def _parse(model: Any, data: Any, where: str) -> Any:
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as error:
        raise validation_error(error.errors(include_url=False), prefix=(where,)) from None


def _ws_error(error: ServerError) -> bytes:
    code = _WS_CODES.get(error.code, "EXECUTION_ERROR")
    return json.dumps({"type": "error", "data": {"message": error.message, "code": code, "error": error.code}}).encode()


async def _send(socket: WebSocket, reply: bytes) -> None:
    await socket.send({"type": "websocket.send", "text": reply.decode()})

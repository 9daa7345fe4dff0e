"""The per-turn routes (``POST /sessions/{id}/step`` and ``/reset``, and both over ``/sessions/{id}/ws``) as plain
ASGI, in front of FastAPI.

Every turn of every episode crosses these two routes, and FastAPI's per-request machinery (dependency
solving, exit stacks, response wrapping) costs about 90-130 us each, a third of what the server spends on a
step. Here they cost about 10 us, with the same pydantic models, the same session manager and the same
error bodies; FastAPI serves every other route, and :func:`document` puts these two in its OpenAPI schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from envgym.server.errors import validation_error
from envgym.server.protocol import ResetRequest, ResetResult, ServerError, StepRequest, StepResult
from envgym.server.sessions import SessionManager

_ROUTE = re.compile(r"^/sessions/([^/]+)/(step|reset)$")
_SOCKET = re.compile(r"^/sessions/([^/]+)/ws$")
_JSON = [(b"content-type", b"application/json")]


class FastLane:
    """ASGI middleware answering the step and reset routes itself; everything else goes on to ``app``."""

    def __init__(self, app: Any, sessions: Callable[[], SessionManager]):
        self.app, self.sessions = app, sessions

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and (socket := _SOCKET.match(scope["path"])) is not None:
            return await self._socket(socket.group(1), scope, receive, send)
        match = _ROUTE.match(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if match is None:
            return await self.app(scope, receive, send)
        session_id, op = match.groups()
        try:
            body = await _read_body(receive)
            if body is None:
                return  # the client went away mid-request
            token = _header(scope, b"x-session-token")
            status, answer = 200, await self._answer(session_id, op, body, token)
        except ServerError as error:
            status, answer = error.status, error.body()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [*_JSON, (b"content-length", str(len(answer)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    async def _answer(self, session_id: str, op: str, body: bytes, token: str | None) -> bytes:
        manager = self.sessions()
        session = manager.get(session_id, token)
        if op == "step":
            step = _parse(StepRequest, body)
            return await manager.step(session, step.action, step.request_id)
        reset = _parse(ResetRequest, body)
        return await manager.reset(session, reset.seed, reset.options, reset.request_id)

    async def _socket(self, session_id: str, scope: dict, receive: Any, send: Any) -> None:
        """``/sessions/{id}/ws``: the step and reset routes over one WebSocket, for clients that step fast.

        Each text frame is ``{"op": "step" | "reset", ...}`` with the HTTP route's body beside ``op``; each
        answer is ``{"status": S, "body": B}`` where ``S`` and ``B`` are what the HTTP route would have
        answered. The session is looked up per frame, so a reaped or closed session answers ``session_gone``
        just as over HTTP; frames are answered in order, one at a time."""
        token = _header(scope, b"x-session-token")
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return  # websocket.disconnect
            frame = message.get("text") or message.get("bytes") or b""
            try:
                op, body = _split_frame(frame.encode() if isinstance(frame, str) else frame)
                status, answer = 200, await self._answer(session_id, op, body, token)
            except ServerError as error:
                status, answer = error.status, error.body()
            await send({"type": "websocket.send", "text": f'{{"status":{status},"body":{answer.decode()}}}'})


def _split_frame(frame: bytes) -> tuple[str, bytes]:
    """The op of a WebSocket frame and the rest of it as the HTTP route's body."""
    try:
        data = json.loads(frame)
    except ValueError as error:
        raise ServerError("malformed_json", f"the frame is not valid JSON ({error})") from None
    if not isinstance(data, dict) or data.get("op") not in ("step", "reset"):
        raise ServerError("invalid_request", 'a frame is a JSON object whose "op" is "step" or "reset"')
    op = data.pop("op")
    return op, json.dumps(data).encode()


def _parse(model: type[BaseModel], body: bytes) -> Any:
    try:
        return model.model_validate_json(body or b"{}")
    except ValidationError as error:
        raise validation_error(error.errors(include_url=False), prefix=("body",)) from None


async def _read_body(receive: Any) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def document(schema: dict[str, Any], error_responses: dict[str, Any]) -> dict[str, Any]:
    """Add the fast-lane routes to FastAPI's OpenAPI ``schema`` (FastAPI only documents its own routes)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in (StepRequest, StepResult, ResetRequest, ResetResult):
        model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(model_schema.pop("$defs", {}))
        components[model.__name__] = model_schema
    for op, request, result, summary in (
        ("step", StepRequest, StepResult, "Play one assistant turn"),
        ("reset", ResetRequest, ResetResult, "Start an episode"),
    ):
        schema["paths"][f"/sessions/{{session_id}}/{op}"] = {
            "post": {
                "summary": summary,
                "operationId": f"{op}_session",
                "parameters": [
                    {"name": "session_id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "x-session-token", "in": "header", "required": True, "schema": {"type": "string"}},
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{request.__name__}"}}},
                },
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {
                            "application/json": {"schema": {"$ref": f"#/components/schemas/{result.__name__}"}}
                        },
                    },
                    **error_responses,
                },
            }
        }
    return schema

"""How the env server answers errors, for both of its protocol families (envgym's sessions and OpenEnv's routes):
``{"error": code, "message": what was wrong and what to do}`` with the code's HTTP status, whether the error is
raised in a route (FastAPI's handlers), found by the ASGI layer in front of the routes, or a request that does not
match its schema. WebSocket frames carry the same code in each family's own envelope."""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.requests import Request

from envgym.server.protocol import ServerError


def exception_handlers(hint: str = "") -> dict[Any, Any]:
    """FastAPI's ``exception_handlers`` for an app of the server: a :class:`ServerError` as its body, a request
    that fails its schema as ``invalid_request`` (or ``malformed_json``), an unknown route or method as
    ``route_not_found``/``method_not_allowed``; ``hint`` ends those last messages (e.g. where the docs are)."""

    async def server_error(request: Request, error: ServerError) -> Response:
        return error_response(error)

    async def invalid_request(request: Request, error: RequestValidationError) -> Response:
        return error_response(validation_error(list(error.errors())))

    async def http_error(request: Request, error: HTTPException) -> Response:
        code = {404: "route_not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        message = f"{error.detail}: {request.method} {request.url.path}{hint}"
        return JSONResponse({"error": code, "message": message}, status_code=error.status_code)

    return {ServerError: server_error, RequestValidationError: invalid_request, HTTPException: http_error}


def error_response(error: ServerError) -> Response:
    return Response(error.body(), status_code=error.status, media_type="application/json", headers=error.headers)


async def send_error(send: Any, error: ServerError) -> None:
    """Answer an HTTP request with ``error`` from plain ASGI (middleware in front of the routes)."""
    body = error.body()
    await send(
        {
            "type": "http.response.start",
            "status": error.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *((key.lower().encode(), value.encode()) for key, value in error.headers.items()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def validation_error(problems: list[dict[str, Any]], prefix: tuple = ()) -> ServerError:
    """The one wording of request validation errors, from pydantic's list of problems."""
    if any(p.get("type") == "json_invalid" for p in problems):
        detail = problems[0].get("ctx", {}).get("error", "parse error")
        return ServerError("malformed_json", f"the request body is not valid JSON ({detail})")
    text = "; ".join(
        f"{'.'.join(str(part) for part in (*prefix, *p.get('loc', ())))}: {p.get('msg')}" for p in problems
    )
    return ServerError("invalid_request", f"the request does not match the schema (see /openapi.json): {text}")

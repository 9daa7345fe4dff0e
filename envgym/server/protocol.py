"""The wire protocol shared by the env server and :class:`~envgym.remote.RemoteEnv`.

Requests and responses are JSON. Every error is ``{"error": CODE, "message": TEXT}`` with a fixed HTTP status
per code, so a client can turn it back into the same exception the env raised in process (``ResetNeeded``,
``InvalidAction``...) and a person reading a log sees what was wrong and what to do.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from envgym.episode import to_jsonable
from envgym.remote import SESSION_TOKEN_HEADER


class CreateSession(BaseModel):
    """Open a session: one env instance that lives on the server until closed or reaped."""

    env_id: str = Field(description="A registered env id (`GET /envs`), e.g. 'games/GuessNumber-v0'.")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for envgym.make.")
    request_id: str | None = Field(None, description="Retry key: the same id twice opens one session.")


class SessionCreated(BaseModel):
    session_id: str
    token: str = Field(description=f"Send it back in the {SESSION_TOKEN_HEADER} header on every call.")
    env_id: str
    idle_timeout_s: float | None = Field(description="The session is closed after this long without a call.")


class ResetRequest(BaseModel):
    seed: int | None = None
    options: dict[str, Any] | None = Field(
        None, description="Env reset options, e.g. {'task_index': 3}; {'task': {...}} plays a given Task."
    )
    request_id: str | None = Field(None, description="Retry key: a reset repeated with the same id is answered once.")


class ResetResult(BaseModel):
    messages: list[dict[str, Any]]
    info: dict[str, Any]


class StepRequest(BaseModel):
    action: str | dict[str, Any] = Field(description="The assistant's text, or an assistant message dict.")
    request_id: str | None = Field(None, description="Retry key: a step repeated with the same id is applied once.")


class StepResult(BaseModel):
    messages: list[dict[str, Any]]
    reward: float | None
    terminated: bool
    truncated: bool
    info: dict[str, Any] = Field(description="The env's whole info dict, converted to JSON (nothing dropped).")


class ErrorBody(BaseModel):
    error: str = Field(description="A stable code, e.g. 'session_not_found'.")
    message: str = Field(description="What went wrong and what to do about it.")


# code -> HTTP status. The client maps codes back to exceptions (see client.py).
ERROR_STATUS = {
    "malformed_json": 400,
    "invalid_request": 422,
    "invalid_action": 422,
    "invalid_options": 422,
    "invalid_env_kwargs": 422,
    "unauthorized": 401,
    "forbidden": 403,
    "unknown_env": 404,
    "session_not_found": 404,
    "reset_needed": 409,
    "session_busy": 409,
    "session_gone": 410,
    "body_too_large": 413,
    "env_error": 500,
    "at_capacity": 503,
}

# Exceptions raised inside an env, by class name -> the code they travel under.
ENV_EXCEPTION_CODES = {
    "InvalidAction": "invalid_action",
    "InvalidOptions": "invalid_options",
    "ResetNeeded": "reset_needed",
    "UnknownEnv": "unknown_env",
}


class ServerError(Exception):
    """An error the server answers with ``{"error": code, "message": message}``."""

    def __init__(self, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code, self.message, self.headers = code, message, headers or {}

    @property
    def status(self) -> int:
        return ERROR_STATUS[self.code]

    def body(self) -> bytes:
        return json.dumps({"error": self.code, "message": self.message}).encode()


def encode(value: Any) -> bytes:
    """JSON bytes of any env output: numpy values, tuples and dataclasses converted, NaN as null."""
    return json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":")).encode()


def encode_step(result: tuple) -> bytes:
    messages, reward, terminated, truncated, info = result
    return encode(
        {"messages": messages, "reward": reward, "terminated": terminated, "truncated": truncated, "info": info}
    )


def encode_reset(result: tuple) -> bytes:
    messages, info = result
    return encode({"messages": messages, "info": info})

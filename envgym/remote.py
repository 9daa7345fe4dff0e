"""RemoteEnv: an env that lives on an env server, behind the ordinary Env API (sync and async).

    env = envgym.RemoteEnv("http://gpu-box:8000", "games/GuessNumber-v0", token="...")
    messages, info = env.reset(seed=0)
    messages, reward, terminated, truncated, info = env.step("<guess>50</guess>")

The session is opened on the first reset and closed by ``close()``. Errors come back as the exceptions the
env raised on the server (``ResetNeeded``, ``InvalidAction``, ``InvalidOptions``, ``UnknownEnv``); a session
the server no longer has (it restarted, reaped the session, or lost its worker) raises :class:`SessionLost`,
and the next ``reset`` opens a fresh session by itself.

Retries are safe because every create, reset and step carries a request id: a request whose answer was lost
is sent again with the same id, and the server answers it from memory instead of stepping twice. Requests go
through httpx's connection pool (httpcore) directly, which costs about half the CPU per request of
``httpx.AsyncClient`` at 64 concurrent sessions; that is what lets one client drive a fast server.

``transport="websocket"`` sends resets and steps over one WebSocket per session (``/sessions/{id}/ws``, the
``[server]`` extra's ``websockets`` on the client): no HTTP request to build and parse per turn, about a fifth of
the client CPU per step. Same answers, errors, request ids and retries (a dropped socket is reopened and the
frame sent again); the session is still opened and closed over HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import sys
import time
import uuid
from collections.abc import Mapping
from typing import Any

import gymnasium
import httpcore

from envgym.core import (
    Action,
    Env,
    EnvGymError,
    InvalidAction,
    InvalidOptions,
    Message,
    ResetNeeded,
    StepResult,
    Task,
    validate_action,
)
from envgym.registration import UnknownEnv

SESSION_TOKEN_HEADER = "X-Session-Token"
"""The header every call on a session carries its token in (the env server checks it: :mod:`envgym.server`)."""

_TRANSPORT_ERRORS = (httpcore.NetworkError, httpcore.TimeoutException, httpcore.RemoteProtocolError)


class RemoteEnvError(EnvGymError):
    """The env server answered with an error, or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.code = status, code


class SessionLost(RemoteEnvError):
    """The server no longer has this env's session (restart, idle timeout, dead worker); ``reset`` opens a new one."""


class ServerUnavailable(RemoteEnvError):
    """The server could not be reached, even after retries."""


_ERRORS_BY_CODE: dict[str, type[Exception]] = {
    "reset_needed": ResetNeeded,
    "invalid_action": InvalidAction,
    "invalid_options": InvalidOptions,
    "unknown_env": UnknownEnv,
    "session_not_found": SessionLost,
    "session_gone": SessionLost,
}


class RemoteEnv(Env):
    """The env ``env_id`` built on the server at ``base_url`` with ``**kwargs``.

    ``token``: the server's bearer token, if it has one. ``timeout_s``: how long one call may take (long
    verifiers need more). ``max_retries``: extra attempts after a transport failure, with exponential
    backoff from ``backoff_s``. ``transport``: ``"http"`` (a request per turn) or ``"websocket"`` (one socket
    per session for resets and steps). Every other keyword argument goes to ``envgym.make`` on the server.
    """

    def __init__(
        self,
        base_url: str,
        env_id: str,
        *,
        token: str | None = None,
        timeout_s: float = 300.0,
        max_retries: int = 3,
        backoff_s: float = 0.1,
        transport: str = "http",
        **kwargs: Any,
    ):
        if transport not in ("http", "websocket"):
            raise ValueError(f"transport must be 'http' or 'websocket', got {transport!r}")
        if transport == "websocket" and importlib.util.find_spec("websockets") is None:
            raise ImportError("transport='websocket' needs the websockets package: pip install 'envgym[server]'")
        self.transport, self.timeout_s = transport, timeout_s
        self._socket: Any = None  # (session id, connection) or (session id, loop, connection) for async
        self.base_url = base_url.rstrip("/")
        self.env_id = env_id
        self.env_kwargs = kwargs
        self.max_retries, self.backoff_s = max_retries, backoff_s
        self.session_id: str | None = None
        self._session_token: str | None = None
        self._headers = [(b"content-type", b"application/json")]
        if token:
            self._headers.append((b"authorization", f"Bearer {token}".encode()))
        self._timeouts = {
            "timeout": {"connect": min(timeout_s, 10.0), "read": timeout_s, "write": timeout_s, "pool": timeout_s}
        }
        self._sync_pool: httpcore.ConnectionPool | None = None
        self._async_pool: tuple[asyncio.AbstractEventLoop, httpcore.AsyncConnectionPool] | None = None

    # --- Env API ---------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        gymnasium.Env.reset(self, seed=seed)
        body = {"seed": seed, "options": _encode_options(options), "request_id": _request_id()}
        if self.session_id is None:
            self._open(self._call("POST", "/sessions", self._create_body()))
        try:
            answer = self._turn("reset", body)
        except SessionLost:
            self._open(self._call("POST", "/sessions", self._create_body()))
            answer = self._turn("reset", body)
        return answer["messages"], answer["info"]

    def step(self, action: Action) -> StepResult:
        self._check_action(action)
        return _step_result(self._turn("step", {"action": action, "request_id": _request_id()}))

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        gymnasium.Env.reset(self, seed=seed)
        body = {"seed": seed, "options": _encode_options(options), "request_id": _request_id()}
        if self.session_id is None:
            self._open(await self._acall("POST", "/sessions", self._create_body()))
        try:
            answer = await self._aturn("reset", body)
        except SessionLost:
            self._open(await self._acall("POST", "/sessions", self._create_body()))
            answer = await self._aturn("reset", body)
        return answer["messages"], answer["info"]

    async def astep(self, action: Action) -> StepResult:
        self._check_action(action)
        return _step_result(await self._aturn("step", {"action": action, "request_id": _request_id()}))

    def close(self) -> None:
        """Close the server-side session (best effort: a gone session or server is already closed)."""
        self._drop_socket()
        if self.session_id is not None:
            try:
                self._call("DELETE", self._path(""), None, retry=False)
            except RemoteEnvError:
                pass
            self.session_id = self._session_token = None
        if self._sync_pool is not None:
            self._sync_pool.close()
            self._sync_pool = None

    async def aclose(self) -> None:
        """``close`` without blocking the event loop."""
        await self._adrop_socket()
        if self.session_id is not None:
            try:
                await self._acall("DELETE", self._path(""), None, retry=False)
            except RemoteEnvError:
                pass
            self.session_id = self._session_token = None
        if self._async_pool is not None and self._async_pool[0] is asyncio.get_running_loop():
            await self._async_pool[1].aclose()
        self._async_pool = None

    def __repr__(self) -> str:
        return f"RemoteEnv({self.base_url!r}, {self.env_id!r}, session={self.session_id})"

    # --- plumbing --------------------------------------------------------------------------------
    def _create_body(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "kwargs": self.env_kwargs, "request_id": _request_id()}

    def _open(self, created: dict[str, Any]) -> None:
        self.session_id, self._session_token = created["session_id"], created["token"]

    def _path(self, op: str) -> str:
        if self.session_id is None:
            raise ResetNeeded("this RemoteEnv has no session yet; call reset() first")
        return f"/sessions/{self.session_id}/{op}".rstrip("/")

    @staticmethod
    def _check_action(action: Any) -> None:
        validate_action(action, sys.maxsize)  # wrong types fail here, as InvalidAction, without a round trip

    def _request_headers(self) -> list[tuple[bytes, bytes]]:
        if self._session_token is None:
            return self._headers
        return [*self._headers, (SESSION_TOKEN_HEADER.encode(), self._session_token.encode())]

    def _turn(self, op: str, body: dict[str, Any]) -> Any:
        """A reset or step, over the chosen transport."""
        if self.transport == "http":
            return self._call("POST", self._path(op), body)
        frame = json.dumps({"op": op, **body})
        for attempt in range(self.max_retries + 1):
            try:
                connection = self._sync_socket()
                connection.send(frame)
                reply = connection.recv(timeout=self.timeout_s)
            except (OSError, TimeoutError, _socket_errors()) as error:
                self._drop_socket()
                if attempt == self.max_retries:
                    raise self._unreachable("WebSocket", self._path("ws"), error, attempt) from error
                time.sleep(self.backoff_s * 2**attempt)
                continue
            return self._decode_frame(reply)

    async def _aturn(self, op: str, body: dict[str, Any]) -> Any:
        if self.transport == "http":
            return await self._acall("POST", self._path(op), body)
        frame = json.dumps({"op": op, **body})
        for attempt in range(self.max_retries + 1):
            try:
                connection = await self._async_socket()
                await connection.send(frame)
                reply = await asyncio.wait_for(connection.recv(), self.timeout_s)
            except (OSError, asyncio.TimeoutError, _socket_errors()) as error:
                await self._adrop_socket()
                if attempt == self.max_retries:
                    raise self._unreachable("WebSocket", self._path("ws"), error, attempt) from error
                await asyncio.sleep(self.backoff_s * 2**attempt)
                continue
            return self._decode_frame(reply)

    def _socket_target(self) -> tuple[str, dict[str, str]]:
        url = "ws" + self.base_url.removeprefix("http") + self._path("ws")  # http -> ws, https -> wss
        headers = {key.decode(): value.decode() for key, value in self._request_headers() if key != b"content-type"}
        return url, headers

    def _sync_socket(self) -> Any:
        if self._socket is not None and (self._socket[0] != self.session_id or len(self._socket) != 2):
            self._drop_socket()  # the session was replaced (its socket is for the old one), or the socket is async
        if self._socket is None:
            from websockets.sync.client import connect

            url, headers = self._socket_target()
            connection = connect(
                url,
                additional_headers=headers,
                open_timeout=min(self.timeout_s, 10.0),
                max_size=None,
                compression=None,
                proxy=None,
            ).__enter__()  # kept open across calls; closed by close()
            self._socket = (self.session_id, connection)
        return self._socket[1]

    async def _async_socket(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._socket is not None and (self._socket[0] != self.session_id or self._socket[1] is not loop):
            await self._adrop_socket()  # another session, or a socket of another event loop
        if self._socket is None:
            from websockets.asyncio.client import connect

            url, headers = self._socket_target()
            connection = await connect(
                url,
                additional_headers=headers,
                open_timeout=min(self.timeout_s, 10.0),
                max_size=None,
                compression=None,
                proxy=None,
            )
            self._socket = (self.session_id, loop, connection)
        return self._socket[2]

    def _drop_socket(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None and len(socket) == 2:
            socket[1].close()
        elif socket is not None and socket[1].is_running():  # an async socket: closed on its own loop
            asyncio.run_coroutine_threadsafe(socket[2].close(), socket[1])

    async def _adrop_socket(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None and len(socket) == 3 and socket[1] is asyncio.get_running_loop():
            await socket[2].close()
        elif socket is not None and len(socket) == 2:
            socket[1].close()

    def _decode_frame(self, reply: str | bytes) -> Any:
        try:
            data = json.loads(reply)
            status, body = int(data["status"]), data["body"]
        except (ValueError, TypeError, KeyError):
            raise RemoteEnvError(
                f"env server {self.base_url} sent a frame that is not an answer: {reply[:300]!r}"
            ) from None
        return self._interpret(status, body, reply)

    def _call(self, method: str, path: str, body: Any, *, retry: bool = True) -> Any:
        if self._sync_pool is None:
            self._sync_pool = httpcore.ConnectionPool(max_connections=4)
        content = b"" if body is None else json.dumps(body).encode()
        url, headers = self.base_url + path, self._request_headers()
        for attempt in range(self.max_retries + 1):
            try:
                response = self._sync_pool.request(
                    method, url, headers=headers, content=content, extensions=self._timeouts
                )
            except _TRANSPORT_ERRORS as error:
                if not retry or attempt == self.max_retries:
                    raise self._unreachable(method, path, error, attempt) from error
                time.sleep(self.backoff_s * 2**attempt)
                continue
            return self._decode(response.status, response.content)

    async def _acall(self, method: str, path: str, body: Any, *, retry: bool = True) -> Any:
        loop = asyncio.get_running_loop()
        if self._async_pool is None or self._async_pool[0] is not loop:  # a pool belongs to one event loop
            self._async_pool = (loop, httpcore.AsyncConnectionPool(max_connections=4))
        pool = self._async_pool[1]
        content = b"" if body is None else json.dumps(body).encode()
        url, headers = self.base_url + path, self._request_headers()
        for attempt in range(self.max_retries + 1):
            try:
                response = await pool.request(method, url, headers=headers, content=content, extensions=self._timeouts)
            except _TRANSPORT_ERRORS as error:
                if not retry or attempt == self.max_retries:
                    raise self._unreachable(method, path, error, attempt) from error
                await asyncio.sleep(self.backoff_s * 2**attempt)
                continue
            return self._decode(response.status, response.content)

    def _unreachable(self, method: str, path: str, error: Exception, attempt: int) -> ServerUnavailable:
        return ServerUnavailable(
            f"env server {self.base_url} did not answer {method} {path} after {attempt + 1} attempt(s): "
            f"{type(error).__name__}: {error or 'no detail'}. Is it running, and reachable from here?"
        )

    def _decode(self, status: int, content: bytes) -> Any:
        try:
            data = json.loads(content) if content else None
        except ValueError:
            data = None
        return self._interpret(status, data, content)

    def _interpret(self, status: int, data: Any, content: bytes | str) -> Any:
        """The answer's data, or the error it stands for raised."""
        if status < 400:
            return data
        if not isinstance(data, Mapping) or "error" not in data:
            raise RemoteEnvError(f"env server {self.base_url} answered HTTP {status}: {content[:300]!r}", status=status)
        code, message = data["error"], data.get("message", "")
        error_type = _ERRORS_BY_CODE.get(code)
        if error_type is SessionLost:
            self.session_id = self._session_token = None
            raise SessionLost(f"{message} (reset() opens a new session)", status=status, code=code)
        if error_type is not None:
            raise error_type(message)
        raise RemoteEnvError(f"env server {self.base_url}: {code}: {message}", status=status, code=code)


def _socket_errors() -> type[Exception]:
    from websockets.exceptions import WebSocketException

    return WebSocketException


def _request_id() -> str:
    return uuid.uuid4().hex


def _encode_options(options: dict[str, Any] | None) -> dict[str, Any] | None:
    if options and isinstance(options.get("task"), Task):
        return {**options, "task": dataclasses.asdict(options["task"])}
    return options


def _step_result(answer: Mapping[str, Any]) -> StepResult:
    reward = answer["reward"]
    return (
        answer["messages"],
        float("nan") if reward is None else float(reward),
        answer["terminated"],
        answer["truncated"],
        answer["info"],
    )

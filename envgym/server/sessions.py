"""Sessions: one env instance per client episode stream, bounded in number and closed when left idle.

Stateless HTTP steps cannot carry a multi-turn episode, so the server keeps each env alive in a session
until the client closes it, or it sits idle past ``idle_timeout_s`` (a client that vanished must not hold
capacity forever). Calls on one session run one at a time (a lock per session); calls on different sessions
run concurrently. Each reset and step may carry a ``request_id``: the answer to the last one is kept, so a
client that retries after a lost response gets that answer again instead of a second step.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import hmac
import logging
import secrets
import time
from typing import Any

from envgym.remote import SESSION_TOKEN_HEADER
from envgym.server.protocol import ServerError
from envgym.server.workers import Placement, ProcessWorkers, ThreadWorkers, WorkerLost

log = logging.getLogger("envgym.server")
_OPS = {"envgym": ("reset", "step"), "openenv": ("openenv.reset", "openenv.step")}  # wire -> worker ops
_REMEMBERED = 10_000  # closed session ids and create request ids kept for clear answers to late calls


@dataclasses.dataclass
class Session:
    id: str
    token: str
    env_id: str
    placement: Placement
    created: float
    last_used: float
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    steps: int = 0
    closed: bool = False
    last_request_id: str | None = None
    last_answer: bytes | ServerError | None = None


class SessionManager:
    """Creates, finds, drives and reaps sessions on a pool of workers."""

    def __init__(self, workers: ThreadWorkers | ProcessWorkers, max_sessions: int, idle_timeout_s: float | None):
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        self.workers = workers
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s or None
        self.sessions: dict[str, Session] = {}
        self._opening = 0
        self._gone: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._created_by_request: collections.OrderedDict[str, str] = collections.OrderedDict()

    async def create(self, env_id: str, kwargs: dict[str, Any], request_id: str | None) -> Session:
        """Open a session (the same ``request_id`` twice returns the first session)."""
        env_spec(env_id)
        if request_id is not None and request_id in self._created_by_request:
            existing = self.sessions.get(self._created_by_request[request_id])
            if existing is not None:
                return existing
        if len(self.sessions) + self._opening >= self.max_sessions:
            idle = f"; idle sessions are closed after {self.idle_timeout_s:g}s" if self.idle_timeout_s else ""
            raise ServerError(
                "at_capacity",
                f"the server is at capacity: {len(self.sessions)} of {self.max_sessions} sessions are open. Close "
                f"sessions you no longer use (DELETE /sessions/ID) or retry later{idle}.",
                headers={"Retry-After": "1"},
            )
        session_id, now = secrets.token_hex(8), time.monotonic()
        placement = self.workers.place()
        self._opening += 1
        try:
            await self.workers.call(placement, session_id, "create", (env_id, kwargs))
        except WorkerLost as error:
            self.workers.release(placement)
            raise ServerError("env_error", f"the worker building {env_id!r} died ({error}); retry") from None
        except BaseException:
            self.workers.release(placement)
            raise
        finally:
            self._opening -= 1
        session = Session(session_id, secrets.token_urlsafe(16), env_id, placement, now, now)
        self.sessions[session_id] = session
        if request_id is not None:
            _remember(self._created_by_request, request_id, session_id)
        return session

    def get(self, session_id: str, token: str | None) -> Session:
        """The open session ``session_id``, if ``token`` is its token; clear errors otherwise."""
        session = self.sessions.get(session_id)
        if session is None:
            if session_id in self._gone:
                raise ServerError(
                    "session_gone", f"session {session_id} is gone: {self._gone[session_id]}. Create a new session."
                )
            raise ServerError(
                "session_not_found",
                f"no session {session_id} on this server: it never existed here, or the server restarted since it "
                f"was created. Create a new session (POST /sessions).",
            )
        if token is None or not hmac.compare_digest(session.token.encode(), token.encode()):
            what = "no" if token is None else "a wrong"
            raise ServerError(
                "forbidden",
                f"{what} {SESSION_TOKEN_HEADER} header for session {session_id}; send the token returned when the "
                f"session was created",
            )
        return session

    async def reset(
        self,
        session: Session,
        seed: int | None,
        options: dict[str, Any] | None,
        request_id: str | None,
        wire: str = "envgym",
    ) -> bytes:
        """Start an episode; the answer is JSON in the ``wire`` protocol (``envgym`` or ``openenv``)."""
        return await self._call(session, _OPS[wire][0], (seed, options), request_id)

    async def step(self, session: Session, action: Any, request_id: str | None, wire: str = "envgym") -> bytes:
        """Play one turn; the answer is JSON in the ``wire`` protocol (``envgym`` or ``openenv``)."""
        return await self._call(session, _OPS[wire][1], action, request_id)

    async def close(self, session: Session, reason: str) -> None:
        """Close a session and free its capacity (waits for a call in flight to finish)."""
        async with session.lock:
            if session.closed:
                return
            self._forget(session, reason)
            try:
                await self.workers.call(session.placement, session.id, "close", None)
            except (WorkerLost, ServerError) as error:  # closing is best effort; the capacity is already free
                log.info("closing session %s: %s", session.id, error)

    async def reap_idle(self) -> int:
        """Close sessions idle longer than the timeout; returns how many. A session in a call is never idle."""
        if self.idle_timeout_s is None:
            return 0
        cutoff = time.monotonic() - self.idle_timeout_s
        idle = [s for s in self.sessions.values() if s.last_used < cutoff and not s.lock.locked()]
        for session in idle:
            log.info("reaping session %s (idle over %gs)", session.id, self.idle_timeout_s)
            await self.close(session, f"it was closed after {self.idle_timeout_s:g}s without a call (idle timeout)")
        return len(idle)

    async def reap_forever(self) -> None:
        interval = max(0.1, min(self.idle_timeout_s / 4, 30.0)) if self.idle_timeout_s else None
        while interval is not None:
            await asyncio.sleep(interval)
            try:
                await self.reap_idle()
            except Exception:  # the reaper must outlive any one failure
                log.exception("reaping idle sessions failed")

    async def _call(self, session: Session, op: str, payload: Any, request_id: str | None) -> bytes:
        async with session.lock:
            if session.closed:
                raise ServerError(
                    "session_gone", f"session {session.id} is gone: {self._gone.get(session.id, 'closed')}"
                )
            if request_id is not None and request_id == session.last_request_id:
                return _answer(session.last_answer)
            session.last_used = time.monotonic()
            try:
                answer: bytes | ServerError = await self.workers.call(session.placement, session.id, op, payload)
            except WorkerLost as error:
                reason = f"its worker process died mid-episode ({error}), and the env state with it"
                self._forget(session, reason)
                raise ServerError(
                    "session_gone", f"session {session.id} is gone: {reason}. Create a new session."
                ) from None
            except ServerError as error:
                answer = error
            finally:
                session.last_used = time.monotonic()
            session.steps += op.endswith("step")
            session.last_request_id, session.last_answer = request_id, answer
            return _answer(answer)

    def _forget(self, session: Session, reason: str) -> None:
        session.closed = True
        if self.sessions.pop(session.id, None) is not None:
            self.workers.release(session.placement)
        _remember(self._gone, session.id, reason)

    def describe(self, session: Session) -> dict[str, Any]:
        return {
            "session_id": session.id,
            "env_id": session.env_id,
            "steps": session.steps,
            "age_s": time.monotonic() - session.created,
            "idle_s": time.monotonic() - session.last_used,
            "worker_pid": self.workers.pid(session.placement),
        }


def _answer(answer: bytes | ServerError | None) -> bytes:
    if isinstance(answer, ServerError):
        raise answer
    return answer or b""


def _remember(store: collections.OrderedDict, key: str, value: str) -> None:
    store[key] = value
    while len(store) > _REMEMBERED:
        store.popitem(last=False)


def env_spec(env_id: str) -> Any:
    """The registered spec of ``env_id``. Unknown ids fail here, in the server process, before any worker is
    involved (``unknown_env``)."""
    import envgym

    try:
        return envgym.spec(env_id)
    except envgym.UnknownEnv as error:
        raise ServerError("unknown_env", f"{error} GET /envs lists the envs this server can run.") from None
    except ValueError as error:
        raise ServerError("unknown_env", str(error)) from None

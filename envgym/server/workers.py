"""Where the server's envs live: worker threads or worker processes, off the event loop.

Env calls block (verifiers, sandboxes, plain CPU), so the event loop only routes requests; the work runs in
a worker. ``thread`` workers share the server process (cheapest hop; right for envs that wait on I/O).
``process`` workers each host a share of the sessions in their own interpreter, so CPU-bound envs run in
parallel and an env that crashes its process takes down only the sessions on that worker: they answer
``session_gone``, the worker is replaced, and every other session carries on.

Both kinds run the same function, :func:`execute`, which also turns results into JSON bytes where the env
ran (so a process worker hands the server finished response bodies).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import socket
import struct
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envgym.server.openenv_protocol import encode_openenv_reset, encode_openenv_step
from envgym.server.protocol import ENV_EXCEPTION_CODES, ServerError, encode_reset, encode_step

log = logging.getLogger("envgym.server")
Placement = tuple[int, int]  # (worker slot, generation of the worker in that slot)


class WorkerLost(Exception):
    """The worker process that hosted a session died; the session's env state is gone with it."""

    def __init__(self, pid: int | None, exitcode: int | None):
        super().__init__(f"worker process {pid} died (exit code {exitcode})")
        self.pid, self.exitcode = pid, exitcode


def execute(envs: dict[str, Any], op: str, session_id: str, payload: Any) -> tuple[str, Any]:
    """Run one session call; returns ``("ok", json_bytes)`` or ``("error", (code, message))``."""
    try:
        if op == "create":
            return _create(envs, session_id, *payload)
        if op == "close":
            env = envs.pop(session_id, None)
            if env is not None:
                env.close()
            return "ok", b""
        env = envs[session_id]
        if op in _RESET_ENCODERS:
            seed, options = payload
            return "ok", _RESET_ENCODERS[op](env.reset(seed=seed, options=_decode_options(options)))
        return "ok", _STEP_ENCODERS[op](env.step(payload))
    except Exception as error:  # an env may fail in any way; the session reports it and stays usable
        code = ENV_EXCEPTION_CODES.get(type(error).__name__)
        if code is None:
            log.warning("env call %s on session %s failed:\n%s", op, session_id, traceback.format_exc())
            code = "env_error"
        return "error", (code, f"{type(error).__name__}: {error}")


# op -> encoder of its result. The same env call answers either wire protocol; the worker encodes the answer
# in the one the request came in (envgym's session API or OpenEnv's), so the server only forwards bytes.
_RESET_ENCODERS = {"reset": encode_reset, "openenv.reset": encode_openenv_reset}
_STEP_ENCODERS = {"step": encode_step, "openenv.step": encode_openenv_step}


def _create(envs: dict[str, Any], session_id: str, env_id: str, kwargs: dict[str, Any]) -> tuple[str, Any]:
    import envgym

    try:
        envs[session_id] = envgym.make(env_id, **kwargs)
    except (TypeError, ValueError) as error:  # the env's constructor rejected the kwargs
        return "error", ("invalid_env_kwargs", f"could not build {env_id!r} with kwargs {kwargs!r}: {error}")
    return "ok", b""


def _decode_options(options: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"task": {...}}`` arrives as a dict; the env expects a :class:`~envgym.Task`."""
    if options and isinstance(options.get("task"), dict):
        from envgym.core import Task

        fields = {f.name for f in dataclasses.fields(Task)}
        unknown = set(options["task"]) - fields
        if unknown:
            from envgym.core import InvalidOptions

            raise InvalidOptions(
                f"options['task'] has unknown fields {sorted(unknown)}; Task fields are {sorted(fields)}"
            )
        options = {**options, "task": Task(**options["task"])}
    return options


def _result(status: str, data: Any) -> bytes:
    if status == "ok":
        return data
    code, message = data
    raise ServerError(code, message)


class ThreadWorkers:
    """Envs in this process, called from a thread pool."""

    kind = "thread"

    def __init__(self, num_workers: int):
        self.num_workers = num_workers
        self._envs: dict[str, Any] = {}
        self._pool = ThreadPoolExecutor(max_workers=num_workers, thread_name_prefix="envgym-env")

    def place(self) -> Placement:
        return (0, 0)

    def release(self, placement: Placement) -> None:
        pass

    def pid(self, placement: Placement) -> int:
        return os.getpid()

    async def call(self, placement: Placement, session_id: str, op: str, payload: Any) -> bytes:
        loop = asyncio.get_running_loop()
        return _result(*await loop.run_in_executor(self._pool, execute, self._envs, op, session_id, payload))

    async def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for session_id in list(self._envs):
            execute(self._envs, "close", session_id, None)


def _worker_main(sock: socket.socket) -> None:
    """A process worker: hosts envs by session id and answers calls in arrival order, one at a time."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which then stops its workers
    envs: dict[str, Any] = {}
    incoming = sock.makefile("rb")
    try:
        while (message := _read_frame(incoming)) is not None:
            call_id, op, session_id, payload = message
            sock.sendall(_frame((call_id, *execute(envs, op, session_id, payload))))
    except (EOFError, OSError):  # the server went away: nothing left to answer
        pass
    for session_id in list(envs):
        execute(envs, "close", session_id, None)


def _frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _read_frame(incoming: Any) -> Any:
    header = incoming.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    return pickle.loads(incoming.read(_HEADER.unpack(header)[0]))


_HEADER = struct.Struct("!I")


@dataclasses.dataclass
class _Worker:
    process: Any
    generation: int
    writer: asyncio.StreamWriter | None = None
    connected: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    sessions: int = 0
    dead: bool = False


class ProcessWorkers:
    """Envs in ``num_workers`` spawned processes; each session stays on the worker it was placed on.

    Each worker talks to the server over a socket pair read and written by the event loop itself (length-
    prefixed pickles): no threads in the server process, so no hand-offs of the GIL on every call. Must be
    created inside the running event loop."""

    kind = "process"

    def __init__(self, num_workers: int):
        self.num_workers = num_workers
        self._context = multiprocessing.get_context("spawn")
        self._ids = itertools.count()
        self._pending: dict[int, tuple[asyncio.Future, int]] = {}
        self._tasks: set[asyncio.Task] = set()
        self._workers = [self._spawn(slot, generation=0) for slot in range(num_workers)]

    def _spawn(self, slot: int, generation: int) -> _Worker:
        ours, theirs = socket.socketpair()
        process = self._context.Process(
            target=_worker_main, args=(theirs,), daemon=True, name=f"envgym-env-worker-{slot}"
        )
        process.start()
        theirs.close()
        worker = _Worker(process, generation)
        task = asyncio.get_running_loop().create_task(self._serve(slot, worker, ours))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return worker

    async def _serve(self, slot: int, worker: _Worker, sock: socket.socket) -> None:
        """Connect to a worker, then hand each of its answers to the call waiting for it until it dies."""
        reader, worker.writer = await asyncio.open_unix_connection(sock=sock)
        worker.connected.set()
        try:
            while True:
                header = await reader.readexactly(_HEADER.size)
                call_id, status, data = pickle.loads(await reader.readexactly(_HEADER.unpack(header)[0]))
                future, _ = self._pending.pop(call_id, (None, None))
                if future is not None and not future.done():
                    future.set_result((status, data))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            self._on_death(slot, worker)
        finally:
            worker.writer.close()

    def _on_death(self, slot: int, worker: _Worker) -> None:
        if worker.dead:
            return
        worker.dead = True
        worker.process.join(timeout=1)
        error = WorkerLost(worker.process.pid, worker.process.exitcode)
        for call_id, (future, owner) in list(self._pending.items()):
            if owner == slot and not future.done():
                self._pending.pop(call_id)
                future.set_exception(error)
        if self._workers and self._workers[slot] is worker:
            log.error("env worker %s (pid %s) died with exit code %s; replacing it", slot, error.pid, error.exitcode)
            self._workers[slot] = self._spawn(slot, worker.generation + 1)

    def place(self) -> Placement:
        slot = min(range(self.num_workers), key=lambda s: self._workers[s].sessions)
        self._workers[slot].sessions += 1
        return (slot, self._workers[slot].generation)

    def release(self, placement: Placement) -> None:
        slot, generation = placement
        if self._workers and self._workers[slot].generation == generation:
            self._workers[slot].sessions -= 1

    def pid(self, placement: Placement) -> int:
        return self._workers[placement[0]].process.pid

    async def call(self, placement: Placement, session_id: str, op: str, payload: Any) -> bytes:
        slot, generation = placement
        worker = self._workers[slot]
        if worker.generation != generation or worker.dead:
            raise WorkerLost(None, None)
        await worker.connected.wait()
        call_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = (future, slot)
        worker.writer.write(_frame((call_id, op, session_id, payload)))  # buffered by the loop; never blocks
        return _result(*await future)

    async def shutdown(self) -> None:
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.dead = True
            if worker.writer is not None and not worker.writer.is_closing():
                worker.writer.write(_frame(None))  # the worker closes its envs and exits
                try:
                    await worker.writer.drain()
                except ConnectionError:
                    pass
        for worker in workers:
            await asyncio.to_thread(worker.process.join, 3)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(timeout=1)


def make_workers(kind: str, num_workers: int | None) -> ThreadWorkers | ProcessWorkers:
    """``kind`` is ``"thread"`` or ``"process"``; ``num_workers`` defaults to the CPU count."""
    count = num_workers or os.cpu_count() or 1
    if count < 1:
        raise ValueError(f"num_workers must be >= 1, got {count}")
    if kind == "thread":
        return ThreadWorkers(count)
    if kind == "process":
        return ProcessWorkers(count)
    raise ValueError(f"unknown worker kind {kind!r}; choose 'thread' or 'process'")

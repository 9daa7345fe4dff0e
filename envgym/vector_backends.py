"""Where a vector env's envs run: in this thread, a thread pool, or worker processes, with per-env timeouts.

A backend hosts env ``i`` (built from ``env_fns[i]``) and answers :meth:`run` with one result per call:
``(messages, info)`` for a reset, ``(messages, reward, terminated, truncated, info)`` for a step. It never
raises for something an env did: an exception becomes that env's ``info["error"]``.

``step_timeout`` (seconds, for resets too): a call that runs longer is answered with
``info["error"] = "step timeout after Xs"`` (``truncated=True``, reward 0) and the env is replaced by a fresh
one from its factory, while the rest of the batch goes on. :meth:`run` also returns which envs were replaced
and why, so the vector env can end the episodes that were lost with them. How each backend stops a hung call:

- ``sync`` and ``thread``: a Python thread cannot be killed, so the call's thread is abandoned (a daemon
  thread that no longer takes work; the hung env is dropped without ``close()``, since it may still be
  running) and a new thread takes its place. Without a timeout ``sync`` runs every call in the calling
  thread, as fast as a plain loop.
- ``process``: the worker process holding the env is killed and respawned. Its other envs ("worker-mates")
  die with it and are rebuilt fresh: those called in the same batch are answered
  ``info["error"] = "env lost: ..."`` (their results of that batch were in the killed worker); the vector
  env reports the same error at the next step of an idle mate that was mid-episode. Give each env its own
  worker (``max_workers=num_envs``) when envs hang often and a mate's lost episode matters.
- ``ray`` (:mod:`envgym.vector_ray`): as ``process``, with actors.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
import traceback
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from typing import Any

EnvFactory = Callable[[], Any]
Call = tuple[str, tuple]  # ("reset", (seed, options)) or ("step", (action, autoreset)); see _execute
Results = dict[int, tuple]
Replaced = dict[int, str]  # env index -> why its env instance was replaced by a fresh one
NO_REPLACEMENTS: Replaced = {}


def _execute(env: Any, method: str, args: tuple) -> tuple:
    """Run one call on one env, turning any exception into an error result.

    A step's ``autoreset`` is ``None`` or the ``(seed, options)`` to reset with when the step ends the
    episode (same-step autoreset): the final observation and info then move into ``info``. If that reset
    fails, the finished step still counts (its reward stands); the failure is ``info["reset_info"]["error"]``.
    """
    try:
        if method == "reset":
            seed, options = args
            return env.reset(seed=seed, options=options)
        action, autoreset = args
        messages, reward, terminated, truncated, info = env.step(action)
    except Exception as error:  # isolate the failure to this env; the batch goes on
        return error_result(method, f"{type(error).__name__}: {error}", traceback.format_exc(limit=8))
    if autoreset is not None and (terminated or truncated):
        seed, options = autoreset
        try:
            next_messages, reset_info = env.reset(seed=seed, options=options)
        except Exception as error:
            next_messages = []
            reset_info = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=8)}
        info = {"final_observation": messages, "final_info": info, "reset_info": reset_info}
        messages = next_messages
    return messages, reward, terminated, truncated, info


def error_result(method: str, error: str, trace: str | None = None) -> tuple:
    """The result of a call that failed: no messages, and for a step reward 0 and ``truncated=True``."""
    info = {"error": error} if trace is None else {"error": error, "traceback": trace}
    return ([], info) if method == "reset" else ([], 0.0, False, True, info)


def timeout_message(method: str, seconds: float) -> str:
    return f"{method} timeout after {seconds:g}s"


def _run_call(
    envs: MutableSequence[Any] | dict[int, Any],
    env_fns: Sequence[EnvFactory] | Mapping[int, EnvFactory],
    i: int,
    call: Call,
) -> tuple:
    """Run ``call`` on env ``i``; a slot emptied by a failed rebuild is rebuilt first."""
    env = envs[i]
    if env is None:
        try:
            env = env_fns[i]()
        except Exception as error:
            return error_result(call[0], f"env {i} could not be rebuilt: {type(error).__name__}: {error}")
        if envs[i] is None:  # an abandoned (timed-out) build returning late must not replace a newer env
            envs[i] = env
    return _execute(env, *call)


class _Job:
    __slots__ = ("index", "call", "result", "started", "abandoned", "batch")

    def __init__(self, index: int, call: Call, batch: _Batch):
        self.index, self.call, self.batch = index, call, batch
        self.result: tuple | None = None
        self.started: float | None = None
        self.abandoned = False


class _Batch:
    __slots__ = ("remaining", "running")

    def __init__(self, size: int):
        self.remaining = size
        self.running: set[_Job] = set()


class _ThreadPool:
    """Daemon threads running env calls, with a deadline per call counted from when a thread starts it.

    A call past its deadline is abandoned with its thread (the thread retires when, if ever, the call
    returns) and a fresh thread takes its place. Daemon threads, unlike ``ThreadPoolExecutor``'s, never keep
    the interpreter from exiting while a hung env sleeps."""

    def __init__(self, backend: SyncBackend, size: int, timeout: float | None):
        self._backend, self._timeout = backend, timeout
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Condition()
        self._threads = 0
        for _ in range(size):
            self._spawn()

    def _spawn(self) -> None:
        threading.Thread(target=self._serve, name="envgym-vector-env", daemon=True).start()
        self._threads += 1

    def _serve(self) -> None:
        while (job := self._queue.get()) is not None:
            with self._lock:
                job.started = time.monotonic()
                job.batch.running.add(job)
            try:
                result = _run_call(self._backend.envs, self._backend.env_fns, job.index, job.call)
            except BaseException as error:  # SystemExit and the like: answered, so the batch never waits forever
                result = error_result(job.call[0], f"{type(error).__name__}: {error}")
            with self._lock:
                if job.abandoned:
                    return  # this thread was replaced while the call hung: retire
                job.result = result
                job.batch.running.discard(job)
                job.batch.remaining -= 1
                if job.batch.remaining == 0:
                    self._lock.notify_all()

    def run(self, calls: Mapping[int, Call]) -> tuple[Results, list[int]]:
        """Run the calls; returns their results and the indices whose call timed out (already answered)."""
        batch = _Batch(len(calls))
        jobs = [_Job(i, call, batch) for i, call in calls.items()]
        for job in jobs:
            self._queue.put(job)
        timed_out = []
        with self._lock:
            while batch.remaining:
                if self._timeout is None:
                    self._lock.wait()
                    continue
                now = time.monotonic()
                for job in [j for j in batch.running if now - j.started >= self._timeout]:
                    job.abandoned = True
                    job.result = error_result(job.call[0], timeout_message(job.call[0], self._timeout))
                    batch.running.discard(job)
                    batch.remaining -= 1
                    timed_out.append(job.index)
                    self._threads -= 1
                    self._spawn()
                # A call that starts later has a later deadline, so waiting for the earliest one misses none.
                deadline = min((j.started + self._timeout for j in batch.running), default=now + self._timeout)
                if batch.remaining:
                    self._lock.wait(max(0.0, deadline - now))
        return {job.index: job.result for job in jobs}, timed_out

    def close(self) -> None:
        for _ in range(self._threads):
            self._queue.put(None)


class SyncBackend:
    """Runs every env in the calling thread, one after another (lowest overhead).

    With a ``step_timeout`` each call runs on one helper thread instead, so that a hung call can be left
    behind (see the module docstring)."""

    def __init__(
        self, env_fns: Sequence[EnvFactory], step_timeout: float | None = None, max_workers: int | None = None
    ):
        self.env_fns = list(env_fns)
        self.envs: list[Any] = [fn() for fn in self.env_fns]
        self.step_timeout = step_timeout
        self._pool = self._make_pool(max_workers)

    def _make_pool(self, max_workers: int | None) -> _ThreadPool | None:
        return None if self.step_timeout is None else _ThreadPool(self, 1, self.step_timeout)

    def run(self, calls: Mapping[int, Call]) -> tuple[Results, Replaced]:
        if self._pool is None:
            envs = self.envs
            return {i: _execute(envs[i], method, args) for i, (method, args) in calls.items()}, NO_REPLACEMENTS
        results, timed_out = self._pool.run(calls)
        replaced = {}
        for i in timed_out:
            replaced[i] = results[i][-1]["error"]
            try:
                self.envs[i] = self.env_fns[i]()
            except Exception:  # the env's next call rebuilds it and reports the failure
                self.envs[i] = None
        return results, replaced

    def close(self) -> None:
        for env in self.envs:
            if env is not None:
                env.close()
        if self._pool is not None:
            self._pool.close()


class ThreadBackend(SyncBackend):
    """Runs the envs of one call concurrently on a pool of threads (for envs that wait on I/O)."""

    def _make_pool(self, max_workers: int | None) -> _ThreadPool:
        return _ThreadPool(self, max_workers or min(32, len(self.envs)), self.step_timeout)

    def run(self, calls: Mapping[int, Call]) -> tuple[Results, Replaced]:
        if self.step_timeout is None:
            return self._pool.run(calls)[0], NO_REPLACEMENTS
        return super().run(calls)


def _worker(connection: Any, env_fns: dict[int, EnvFactory], eager: bool, progress: Any) -> None:
    """Process-backend worker: hosts a shard of the envs and answers batched calls over a pipe.

    Before each call it writes ``(start time, env index)`` to ``progress`` (shared memory) so that the
    parent can tell which env overran its timeout without a message per call. ``eager``: build every env
    now and report whether that worked (first start); otherwise each env is built on its first call
    (a respawn after a timeout, so a failing factory fails that env's call only)."""
    envs: dict[int, Any] = dict.fromkeys(env_fns)
    if eager:
        try:
            envs = {i: fn() for i, fn in env_fns.items()}
        except Exception as error:
            connection.send(("failed", f"{type(error).__name__}: {error}"))
            return
        connection.send(("ready", None))
    while True:
        try:
            command, payload = connection.recv()
        except (EOFError, KeyboardInterrupt):
            break
        if command == "close":
            for env in envs.values():
                if env is not None:
                    env.close()
            connection.send(("closed", None))
            break
        results = {}
        for i, call in payload.items():
            progress[0] = time.monotonic()  # start time first: the parent reads the index, then the time
            progress[1] = i
            results[i] = _run_call(envs, env_fns, i, call)
        progress[1] = -1
        connection.send(("results", results))


class _Worker:
    """A worker process of the process backend, and the shard of env indices it holds."""

    def __init__(self, context: Any, env_fns: Sequence[EnvFactory], shard: list[int], eager: bool):
        self.shard = shard
        self.progress = context.RawArray("d", [0.0, -1.0])
        self.connection, child = context.Pipe()
        self.process = context.Process(
            target=_worker, args=(child, {i: env_fns[i] for i in shard}, eager, self.progress), daemon=True
        )
        self.process.start()
        child.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.connection.close()


class _Hung(Exception):
    def __init__(self, index: int):
        self.index = index


class ProcessBackend:
    """Shards the envs over worker processes (spawned, so no forked threads or locks are inherited)."""

    def __init__(
        self, env_fns: Sequence[EnvFactory], step_timeout: float | None = None, max_workers: int | None = None
    ):
        num_workers = max(1, min(len(env_fns), max_workers or os.cpu_count() or 1))
        self._context = multiprocessing.get_context("spawn")
        self._env_fns = list(env_fns)
        self.step_timeout = step_timeout
        self._owner = {i: i % num_workers for i in range(len(env_fns))}
        shards = [[i for i in range(len(env_fns)) if i % num_workers == w] for w in range(num_workers)]
        self._workers = [_Worker(self._context, self._env_fns, shard, eager=True) for shard in shards]
        for worker in self._workers:
            status, detail = worker.connection.recv()
            if status != "ready":
                self.close()
                raise RuntimeError(f"a vector-env worker could not build its envs: {detail}")

    def run(self, calls: Mapping[int, Call]) -> tuple[Results, Replaced]:
        shards: dict[int, dict[int, Call]] = {}
        for i, call in calls.items():
            shards.setdefault(self._owner[i], {})[i] = call
        for w, shard in shards.items():
            try:
                self._workers[w].connection.send(("run", shard))
            except (OSError, ValueError):  # a dead worker's pipe: _receive reports it
                pass
        results: Results = {}
        replaced: Replaced = {}
        for w, shard in shards.items():
            try:
                results.update(self._receive(self._workers[w]))
                continue
            except _Hung as error:
                hung, method = error.index, shard[error.index][0]
                why = timeout_message(method, self.step_timeout)
                results[hung] = error_result(method, why)
                replaced[hung] = why
                lost = f"env lost: its worker process was restarted because env {hung} hung ({why})"
            except (EOFError, OSError) as error:  # the worker died: its envs report it, the others go on
                lost = f"env lost: its worker process died ({type(error).__name__}: {error})"
            for i, (method, _) in shard.items():
                results.setdefault(i, error_result(method, lost))
            for i in self._workers[w].shard:
                replaced.setdefault(i, lost)
            self._restart(w)
        return results, replaced

    def _restart(self, w: int) -> None:
        """Kill worker ``w`` and start a fresh one for its shard; its envs are built on their next call."""
        old = self._workers[w]
        old.kill()
        self._workers[w] = _Worker(self._context, self._env_fns, old.shard, eager=False)

    def _receive(self, worker: _Worker) -> Results:
        """The worker's results; raises :class:`_Hung` when one of its calls overruns ``step_timeout``."""
        if self.step_timeout is None:
            return worker.connection.recv()[1]
        while True:
            index = int(worker.progress[1])
            started = worker.progress[0]
            wait = started + self.step_timeout - time.monotonic() if index >= 0 else self.step_timeout
            if worker.connection.poll(max(0.0, wait)):
                return worker.connection.recv()[1]
            if index >= 0 and int(worker.progress[1]) == index and worker.progress[0] == started:
                raise _Hung(index)

    def close(self) -> None:
        for worker in self._workers:
            try:
                if worker.process.is_alive():
                    worker.connection.send(("close", None))
                    if worker.connection.poll(5):
                        worker.connection.recv()
            except (EOFError, OSError):
                pass
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
        self._workers = []


BACKENDS: dict[str, type] = {"sync": SyncBackend, "thread": ThreadBackend, "process": ProcessBackend}

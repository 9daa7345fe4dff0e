"""A small pool of worker processes for symbolic comparison, with a hard timeout per comparison.

Why processes: sympy can run for minutes (or forever) on some inputs and cannot be interrupted from another
thread, and SIGALRM-based timeouts (math-verify's) only work on the main thread. A worker that overruns its deadline
is killed (SIGKILL) and replaced in the background, so a caller gets its answer in bounded time from any
thread, from asyncio (via ``asyncio.to_thread``) or from a web server.

Workers are plain subprocesses (``python -m envgym.verifiers._symbolic_worker``) speaking JSON lines: no fork
of a multi-threaded parent, no re-import of the caller's ``__main__``. They start on first use.

Timing contract of :meth:`SymbolicPool.compare`: the ``timeout`` covers waiting for a busy worker and the
comparison itself. Waiting while *no* worker is busy, i.e. every missing worker is starting (a cold pool, or
all workers just replaced after timeouts; start-up takes one to three seconds), is bounded separately by
``startup_timeout``, so a restart does not turn correct answers into timeouts.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time

_RETURN_MARGIN_S = 0.02
DEFAULT_WORKERS = int(os.environ.get("ENVGYM_VERIFY_WORKERS", "0")) or max(1, min(4, os.cpu_count() or 1))


class SymbolicBackendError(RuntimeError):
    """The symbolic workers cannot run (e.g. sympy or latex2sympy2_extended is not installed)."""


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "envgym.verifiers._symbolic_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._buffer = b""

    def read(self, deadline: float) -> dict | None:
        """The next message, or None if ``deadline`` (time.monotonic) passes first."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return {"error": f"the symbolic worker exited (code {self.process.poll()})"}
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def send(self, request: dict) -> None:
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()

    def kill(self) -> None:
        """SIGKILL now; reaping happens on a daemon thread so the caller never waits for it."""
        try:
            self.process.kill()
        except OSError:
            pass
        threading.Thread(target=self.process.wait, daemon=True).start()


class SymbolicPool:
    """``size`` symbolic workers shared by all threads of the process."""

    def __init__(self, size: int = DEFAULT_WORKERS, startup_timeout: float = 60.0):
        if size < 1:
            raise ValueError(f"a symbolic pool needs at least one worker, got size={size}")
        self.size, self.startup_timeout = size, startup_timeout
        self._idle: list[_Worker] = []
        self._busy = 0
        self._alive = 0  # idle + busy + starting
        self._error: str | None = None
        self._closed = False
        self._cond = threading.Condition()

    def compare(self, pred: str, gold: str, timeout: float, conventions: dict | None = None) -> bool | None:
        """True/False from sympy (``conventions``: the fields of ``Conventions``, defaults if None); None if the
        comparison ran out of time (the worker is then replaced). Raises :class:`SymbolicBackendError` if no
        worker can start."""
        # The margin leaves time to kill a worker and return, so the caller is answered within `timeout`.
        deadline = time.monotonic() + max(timeout - _RETURN_MARGIN_S, 0.001)
        worker, deadline = self._acquire(deadline)
        if worker is None:
            return None
        try:
            worker.send({"pred": pred, "gold": gold, "conventions": conventions or {}})
            reply = worker.read(deadline)
        except (OSError, ValueError) as error:
            reply = {"error": f"{type(error).__name__}: {error}", "broken": True}
        if reply is None or reply.get("broken") or worker.process.poll() is not None:
            self._replace(worker)
            return None
        self._release(worker)
        return bool(reply.get("equal", False))

    def close(self) -> None:
        """Stop every worker (also run at interpreter exit)."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for worker in idle:
            worker.kill()

    # --- internals ------------------------------------------------------------------------------
    def wait_ready(self) -> None:
        """Start any missing worker and wait until all are ready (bounded by ``startup_timeout``)."""
        with self._cond:
            while self._alive < self.size:
                self._start_one()
            startup_deadline = time.monotonic() + self.startup_timeout
            while len(self._idle) + self._busy < self.size:
                if self._error is not None:
                    raise SymbolicBackendError(self._error)
                remaining = startup_deadline - time.monotonic()
                if remaining <= 0:
                    raise SymbolicBackendError(
                        f"the symbolic workers did not start within {self.startup_timeout:.0f} s"
                    )
                self._cond.wait(remaining)

    def _acquire(self, deadline: float) -> tuple[_Worker | None, float]:
        """An idle worker and the comparison's deadline, moved later by any time spent waiting for start-up."""
        with self._cond:
            if self._closed:
                raise SymbolicBackendError("the symbolic pool is closed")
            while self._alive < self.size:
                self._start_one()
            startup_deadline = time.monotonic() + self.startup_timeout
            while not self._idle:
                if self._error is not None:
                    raise SymbolicBackendError(self._error)
                # With no worker busy, every missing worker is starting (cold pool, or all just replaced
                # after timeouts): that wait is start-up, not comparison time. Otherwise a busy worker
                # frees up within its caller's timeout, and our own deadline applies.
                starting = not self._busy
                limit = startup_deadline if starting else deadline
                remaining = limit - time.monotonic()
                if remaining <= 0:
                    return None, deadline
                waited_from = time.monotonic()
                self._cond.wait(remaining)
                if starting:
                    deadline += time.monotonic() - waited_from
            self._busy += 1
            return self._idle.pop(), deadline

    def _release(self, worker: _Worker) -> None:
        with self._cond:
            self._busy -= 1
            if self._closed:
                worker.kill()
                return
            self._idle.append(worker)
            self._cond.notify()

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        with self._cond:
            self._busy -= 1
            self._alive -= 1
            if not self._closed:
                self._start_one()

    def _start_one(self) -> None:
        """Start a worker; a daemon thread waits for its ready line and hands it to the idle list."""
        self._alive += 1
        threading.Thread(target=self._boot, daemon=True).start()

    def _boot(self) -> None:
        try:
            worker = _Worker()
            message = worker.read(time.monotonic() + self.startup_timeout)
        except OSError as error:
            worker, message = None, {"error": f"cannot start the symbolic worker: {error}"}
        with self._cond:
            if message and message.get("ready"):
                if self._closed:
                    worker.kill()
                else:
                    self._idle.append(worker)
            else:
                self._alive -= 1
                self._error = (message or {}).get("error") or (
                    f"the symbolic worker did not start within {self.startup_timeout:.0f} s"
                )
                if worker is not None:
                    worker.kill()
            self._cond.notify_all()


_pool: SymbolicPool | None = None
_pool_lock = threading.Lock()


def shared_pool() -> SymbolicPool:
    """The process-wide pool (created on first use, closed at exit)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = SymbolicPool()
            atexit.register(_pool.close)
        return _pool

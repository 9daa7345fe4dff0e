"""Warm worker processes on this machine that run the tests' side of assertion grading.

Each worker runs ``_test_evaluator.py`` (through the sandbox jobs' loader) and serves one request at a time.
They need limits, not a sandbox: they run only trusted code (the dataset's tests) on plain data decoded from
the solution's answers. A warm worker saves the fork, the module loading and the test compilation of a
sandbox job per evaluation, which would otherwise double the cost of grading.

Nothing the solution does reaches them: the solution runs in another process, inside the sandbox (whose PID
namespaces show it none of the host's processes), while a worker is a separate host process that is not
dumpable (no ``/proc/<pid>/mem`` or ptrace, even for its own uid) and reads the solution's answers only as
data.

Limits: an address-space limit (``memory_mb``), a wall-clock deadline per request (the worker is killed and
replaced when it passes), and a fresh worker after ``recycle_after`` requests so that nothing accumulates.
"""

from __future__ import annotations

import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any


class EvaluatorPool:
    """At most ``size`` workers (default: the usable cores), started on demand. Thread-safe."""

    def __init__(
        self,
        program: str,
        modules_line: str,
        *,
        size: int | None = None,
        memory_mb: int = 1024,
        recycle_after: int = 1000,
    ):
        self.size = size or len(os.sched_getaffinity(0))
        self._folder = tempfile.mkdtemp(prefix="envgym-evaluator-")  # the workers' empty working directory
        self._start = (program, modules_line, memory_mb, self._folder)
        self._recycle_after = recycle_after
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(self.size)
        self._workers: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    def evaluate(self, request: dict[str, Any], deadline_s: float) -> tuple[list[list], str | None]:
        """The records a worker sent for ``request``, and why it stopped before its last one (or None)."""
        with self._slots:
            worker = self._take()
            try:
                records, failure = worker.evaluate((json.dumps(request) + "\n").encode(), deadline_s)
            except OSError as error:  # the worker died before reading the request
                records, failure = [], f"the tests' worker failed: {error!r}"
            except BaseException:
                self._retire(worker)
                raise
            if failure is None and worker.served < self._recycle_after and not self._closed:
                self._idle.put(worker)
            else:
                self._retire(worker)
            return records, failure

    def close(self) -> None:
        """Stop every worker (idle ones now, busy ones when their request ends)."""
        self._closed = True
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            self._retire(worker)
        shutil.rmtree(self._folder, ignore_errors=True)

    def _take(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            worker = _Worker(*self._start)
            with self._lock:
                self._workers.add(worker)
            return worker

    def _retire(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            self._workers.discard(worker)


class _Worker:
    def __init__(self, program: str, modules_line: str, memory_mb: int, folder: str):
        # -S -s and a clean environment: no site hooks (the evaluator adds site-packages itself); an empty
        # working directory (``-c`` puts it on sys.path); a fixed hash seed so that set order, hence the calls
        # the tests make, is the same in every worker
        self.process = subprocess.Popen(
            [sys.executable, "-S", "-s", "-c", program, str(memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=folder,
            start_new_session=True,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"},
        )
        self.process.stdin.write(modules_line.encode())
        self.buffer = bytearray()
        self.served = 0

    def evaluate(self, request: bytes, deadline_s: float) -> tuple[list[list], str | None]:
        self.served += 1
        self.process.stdin.write(request)
        self.process.stdin.flush()
        records: list[list] = []
        stdout = self.process.stdout.fileno()
        deadline = time.monotonic() + deadline_s
        while True:
            while b"\n" in self.buffer:
                line, _, rest = bytes(self.buffer).partition(b"\n")
                self.buffer[:] = rest
                records.append(json.loads(line))
                if records[-1][0] in ("end", "setup_error"):
                    return records, None
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                return records, "timeout"
            chunk = os.read(stdout, 1 << 16)
            if not chunk:
                return records, f"the tests' worker exited (code {self.process.wait()})"
            self.buffer += chunk

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass

"""How every `envgym bench` command reports: an optional table, then one JSON object as the last line."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any


def machine() -> dict[str, Any]:
    """Where the numbers were measured."""
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}


class WorkerFailed(RuntimeError):
    """A benchmark worker exited without its JSON line. ``error`` is the exception it died of (``"Type: message"``,
    the last one in its stderr) and ``functions`` the functions its traceback went through, so a caller can say
    which side failed where (a peer's failure is reported, never hidden, and never taken for ours)."""

    def __init__(self, what: str, returncode: int, stderr: str):
        self.returncode, self.stderr = returncode, stderr
        errors = _EXCEPTION_LINE.findall(stderr)
        self.error = errors[-1].strip() if errors else f"exit status {returncode}"
        self.functions = _TRACEBACK_FUNCTION.findall(stderr)
        super().__init__(f"the {what} worker failed (exit {returncode}):\n{stderr[-3000:]}")


_EXCEPTION_LINE = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b.*)$", re.M)
_TRACEBACK_FUNCTION = re.compile(r'File "[^"]+", line \d+, in (\w+)')


_shared_threads: str | None = None  # the value share_cores last set, told apart from a user's own


def share_cores(jobs: int) -> int:
    """The OpenMP/MKL threads each of ``jobs`` concurrent workers gets: this machine's cores shared out, set in this
    process's environment for the workers it starts. OpenMP threads beyond the cores spin against each other: on 2
    cores, TRL's steps on the tool recipe took 26-42 s alone and 120-590 s beside one more 2-thread run. A user's own
    ``OMP_NUM_THREADS`` is kept (and returned)."""
    global _shared_threads
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    own = os.environ.get("OMP_NUM_THREADS", "")
    if own.isdigit() and int(own) >= 1 and own != _shared_threads:
        return int(own)
    threads = max(1, (os.cpu_count() or 1) // jobs)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = _shared_threads = str(threads)
    return threads


def run_worker(what: str, function: Callable[..., None], *args: Any, nproc: int = 1) -> dict[str, Any]:
    """Run ``function(*args)`` (a module-level function that prints one JSON line; plain-literal arguments) in a
    fresh interpreter and return that line: each side of a comparison gets a process of its own, so its peak
    memory and imports are its own. ``nproc`` > 1 starts that many ranks with ``torchrun`` (the function prints
    on rank 0). Raises :class:`WorkerFailed` naming ``what`` when the worker dies."""
    call = f"from {function.__module__} import {function.__name__}; {function.__name__}(*{args!r})"
    command = [sys.executable, "-c", call]
    if nproc > 1:
        launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
        command = [*launch, "-m", "envgym.bench.rank_worker", function.__module__, function.__name__, repr(args)]
    process = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
    )
    lines = [line for line in process.stdout.splitlines() if line.startswith("{")]
    if process.returncode != 0 or not lines:
        raise WorkerFailed(what, process.returncode, process.stderr)
    return json.loads(lines[-1])


def emit(result: dict[str, Any], as_json: bool) -> None:
    """Print ``result``: a readable table first unless ``as_json``, and always the JSON line last."""
    if not as_json:
        from rich.console import Console
        from rich.table import Table

        table = Table("metric", "value")
        for key, value in _flatten(result).items():
            table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
        Console(stderr=True).print(table)
    print(json.dumps(result), flush=True)


def _flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, dict):
            out.update(_flatten(item, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = item
    return out

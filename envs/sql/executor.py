"""Running a policy's SQL safely on a copy of a task's SQLite database, and comparing result sets.

What protects the database and the host (each guarantee has a test in tests/envs/sql/test_executor.py):

- every run gets its own in-memory copy, built from the task's script, so nothing a query does outlives it;
- ``PRAGMA query_only=ON`` and an authorizer that allows only SELECT, column READs, function calls and recursive
  CTEs: writes, ``ATTACH``, ``PRAGMA``, DDL and transactions are refused before they run;
- a progress handler stops a query after ``max_steps`` virtual-machine steps or ``timeout`` seconds of wall time
  (a recursive CTE that never ends);
- the progress handler runs only between virtual-machine steps, and one step can take seconds (``instr`` of a
  1 MB string and a 500 KB needle is quadratic inside a single step): a policy's query therefore runs in a
  :class:`QueryWorker`, a separate process killed when it runs ``KILL_GRACE_S`` past ``timeout``, with its
  address space capped at ``WORKER_MEMORY_BYTES``;
- at most ``max_rows`` rows and ``max_bytes`` bytes of result are read: a query returning more is refused;
- strings and blobs are capped at ``MAX_VALUE_BYTES`` (``randomblob(10**9)`` fails instead of allocating).

A query must also read at least one table of the database (the authorizer sees the READ). A constant
``SELECT 3`` reproduces a result set without asking the database anything; requiring a read does not stop a policy
that knows the answer from writing ``SELECT 3 FROM orders LIMIT 1``, but it keeps the plain echo of a value, which a
policy can learn without learning SQL, from being an answer at all.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import select
import sqlite3
import subprocess
import sys
import threading
import time
from typing import Any

MAX_ROWS = 1000
MAX_STEPS = 5_000_000
TIMEOUT_S = 1.0
MAX_VALUE_BYTES = 1_000_000
PROGRESS_EVERY = 1000  # VM steps between progress-handler calls
MAX_RESULT_BYTES = 1_000_000
KILL_GRACE_S = 0.25
WORKER_MEMORY_BYTES = 1 << 30
ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}

Row = tuple[Any, ...]


@dataclasses.dataclass
class QueryResult:
    """The rows of a query, or ``error`` saying why there are none (the query's fault, never the env's)."""

    rows: list[Row] | None
    error: str | None = None
    tables_read: frozenset[str] = frozenset()


class QueryWorkerError(RuntimeError):
    """The query worker could not be started or kept dying on queries that are not to blame: infrastructure."""


def run_query(
    database: str,
    query: str,
    *,
    max_rows: int = MAX_ROWS,
    max_steps: int = MAX_STEPS,
    timeout: float = TIMEOUT_S,
    max_bytes: int = MAX_RESULT_BYTES,
) -> QueryResult:
    """Run ``query`` read-only on a fresh copy of ``database`` (the SQL script that builds it), within the limits,
    in this process: for trusted queries (a task's gold). A policy's query goes through :class:`QueryWorker`."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(database)
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        connection.execute("PRAGMA query_only = ON")
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        tables_read: set[str] = set()
        denied: list[str] = []

        def authorize(action: int, arg1: str | None, arg2: str | None, db_name: str | None, trigger: str | None) -> int:
            if action not in ALLOWED_ACTIONS:
                denied.append(_ACTION_NAMES.get(action, str(action)))
                return sqlite3.SQLITE_DENY
            if action == sqlite3.SQLITE_READ and arg1 in tables:
                tables_read.add(arg1)
            return sqlite3.SQLITE_OK

        deadline = time.perf_counter() + timeout
        calls = 0

        def progress() -> int:
            nonlocal calls
            calls += 1
            return int(calls * PROGRESS_EVERY > max_steps or time.perf_counter() > deadline)

        connection.set_authorizer(authorize)
        connection.set_progress_handler(progress, PROGRESS_EVERY)
        try:
            cursor = connection.execute(query)
            rows = cursor.fetchmany(max_rows + 1)
        except sqlite3.Error as error:
            if denied:
                return QueryResult(None, f"not allowed: {denied[0]} (only SELECT queries may run)")
            if "interrupted" in str(error):
                return QueryResult(None, f"stopped: the query ran past {max_steps} steps or {timeout:g} s")
            return QueryResult(None, f"SQL error: {error}")
        if len(rows) > max_rows:
            return QueryResult(None, f"the query returned more than {max_rows} rows", frozenset(tables_read))
        if len(_encode(rows)) > max_bytes:
            return QueryResult(None, f"the query's result is larger than {max_bytes} bytes", frozenset(tables_read))
        return QueryResult([tuple(row) for row in rows], None, frozenset(tables_read))
    finally:
        connection.close()


def _encode(rows: list[Any]) -> str:
    return json.dumps(
        [[{"$blob": base64.b64encode(v).decode()} if isinstance(v, bytes) else v for v in r] for r in rows]
    )


def _decode(rows: list[list[Any]]) -> list[Row]:
    return [tuple(base64.b64decode(v["$blob"]) if isinstance(v, dict) else v for v in row) for row in rows]


class QueryWorker:
    """Runs queries in a child process (this file run as a script: the standard library only) that is killed
    when a query runs ``KILL_GRACE_S`` past its ``timeout``; the next query starts a fresh one. Thread-safe.

    A query that kills the worker (it dies, twice running, on the same query) is the query's fault and comes back
    as a :class:`QueryResult` error; a worker that cannot be started raises :class:`QueryWorkerError`.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # a copied env gets a worker of its own (a truthy state, or
        return {"fresh": True}  # pickle skips __setstate__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()

    def run(
        self,
        database: str,
        query: str,
        *,
        max_rows: int = MAX_ROWS,
        max_steps: int = MAX_STEPS,
        timeout: float = TIMEOUT_S,
        max_bytes: int = MAX_RESULT_BYTES,
    ) -> QueryResult:
        """:func:`run_query` in the worker, under a hard wall-clock limit of ``timeout + KILL_GRACE_S``."""
        request = {"database": database, "query": query, "max_rows": max_rows, "max_steps": max_steps}
        request.update(timeout=timeout, max_bytes=max_bytes)
        line = (json.dumps(request) + "\n").encode()
        with self._lock:
            for _ in range(2):  # a worker that dies is restarted once; dying again, it was the query
                reply = self._ask(line, timeout + KILL_GRACE_S)
                if reply == "timeout":
                    return QueryResult(None, f"stopped: the query ran past {timeout:g} s")
                if reply is not None:
                    return QueryResult(
                        None if reply["rows"] is None else _decode(reply["rows"]),
                        reply["error"],
                        frozenset(reply["tables_read"]),
                    )
            return QueryResult(None, "the query crashed the database engine")

    def _ask(self, line: bytes, limit: float) -> dict[str, Any] | str | None:
        """The worker's reply, ``"timeout"`` (it was killed) or None (it died)."""
        process = self._start()
        try:
            process.stdin.write(line)
            process.stdin.flush()
        except OSError:
            self.close()
            return None
        ready, _, _ = select.select([process.stdout], [], [], limit)
        if not ready:
            self.close()
            return "timeout"
        reply = process.stdout.readline()
        if not reply:
            self.close()
            return None
        return json.loads(reply)

    def _start(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            try:
                self._process = subprocess.Popen(
                    [sys.executable, "-I", os.path.abspath(__file__)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as error:
                raise QueryWorkerError(f"the SQL query worker could not start: {error}") from error
        return self._process

    def close(self) -> None:
        """Stop the worker process (the next query starts a new one)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                stream.close()
            self._process = None

    def __del__(self) -> None:
        self.close()


def _serve() -> None:
    """The worker's loop: one JSON request per line on stdin, one JSON reply per line on stdout."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    for line in sys.stdin.buffer:
        request = json.loads(line)
        database, query = request.pop("database"), request.pop("query")
        try:
            result = run_query(database, query, **request)
        except MemoryError:
            result = QueryResult(None, "the query ran out of memory")
        rows = None if result.rows is None else json.loads(_encode(result.rows))
        reply = {"rows": rows, "error": result.error, "tables_read": sorted(result.tables_read)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


_AUTHORIZER_ACTIONS = (
    "CREATE_INDEX",
    "CREATE_TABLE",
    "CREATE_TEMP_INDEX",
    "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW",
    "CREATE_TRIGGER",
    "CREATE_VIEW",
    "DELETE",
    "DROP_INDEX",
    "DROP_TABLE",
    "DROP_TEMP_INDEX",
    "DROP_TEMP_TABLE",
    "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW",
    "DROP_TRIGGER",
    "DROP_VIEW",
    "INSERT",
    "PRAGMA",
    "READ",
    "SELECT",
    "TRANSACTION",
    "UPDATE",
    "ATTACH",
    "DETACH",
    "ALTER_TABLE",
    "REINDEX",
    "ANALYZE",
    "CREATE_VTABLE",
    "DROP_VTABLE",
    "FUNCTION",
    "SAVEPOINT",
    "RECURSIVE",
)
_ACTION_NAMES = {getattr(sqlite3, f"SQLITE_{name}"): name for name in _AUTHORIZER_ACTIONS}


def same_value(a: Any, b: Any) -> bool:
    """NULL equals NULL only; numbers (int or real) within a relative 1e-6 (absolute 1e-9); anything else exactly,
    type included (the text '3' is not the number 3)."""
    if a is None or b is None:
        return a is None and b is None
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return False
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def same_row(a: Row, b: Row) -> bool:
    """Same number of columns, and the same value column by column (column order matters, names do not)."""
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))


def same_result(rows: list[Row], gold: list[Row], *, ordered: bool) -> bool:
    """Whether ``rows`` is the gold result: in order where ``ordered`` (the gold query has ORDER BY), else as
    multisets (every row matched once, so duplicates count)."""
    if len(rows) != len(gold):
        return False
    if ordered:
        return all(same_row(a, b) for a, b in zip(rows, gold))
    unmatched = list(rows)
    for gold_row in gold:  # greedy matching; results are at most MAX_ROWS rows and gold sets are small
        match = next((i for i, row in enumerate(unmatched) if same_row(row, gold_row)), None)
        if match is None:
            return False
        unmatched.pop(match)
    return True


if __name__ == "__main__":
    _serve()

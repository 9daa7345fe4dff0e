"""Running a policy's SQL safely on a copy of a task's SQLite database, and comparing result sets.

What protects the database and the host (each guarantee has a test in tests/envs/sql/test_executor.py):

- every run gets its own in-memory copy, built from the task's script, so nothing a query does outlives it;
- ``PRAGMA query_only=ON`` and an authorizer that allows only SELECT, column READs, function calls and recursive
  CTEs: writes, ``ATTACH``, ``PRAGMA``, DDL and transactions are refused before they run;
- a progress handler stops a query after ``max_steps`` virtual-machine steps or ``timeout`` seconds of wall time
  (a recursive CTE that never ends);
- at most ``max_rows`` rows are read: a query returning more is cut and refused;
- strings and blobs are capped at ``MAX_VALUE_BYTES`` (``randomblob(10**9)`` fails instead of allocating).

A query must also read at least one table of the database (the authorizer sees the READ). A constant
``SELECT 3`` reproduces a result set without asking the database anything; requiring a read does not stop a policy
that knows the answer from writing ``SELECT 3 FROM orders LIMIT 1``, but it keeps the plain echo of a value, which a
policy can learn without learning SQL, from being an answer at all.
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
import time
from typing import Any

MAX_ROWS = 1000
MAX_STEPS = 5_000_000
TIMEOUT_S = 1.0
MAX_VALUE_BYTES = 1_000_000
PROGRESS_EVERY = 1000  # VM steps between progress-handler calls
ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}

Row = tuple[Any, ...]


@dataclasses.dataclass
class QueryResult:
    """The rows of a query, or ``error`` saying why there are none (the query's fault, never the env's)."""

    rows: list[Row] | None
    error: str | None = None
    tables_read: frozenset[str] = frozenset()


def run_query(database: str, query: str, *, max_rows: int = MAX_ROWS, max_steps: int = MAX_STEPS,
              timeout: float = TIMEOUT_S) -> QueryResult:
    """Run ``query`` read-only on a fresh copy of ``database`` (the SQL script that builds it), within the limits."""
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
        return QueryResult([tuple(row) for row in rows], None, frozenset(tables_read))
    finally:
        connection.close()


_AUTHORIZER_ACTIONS = (
    "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER",
    "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX",
    "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "PRAGMA",
    "READ", "SELECT", "TRANSACTION", "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE",
    "CREATE_VTABLE", "DROP_VTABLE", "FUNCTION", "SAVEPOINT", "RECURSIVE",
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

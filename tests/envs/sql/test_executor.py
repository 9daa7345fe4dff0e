"""The SQL executor's guarantees on hand-written cases: result semantics, read-only runs and limits."""

import time

import pytest

from envgym.envs.sql.executor import KILL_GRACE_S, QueryWorker, run_query, same_result

DATABASE = """CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, x REAL);
INSERT INTO t VALUES (1, 'a', 1.5), (2, NULL, 2.0), (3, 'a', NULL), (4, 'b', 0.1);"""


def rows(query, **limits):
    result = run_query(DATABASE, query, **limits)
    assert result.error is None, result.error
    return result.rows


def test_order_counts_only_when_the_gold_is_ordered():
    gold = rows("SELECT id FROM t ORDER BY id")
    reversed_rows = rows("SELECT id FROM t ORDER BY id DESC")
    assert not same_result(reversed_rows, gold, ordered=True)
    assert same_result(reversed_rows, gold, ordered=False)


def test_duplicates_count_in_a_multiset_comparison():
    gold = rows("SELECT v FROM t WHERE v = 'a'")  # two rows 'a'
    assert not same_result(rows("SELECT DISTINCT v FROM t WHERE v = 'a'"), gold, ordered=False)
    assert not same_result(rows("SELECT v FROM t WHERE v IS NOT NULL"), gold, ordered=False)


def test_null_equals_null_and_nothing_else():
    gold = rows("SELECT v FROM t")
    assert same_result(rows("SELECT v FROM t ORDER BY id DESC"), gold, ordered=False)
    assert not same_result(rows("SELECT COALESCE(v, '') FROM t"), gold, ordered=False)


def test_floats_compare_with_tolerance_and_ints_equal_reals():
    assert same_result(rows("SELECT SUM(x) FROM t"), [(3.6000000001,)], ordered=False)
    assert same_result(rows("SELECT COUNT(*) FROM t"), [(4.0,)], ordered=False)
    assert not same_result(rows("SELECT SUM(x) FROM t"), [(3.61,)], ordered=False)


def test_text_is_not_a_number():
    assert not same_result(rows("SELECT '4' FROM t LIMIT 1"), [(4,)], ordered=False)


def test_column_order_matters():
    assert not same_result(rows("SELECT v, id FROM t"), rows("SELECT id, v FROM t"), ordered=False)


def test_a_query_that_never_ends_is_stopped():
    never = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c, t WHERE n < 0"
    result = run_query(DATABASE, never, timeout=0.2)
    assert result.rows is None and "stopped" in result.error


def test_a_million_rows_are_cut_at_the_row_limit():
    million = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000000) SELECT n FROM c"
    result = run_query(DATABASE, million, max_rows=1000)
    assert result.rows is None and "more than 1000 rows" in result.error


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM t",
        "UPDATE t SET v = 'z'",
        "INSERT INTO t VALUES (9, 'z', 0)",
        "DROP TABLE t",
        "CREATE TABLE u (a)",
        "ATTACH DATABASE '/tmp/envgym-sql-attach.db' AS other",
        "PRAGMA table_info(t)",
        "BEGIN",
        "SELECT 1; DELETE FROM t",
    ],
)
def test_anything_but_a_select_is_refused(statement):
    assert run_query(DATABASE, statement).error is not None


def test_attach_creates_no_file(tmp_path):
    target = tmp_path / "other.db"
    run_query(DATABASE, f"ATTACH DATABASE '{target}' AS other")
    assert not target.exists()


def test_huge_blobs_fail_instead_of_allocating():
    assert "too big" in run_query(DATABASE, "SELECT randomblob(1000000000) FROM t").error


def test_tables_read_are_reported_and_a_constant_reads_none():
    assert run_query(DATABASE, "SELECT COUNT(*) FROM t").tables_read == {"t"}
    assert run_query(DATABASE, "SELECT 3").tables_read == frozenset()


QUADRATIC = "SELECT instr(printf('%.*c', 960000, 'a'), printf('%.*c', 480000, 'a') || 'b') FROM t LIMIT 1"


def test_a_query_stuck_inside_one_engine_step_is_killed_at_the_wall_clock_limit():
    worker = QueryWorker()
    started = time.perf_counter()
    result = worker.run(DATABASE, QUADRATIC, timeout=0.5)
    took = time.perf_counter() - started
    assert result.rows is None and result.error == "stopped: the query ran past 0.5 s"
    assert took < 0.5 + KILL_GRACE_S + 1.0  # the in-process run takes seconds: one VM step, no progress call
    assert worker.run(DATABASE, "SELECT id FROM t WHERE id = 2").rows == [(2,)]  # a fresh worker takes the next
    worker.close()


def test_the_worker_returns_values_of_every_type_as_sqlite_gives_them():
    worker = QueryWorker()
    result = worker.run(DATABASE, "SELECT id, v, x, x'00ff', 1e999 FROM t WHERE id = 2")
    assert result.rows == [(2, None, 2.0, b"\x00\xff", float("inf"))] and result.tables_read == {"t"}
    worker.close()


def test_a_result_over_the_byte_limit_is_refused():
    result = QueryWorker().run(DATABASE, "SELECT printf('%.*c', 2000, 'a') FROM t", max_bytes=4000)
    assert result.rows is None and result.error == "the query's result is larger than 4000 bytes"

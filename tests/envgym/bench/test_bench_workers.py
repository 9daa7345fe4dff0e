"""The benchmark workers' thread share (envgym/bench/report.py): concurrent runs split the cores instead of
each starting one OpenMP thread per core."""

import os
from pathlib import Path

import pytest
from helpers.thread_probe import print_threads

from envgym.bench import report
from envgym.bench.report import run_worker, share_cores

TESTS = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_threads(monkeypatch):
    """An environment of this test's own (share_cores writes to it), on a machine of 8 cores."""
    environ = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    monkeypatch.setattr(os, "environ", environ)
    monkeypatch.setattr(report, "_shared_threads", None)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)


def test_concurrent_runs_share_the_cores_and_their_workers_inherit_it(clean_threads):
    assert share_cores(1) == 8
    assert share_cores(3) == 2 and os.environ["OMP_NUM_THREADS"] == os.environ["MKL_NUM_THREADS"] == "2"
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    seen = run_worker("probe", print_threads)
    assert seen == {"omp": "2"}
    assert share_cores(16) == 1  # never zero threads


def test_a_users_own_thread_count_is_kept(clean_threads, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert share_cores(4) == 3 and os.environ["OMP_NUM_THREADS"] == "3"


def test_jobs_below_one_are_refused(clean_threads):
    with pytest.raises(ValueError, match="jobs must be >= 1, got 0"):
        share_cores(0)

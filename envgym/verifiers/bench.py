"""`envgym bench verify`: throughput and accuracy of ``envgym.verifiers.math.equivalent`` on the project's
labelled pairs, side by side with math-verify called directly (``verify(parse(gold), parse(pred))``) in the
same run.

Both are measured the same way: one untimed warm-up pass (worker start-up, parser tables), then timed passes
with every result and parse cache cleared first, so the numbers are steady-state costs of new answers, not
memoized lookups. math-verify runs on the main thread with its own defaults (it cannot run elsewhere).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

PAIRS_FILE = Path(__file__).with_name("math_pairs.jsonl")


def labelled_pairs() -> list[dict[str, Any]]:
    """The labelled set: dicts with ``category``, ``pred``, ``gold`` and ``equal`` (the right verdict)."""
    with PAIRS_FILE.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _timed_passes(check, reset, pairs: list[dict[str, Any]], passes: int) -> dict[str, Any]:
    labels = [check(p["pred"], p["gold"]) for p in pairs]  # warm-up, untimed
    seconds = []
    for _ in range(passes):
        reset()
        start = time.perf_counter()
        labels = [check(p["pred"], p["gold"]) for p in pairs]
        seconds.append(time.perf_counter() - start)
    wrong = [{"pred": p["pred"], "gold": p["gold"], "expected": p["equal"]}
             for p, label in zip(pairs, labels) if label != p["equal"]]
    best = min(seconds)
    return {"pairs_per_s": len(pairs) / best, "seconds": best, "accuracy": 1 - len(wrong) / len(pairs),
            "wrong": len(wrong), "wrong_pairs": wrong[:20]}


def _ours(pairs: list[dict[str, Any]], passes: int) -> dict[str, Any]:
    from envgym.verifiers.math import clear_cache, equivalent
    from envgym.verifiers.symbolic import shared_pool

    result = _timed_passes(equivalent, clear_cache, pairs, passes)
    result["workers"] = shared_pool().size
    return result


def _math_verify(pairs: list[dict[str, Any]], passes: int) -> dict[str, Any] | None:
    try:
        import logging

        from math_verify import parse, parser, verify
    except ImportError:
        return None
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)

    def check(pred: str, gold: str) -> bool:
        return bool(verify(parse(f"${gold}$"), parse(f"${pred}$")))

    def reset() -> None:
        parser.parse_latex_cached.cache_clear()
        parser.parse_expr_cached.cache_clear()

    return _timed_passes(check, reset, pairs, passes)


def bench_verify(
    passes: int = typer.Option(3, help="Timed passes over the set; the fastest is reported."),
    quick: bool = typer.Option(False, "--quick", help="One timed pass."),
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
) -> None:
    """Pairs/s and accuracy of envgym's math verifier and of math-verify on the labelled set."""
    from envgym.benchmarks.report import emit, machine

    pairs = labelled_pairs()
    passes = 1 if quick else max(1, passes)
    ours = _ours(pairs, passes)
    peer = _math_verify(pairs, passes)
    result: dict[str, Any] = {"bench": "verify", "pairs": len(pairs), "passes": passes, "ours": ours}
    if peer is not None:
        result["math_verify"] = peer
        result["speedup"] = ours["pairs_per_s"] / peer["pairs_per_s"]
    result["machine"] = machine()
    emit(result, as_json)

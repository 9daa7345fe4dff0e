"""`envgym bench verify`: accuracy and speed of envgym's math verifier beside math-verify's, measured in the
same run, on two sets:

- the project's labelled answer pairs (``math_pairs.jsonl``): ``equivalent(pred, gold)`` against math-verify
  called directly (``verify(parse(gold), parse(pred))``, its defaults);
- Math-Verify's own public regression cases (``math_verify_cases.jsonl``, full model outputs and reference
  solutions): ``grade`` with the gold's extracted answer (:mod:`envgym.verifiers.math_verify_suite`) against
  math-verify called exactly as its own tests call it. Reported: agreement with the expected labels, false
  positives (equal where the label says unequal), cases/s and the slowest case.

Both verifiers are measured the same way: one untimed warm-up pass (worker start-up, parser tables), then
timed passes with every result and parse cache cleared first, so the numbers are steady-state costs of new
answers, not memoized lookups. math-verify runs on the main thread (its timeouts use SIGALRM).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

PAIRS_FILE = Path(__file__).parents[1] / "verifiers" / "math_pairs.jsonl"
"""The labelled pairs ship with the verifiers (package data), which their tests read too."""


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
    wrong = [
        {"pred": p["pred"], "gold": p["gold"], "expected": p["equal"]}
        for p, label in zip(pairs, labels)
        if label != p["equal"]
    ]
    best = min(seconds)
    return {
        "pairs_per_s": len(pairs) / best,
        "seconds": best,
        "accuracy": 1 - len(wrong) / len(pairs),
        "wrong": len(wrong),
        "wrong_pairs": wrong[:20],
    }


def _suite_passes(verdict_of, reset, cases: list[dict[str, Any]], passes: int) -> dict[str, Any]:
    """The fastest of ``passes`` timed passes over the outside suite, after one untimed warm-up pass."""
    from envgym.verifiers.math_verify_suite import score

    score(verdict_of, cases)  # warm-up, untimed
    runs = []
    for _ in range(passes):
        reset()
        runs.append(score(verdict_of, cases))
    best = min(runs, key=lambda run: run["seconds"])
    best["slowest_case_s"] = max(run["slowest_case_s"] for run in runs)
    best["disagreements"] = best["disagreements"][:20]
    return best


def suite_report(cases: list[dict[str, Any]], passes: int) -> dict[str, Any]:
    """Ours and math-verify's numbers on Math-Verify's public cases, measured in the same run."""
    from envgym.verifiers.math import clear_cache
    from envgym.verifiers.math_verify_suite import math_verify_verdict, our_verdict

    report: dict[str, Any] = {"cases": len(cases), "ours": _suite_passes(our_verdict, clear_cache, cases, passes)}
    try:
        import logging

        from math_verify import parser
    except ImportError:
        return report
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)

    def reset() -> None:
        for cached in (parser.parse_latex_cached, parser.parse_expr_cached, parser.extract_latex):
            cached.cache_clear()

    report["math_verify"] = _suite_passes(math_verify_verdict, reset, cases, passes)
    report["speedup"] = report["ours"]["cases_per_s"] / report["math_verify"]["cases_per_s"]
    return report


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
    """Accuracy and speed of envgym's math verifier and of math-verify on the labelled pairs and on
    Math-Verify's public regression cases."""
    from envgym.bench.report import emit, machine
    from envgym.verifiers.math_verify_suite import load_cases

    pairs = labelled_pairs()
    passes = 1 if quick else max(1, passes)
    ours = _ours(pairs, passes)
    peer = _math_verify(pairs, passes)
    result: dict[str, Any] = {"bench": "verify", "pairs": len(pairs), "passes": passes, "ours": ours}
    if peer is not None:
        result["math_verify"] = peer
        result["speedup"] = ours["pairs_per_s"] / peer["pairs_per_s"]
    result["math_verify_suite"] = suite_report(load_cases(), passes)
    result["machine"] = machine()
    emit(result, as_json)

"""Math-Verify's public regression cases as an outside test of envgym's math verifier.

``math_verify_cases.jsonl`` (next to this file; produced by ``scripts/collect_math_verify_cases.py`` from
Math-Verify 0.9.0, Apache-2.0, see ``math_verify_cases.NOTICE``) holds (gold, prediction, expected) triples that
Math-Verify's own tests check with ``verify(parse(gold), parse(pred))``, many of them real model outputs. Both
sides are full texts: a gold can be a whole reference solution, a prediction a whole response.

We grade each case as a user of envgym would: the gold's answer is :func:`extract_answer` of the gold text and
the prediction goes through :func:`grade`. The formats follow the extraction targets the case's own test
enables (``match_types``): LaTeX allows the last math span as a fallback, ``expr`` the last number, both allow
whichever of the two comes last (Math-Verify's own fallback).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from envgym.verifiers.math_extract import MARKED_FORMATS, FormatSpec

CASES_FILE = Path(__file__).with_name("math_verify_cases.jsonl")

_FALLBACKS = {
    ("latex", "expr"): ("last_math", "last_number"),
    ("latex",): ("last_math",),
    ("expr",): ("last_number",),
}


def load_cases(path: Path = CASES_FILE) -> list[dict[str, Any]]:
    """The cases: dicts with ``id``, ``source``, ``test``, ``gold``, ``pred``, ``expected``, ``helper``, ``options``."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def formats_for(case: dict[str, Any]) -> tuple[FormatSpec, ...]:
    """Our answer formats for a case: the explicit markers, then the last display math or the fallback its
    ``match_types`` allow, whichever comes last."""
    match_types = tuple(case["options"].get("match_types", ("latex", "expr")))
    return (*MARKED_FORMATS, ("display_math", *_FALLBACKS[match_types]))


def our_verdict(case: dict[str, Any], timeout: float = 2.0) -> bool:
    """envgym's verdict on a case: the gold text's answer, then ``grade`` of the prediction against it."""
    from envgym.verifiers.math import extract_answer, grade

    formats = formats_for(case)
    gold = extract_answer(case["gold"], formats)
    return gold is not None and grade(case["pred"], gold, formats=formats, timeout=timeout).correct


def math_verify_verdict(case: dict[str, Any]) -> bool:
    """Math-Verify's verdict, called exactly as the case's own test calls it (same extraction targets, float
    rounding, strictness and set/relation option). Main thread only (Math-Verify's timeouts use SIGALRM)."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    if case["helper"] == "verify_parse":
        return bool(verify(parse(case["gold"]), parse(case["pred"])))
    options = case["options"]
    targets = [
        LatexExtractionConfig(boxed_match_priority=0) if kind == "latex" else ExprExtractionConfig()
        for kind in options["match_types"]
    ]
    return bool(
        verify(
            parse(case["gold"], targets),
            parse(case["pred"], targets),
            float_rounding=options["precision"],
            strict=options["strict"],
            allow_set_relation_comp=options["allow_set_relation_comp"],
        )
    )


def score(verdict_of, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Agreement with the expected labels, false positives (equal where the label says unequal), and the
    slowest case, for ``verdict_of(case) -> bool`` run once over ``cases``."""
    wrong, slowest, slowest_id = [], 0.0, None
    start = time.perf_counter()
    for case in cases:
        case_start = time.perf_counter()
        verdict = verdict_of(case)
        seconds = time.perf_counter() - case_start
        if seconds > slowest:
            slowest, slowest_id = seconds, case["id"]
        if verdict != case["expected"]:
            wrong.append({"id": case["id"], "expected": case["expected"], "got": verdict})
    total = time.perf_counter() - start
    return {
        "cases": len(cases),
        "agreement": 1 - len(wrong) / len(cases),
        "false_positives": sum(1 for w in wrong if w["got"]),
        "disagreements": wrong,
        "seconds": total,
        "cases_per_s": len(cases) / total,
        "slowest_case_s": slowest,
        "slowest_case": slowest_id,
    }

"""Math answer checking: extract the final answer, decide equivalence, grade a response.

``extract_answer`` lives in :mod:`envgym.verifiers.math_extract`. ``equivalent(pred, gold)`` runs in three
stages, cheapest first:

1. normalization (:mod:`envgym.verifiers.math_normalize`) and the structural comparison with exact numbers
   (:mod:`envgym.verifiers.math_structure`), which decide most real pairs in microseconds without sympy;
2. guards: answers longer than ``MAX_ANSWER_CHARS`` and integer powers too large to expand are unequal;
3. the same structural comparison with a sympy leaf (:mod:`envgym.verifiers.math_sympy`) in a pool of worker
   processes (:mod:`envgym.verifiers.symbolic`) with a hard timeout: a comparison that overruns gets its
   worker killed and counts as unequal.

Everything here is thread-safe and never blocks past the timeout (after the workers' one-time start), so it
can be called from threads, ``asyncio.to_thread`` and FastAPI endpoints. Results are cached (LRU) because RL
groups repeat answers: G samples of one task share the gold and often the prediction.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from envgym.verifiers.math_extract import ANSWER_FORMATS, LENIENT_FORMATS, FormatSpec, extract_answer
from envgym.verifiers.math_normalize import MAX_ANSWER_CHARS, normalize, too_large
from envgym.verifiers.math_structure import fast_compare

__all__ = ["Grade", "equivalent", "extract_answer", "grade", "normalize", "compare", "clear_cache", "warm_up",
           "ANSWER_FORMATS", "LENIENT_FORMATS"]

def compare(pred: str, gold: str, *, timeout: float = 2.0) -> tuple[bool, str]:
    """``(equal, how)``: ``how`` names the stage that decided (``fast``, ``symbolic``) or why the pair is
    unequal without a comparison (``too_long``, ``too_large``, ``timeout``)."""
    if not isinstance(pred, str) or not isinstance(gold, str):
        raise TypeError(f"pred and gold must be strings, got {type(pred).__name__} and {type(gold).__name__}")
    if timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    try:
        return _compare_cached(pred, gold, float(timeout))
    except _TimedOut:
        return False, "timeout"


class _TimedOut(Exception):
    """Raised inside the cached function so that a timeout (maybe load, not the pair) is never cached."""


def clear_cache() -> None:
    """Forget cached comparisons (benchmarks measure cold runs)."""
    _compare_cached.cache_clear()


@functools.lru_cache(maxsize=65536)
def _compare_cached(pred: str, gold: str, timeout: float) -> tuple[bool, str]:
    if len(pred) > MAX_ANSWER_CHARS or len(gold) > MAX_ANSWER_CHARS:
        return False, "too_long"
    pred_norm, gold_norm = normalize(pred), normalize(gold)
    verdict = fast_compare(pred_norm, gold_norm)
    if verdict is not None:
        return verdict, "fast"
    if too_large(pred_norm) or too_large(gold_norm):
        return False, "too_large"
    from envgym.verifiers.symbolic import shared_pool

    result = shared_pool().compare(pred_norm, gold_norm, timeout)
    if result is None:
        raise _TimedOut
    return result, "symbolic"


def equivalent(pred: str, gold: str, *, timeout: float = 2.0) -> bool:
    """Whether the answer ``pred`` equals the gold answer ``gold`` (both already extracted).

    Thread-safe; returns within ``timeout`` seconds (plus the workers' one-time start). A comparison that
    cannot finish in time counts as unequal.
    """
    return compare(pred, gold, timeout=timeout)[0]


def warm_up() -> None:
    """Start the symbolic worker processes now and wait until they are ready (one to three seconds), e.g.
    in a server's start-up, so that no request waits for them."""
    from envgym.verifiers.symbolic import shared_pool

    shared_pool().wait_ready()


@dataclasses.dataclass(frozen=True)
class Grade:
    """The verdict on one response: ``reward`` (1.0 or 0.0), the ``extracted`` answer (None if none was
    found) and a short ``reason``: ``correct``, ``incorrect``, ``no_answer``, ``timeout``, ``too_long``,
    ``too_large``."""

    reward: float
    extracted: str | None
    reason: str

    @property
    def correct(self) -> bool:
        return self.reward > 0


def grade(response: str, gold: str, *, formats: Sequence[FormatSpec] = ANSWER_FORMATS, timeout: float = 2.0) -> Grade:
    """Extract the final answer from ``response`` and compare it with ``gold``."""
    extracted = extract_answer(response, formats)
    if extracted is None:
        return Grade(0.0, None, "no_answer")
    equal, how = compare(extracted, str(gold), timeout=timeout)
    if equal:
        return Grade(1.0, extracted, "correct")
    return Grade(0.0, extracted, how if how in ("timeout", "too_long", "too_large") else "incorrect")

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
import re
from collections.abc import Sequence

from envgym.verifiers.math_conventions import DEFAULT, Conventions
from envgym.verifiers.math_extract import (
    ANSWER_FORMATS,
    LENIENT_FORMATS,
    STRICT_FORMATS,
    FormatSpec,
    extract_answer,
    final_text,
)
from envgym.verifiers.math_form import FORMS, literal_error
from envgym.verifiers.math_normalize import MAX_ANSWER_CHARS, normalize, too_large
from envgym.verifiers.math_structure import fast_compare

__all__ = [
    "Grade",
    "Conventions",
    "equivalent",
    "extract_answer",
    "grade",
    "normalize",
    "compare",
    "clear_cache",
    "warm_up",
    "ANSWER_FORMATS",
    "LENIENT_FORMATS",
    "STRICT_FORMATS",
    "FORMS",
]

_CHOICE_GOLD = re.compile(r"\(?\s*([A-J])\s*\)?")


def compare(pred: str, gold: str, *, timeout: float = 2.0, conventions: Conventions = DEFAULT) -> tuple[bool, str]:
    """``(equal, how)``: ``how`` names the stage that decided (``fast``, ``symbolic``) or why the pair is
    unequal without a comparison (``too_long``, ``too_large``, ``timeout``)."""
    if not isinstance(pred, str) or not isinstance(gold, str):
        raise TypeError(f"pred and gold must be strings, got {type(pred).__name__} and {type(gold).__name__}")
    if timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    if not isinstance(conventions, Conventions):
        raise TypeError(f"conventions must be an envgym.verifiers.math.Conventions, got {type(conventions).__name__}")
    try:
        return _compare_cached(pred, gold, float(timeout), conventions)
    except _TimedOut:
        return False, "timeout"


class _TimedOut(Exception):
    """Raised inside the cached function so that a timeout (maybe load, not the pair) is never cached."""


def clear_cache() -> None:
    """Forget cached comparisons (benchmarks measure cold runs)."""
    _compare_cached.cache_clear()


@functools.lru_cache(maxsize=65536)
def _compare_cached(pred: str, gold: str, timeout: float, conventions: Conventions) -> tuple[bool, str]:
    if len(pred) > MAX_ANSWER_CHARS or len(gold) > MAX_ANSWER_CHARS:
        return False, "too_long"
    pred_norm, gold_norm = normalize(pred), normalize(gold)
    verdict = fast_compare(pred_norm, gold_norm, conventions)
    if verdict is not None:
        return verdict, "fast"
    if too_large(pred_norm) or too_large(gold_norm):
        return False, "too_large"
    from envgym.verifiers.symbolic import shared_pool

    result = shared_pool().compare(pred_norm, gold_norm, timeout, conventions.to_dict())
    if result is None:
        raise _TimedOut
    return result, "symbolic"


def equivalent(pred: str, gold: str, *, timeout: float = 2.0, conventions: Conventions = DEFAULT) -> bool:
    """Whether the answer ``pred`` equals the gold answer ``gold`` (both already extracted), read under
    ``conventions`` (see :class:`Conventions`).

    Thread-safe; returns within ``timeout`` seconds (plus the workers' one-time start). A comparison that
    cannot finish in time counts as unequal.
    """
    return compare(pred, gold, timeout=timeout, conventions=conventions)[0]


def warm_up() -> None:
    """Start the symbolic worker processes now and wait until they are ready (one to three seconds), e.g.
    in a server's start-up, so that no request waits for them."""
    from envgym.verifiers.symbolic import shared_pool

    shared_pool().wait_ready()


@dataclasses.dataclass(frozen=True)
class Grade:
    """The verdict on one response: ``reward`` (1.0 or 0.0), the ``extracted`` answer (None if none was
    found) and a short ``reason``: ``correct``, ``incorrect``, ``no_answer``, ``not_simplified`` (the task asks
    for a literal and the answer is not one), ``timeout``, ``too_long``, ``too_large``; ``detail`` says more
    where the reason alone would not."""

    reward: float
    extracted: str | None
    reason: str
    detail: str = ""

    @property
    def correct(self) -> bool:
        return self.reward > 0


def grade(
    response: str,
    gold: str,
    *,
    formats: Sequence[FormatSpec] = ANSWER_FORMATS,
    timeout: float = 2.0,
    form: str = "any",
    conventions: Conventions = DEFAULT,
) -> Grade:
    """Extract the final answer from ``response`` and compare it with ``gold``.

    form: ``"any"`` (an answer equal in value, in any form) or ``"literal"`` (a simplified literal: the task
        asks to compute, simplify or evaluate, so an expression or equation earns 0, see
        :mod:`envgym.verifiers.math_form`; numbers are then compared exactly).
    conventions: how lists, percentages and decimals are read (:class:`Conventions`).
    A gold that is a choice letter (``B``, ``(B)``) also finds the letter in its common phrasings ("(B)",
    "B)", "answer is B", "**B**") unless ``formats`` is ``STRICT_FORMATS``.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    gold = str(gold)
    extracted = extract_answer(response, formats)
    if _CHOICE_GOLD.fullmatch(gold.strip()) and tuple(formats) != STRICT_FORMATS:
        extracted = _choice(response, extracted)
    if extracted is None:
        return Grade(0.0, None, "no_answer")
    if len(extracted) > MAX_ANSWER_CHARS:
        return Grade(0.0, extracted, "too_long", f"answers are at most {MAX_ANSWER_CHARS} characters")
    if form == "literal":
        error = literal_error(extracted)
        if error is not None:
            return Grade(0.0, extracted, "not_simplified", error)
        conventions = dataclasses.replace(conventions, tolerance=False)
    equal, how = compare(extracted, gold, timeout=timeout, conventions=conventions)
    if equal:
        return Grade(1.0, extracted, "correct")
    return Grade(0.0, extracted, how if how in ("timeout", "too_long", "too_large") else "incorrect")


def _choice(response: str, extracted: str | None) -> str | None:
    """The letter a response commits to, for a multiple-choice gold: in the extracted answer if there is one
    (``\\boxed{B}``, "the answer is (B) 42"), else in the whole response's common phrasings."""
    from envgym.verifiers.choice import extract_choice

    letters = "ABCDEFGHIJ"
    if extracted is not None:
        return extract_choice(f"Answer: {normalize(extracted)}", letters) or extracted
    text = final_text(response)
    return None if text is None else extract_choice(text, letters)

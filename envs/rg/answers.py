"""Checks on a policy's answer that hold for every reasoning-gym task, and each task's reference answer.

Task-independent, so they cover scorers we have not read: a number task refuses NaN and infinities before its
scorer sees them (``min(1, exp(-nan))`` is 1 in complex_arithmetic), and an answer that lists the gold among
other words is a hedge, never credited, whatever the scorer would give it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from envgym.envs.rg.solvers import antiderivative, rush_hour_solution

# A gold answer made of numbers and arithmetic/list punctuation only ("-3.5", "2/3", "(1, 2)", "48.0 + 36.0i").
_NUMERIC_GOLD = re.compile(r"[\s\d.,+\-*/()\[\]eEij]*\d[\s\d.,+\-*/()\[\]eEij]*")
_NON_FINITE_WORD = re.compile(r"(?<![a-z])(nan|inf|infinity)(?![a-z])", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_TOKEN = re.compile(r"\w+(?:\.\w+)*")


def extract_answer(text: str) -> str | None:
    """The text of the last ``<answer>...</answer>`` (stripped), or None without one.

    reasoning-gym's ``extract_answer`` does the same with the regex ``<answer>\\s?(.*?)\\s?</answer>``, which
    takes quadratic time on text full of unclosed ``<answer>`` tags (over 30 s on 100 KB); two ``rfind`` calls
    are linear. Of nested tags, the innermost pair's text is the answer.
    """
    end = text.rfind("</answer>")
    start = text.rfind("<answer>", 0, end) if end >= 0 else -1
    return None if start < 0 else text[start + len("<answer>") : end].strip()


def refuse_before_scoring(answer: str | None, gold: Any) -> str | None:
    """Why ``answer`` is refused as a policy mistake before any scorer runs, or None to score it."""
    if answer is None or gold is None or not _NUMERIC_GOLD.fullmatch(str(gold)):
        return None
    if _NON_FINITE_WORD.search(answer) or any(not math.isfinite(float(number)) for number in _NUMBER.findall(answer)):
        return "the task wants a number: NaN and infinities (or literals too large for a float) are refused"
    return None


def is_hedge(answer: str | None, gold: Any) -> bool:
    """Whether the answer's words contain the gold's words as a run plus other words (case-insensitive)."""
    if answer is None or gold is None:
        return False
    answer_words, gold_words = _TOKEN.findall(answer.lower()), _TOKEN.findall(str(gold).lower())
    if not gold_words or len(answer_words) <= len(gold_words):
        return False

    # Words joined with a separator no word contains, so a substring search (linear in the answer) finds the run.
    def joined(words: list[str]) -> str:
        return "\0" + "\0".join(words) + "\0"

    return joined(gold_words) in joined(answer_words)


def reference_answer(task: str, entry: dict[str, Any]) -> str | None:
    """The text inside ``<answer>`` that a correct solver writes for this entry, or None where none is known.

    Tasks with no single answer keep a known solution in the metadata (a colouring, a cube solution) or get
    one from a solver (rush hour); boxnet keeps none and we have no planner for it, so it returns None. An
    integration gold left as sympy's unevaluated ``Integral(...)`` is replaced by a computed antiderivative.
    """
    metadata = entry.get("metadata", {})
    if task in ("simple_integration", "intermediate_integration") and "Integral(" in str(entry.get("answer")):
        return antiderivative(metadata["integrand"], metadata["variable"])
    if entry.get("answer") is not None:
        return str(entry["answer"])
    if task == "graph_color" and "possible_answer" in metadata:
        return json.dumps({str(vertex): color for vertex, color in metadata["possible_answer"].items()})
    if task == "rubiks_cube" and "example_correct_answer" in metadata:
        return str(metadata["example_correct_answer"])
    if task == "rush_hour" and "board_config" in metadata:
        return rush_hour_solution(metadata["board_config"])
    return None

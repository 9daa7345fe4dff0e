"""TableQA-v0: answer a question about a generated table (Guru's tabular domain).

Tables of products, cities or employees (5-15 rows, 3-6 columns) are shown as Markdown, CSV or JSON
(``table_format=``); questions ask for a lookup, a filtered count, the row with the highest/lowest value, a total or
mean of a (filtered) column, or which of two rows has the larger value. Answers go in ``<answer>...</answer>``:

- **text** (a name, a category): normalized exact match (``envgym.verifiers.qa``: case, punctuation, articles and
  spaces do not matter); a list of candidates earns 0.
- **numbers**: a plain ASCII decimal (``1234``, ``1,234``, ``-3.25``; no units, no expressions). The tolerance
  comes from the answer's written precision: ``a`` with ``p`` decimal places is right when
  ``|a - exact| <= 0.5 * 10**-p``. It must give at least the places the exact value needs (at most 2, which the
  question asks for on means), so a rounder answer does not buy itself a wider tolerance: ``12.3`` is wrong for a
  mean of 12.3467, ``12.35`` and ``12.347`` are right. ``envgym.verifiers.math`` is not used here because its
  tolerance is relative and fixed, and this rule is the written-precision one the task states.

Two different ``<answer>`` tags, or a numeric answer that is not a plain number, are refused (``action_valid=False``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.answer_tag import single_answer
from envgym.envs.tables.generate import DOMAINS, FORMATS, make_question, make_table
from envgym.tasks import ProceduralTaskSource
from envgym.verifiers.qa import exact_match, is_candidate_list

MAX_PLACES = 2
MAX_DRAWS = 50
_NUMBER = re.compile(r"(-?)((?:[0-9]{1,3}(?:,[0-9]{3})+)|[0-9]{1,30})(?:\.([0-9]{1,30}))?")


def required_places(exact: Fraction) -> int:
    """The decimal places that write ``exact`` exactly, at most ``MAX_PLACES`` (means are rounded to 2)."""
    return next((p for p in range(MAX_PLACES + 1) if (exact * 10**p).denominator == 1), MAX_PLACES)


def format_number(value: Fraction) -> str:
    """``value`` rounded to its required places, as a plain decimal."""
    places = required_places(value)
    scaled = round(value * 10**places)
    sign, digits = "-" if scaled < 0 else "", str(abs(scaled)).rjust(places + 1, "0")
    return sign + (f"{digits[:-places]}.{digits[-places:]}" if places else digits)


def parse_number(text: str) -> tuple[Fraction, int] | None:
    """``(value, decimal places written)`` of a plain ASCII decimal, else ``None``."""
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        return None
    sign, whole, fraction = match.group(1), match.group(2).replace(",", ""), match.group(3) or ""
    value = Fraction(int(whole + fraction), 10 ** len(fraction))
    return (-value if sign else value), len(fraction)


def number_is_right(answer: str, exact: Fraction) -> bool | None:
    """Whether ``answer`` is ``exact`` to its written precision (see the module docstring); ``None``: not a number."""
    parsed = parse_number(answer)
    if parsed is None:
        return None
    value, places = parsed
    return places >= required_places(exact) and abs(value - exact) <= Fraction(1, 2 * 10**places)


class TableQA(Env):
    description = "Answer a question about a generated table (Markdown, CSV or JSON); computed answers."
    reward_ranges = {"correct": RewardRange()}

    def __init__(self, table_format: str = "markdown", domains: list[str] | None = None):
        if table_format not in FORMATS:
            raise ValueError(f"table_format must be one of {FORMATS}, got {table_format!r}")
        domains = list(DOMAINS) if domains is None else domains
        if not isinstance(domains, (list, tuple)) or not domains or any(d not in DOMAINS for d in domains):
            raise ValueError(f"domains must be a non-empty list from {sorted(DOMAINS)}, got {domains!r}")
        self.table_format, self.domains = table_format, list(domains)
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        for _ in range(MAX_DRAWS):
            table = make_table(rng, self.domains[int(rng.integers(len(self.domains)))])
            question = make_question(rng, table)
            if question is not None:
                break
        else:  # unreachable in practice: most draws are unambiguous
            raise RuntimeError(f"no unambiguous question in {MAX_DRAWS} draws")
        numeric = isinstance(question.answer, Fraction)
        how = "a plain number, no units" if numeric else "the name or value as written in the table"
        prompt = (
            f"Here is a table of {table.domain} ({self.table_format}):\n\n{table.render(self.table_format)}\n\n"
            f"Question: {question.text}\nGive the answer ({how}) inside <answer></answer>."
        )
        answer = {
            "type": "number" if numeric else "text",
            "exact": str(question.answer),
            "display": format_number(question.answer) if numeric else question.answer,
            "wrong": format_number(question.wrong) if numeric else question.wrong,
        }
        return Task(
            id=f"tableqa-{self.table_format}-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=answer,
            metadata={
                "kind": question.kind,
                "domain": table.domain,
                "rows": len(table.rows),
                "columns": len(table.columns),
            },
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {"kind": task.metadata["kind"], "domain": task.metadata["domain"]}

    def reference_action(self) -> Action | None:
        return None if self.task is None else f"<answer>{self.task.answer['display']}</answer>"

    def wrong_action(self) -> Action | None:
        """Another row's value of the asked column, or the exact number plus one."""
        return None if self.task is None else f"<answer>{self.task.answer['wrong']}</answer>"

    def _step(self, action: Action) -> StepResult:
        gold = self.task.answer
        info: dict[str, Any] = {
            "kind": self.task.metadata["kind"],
            "reward_components": {"correct": 0.0},
            "correct": False,
        }
        answer, problem = single_answer(action_text(action))
        if answer is not None and gold["type"] == "number":
            correct = number_is_right(answer, Fraction(gold["exact"]))
            if correct is None:
                answer, problem = None, f"{answer[:40]!r} is not a plain number (e.g. 1234 or 12.35)"
        elif answer is not None:
            correct = bool(exact_match(answer, gold["display"])) and not is_candidate_list(answer, gold["display"])
        if answer is None:
            return [], 0.0, True, False, {**info, "action_valid": False, "action_error": problem}
        components = {"correct": float(correct)}
        info.update(action_valid=True, answer=answer, correct=correct, reward_components=components)
        return [], reward_total(components), True, False, info

"""The single-turn math env every math task family shares: one question, one answer, graded by
:func:`envgym.verifiers.math.grade`.

Reward components: ``correct`` (1 when the final answer equals the gold answer, else 0). A response with no
final answer (no ``\\boxed{}``, ``####``, ``<answer>``, "the answer is" or display math; with ``strict=True``
only ``\\boxed{}`` counts), an answer over the length cap, or, where the task asks for a value (``form="literal"``),
an answer that is not a simplified literal gets 0 and ``action_valid=False`` with the reason in
``info["action_error"]``. The episode terminates after the one answer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total

ANSWER_INSTRUCTION = "Put your final answer in \\boxed{}."

_FORM_MISTAKES = {
    "no_answer": "no final answer found: put it in \\boxed{}",
    "too_long": "the final answer is too long",
    "not_simplified": "the answer is not a simplified value",
}


class MathAnswerEnv(Env):
    """Subclasses set ``self.tasks`` (any TaskSource whose tasks carry the gold answer as a string).

    form: ``"any"`` (any form equal in value) or ``"literal"`` (compute/simplify tasks: the answer must be a
        simplified literal, see :mod:`envgym.verifiers.math_form`).
    strict: only ``\\boxed{}`` counts as a final answer (for training where the format is part of the reward).
    conventions: fields of :class:`envgym.verifiers.math.Conventions` (``{"percent": "unit"}`` for a dataset
        whose "what percent" golds are written as plain figures), checked here.
    """

    reward_ranges = {"correct": RewardRange()}

    def __init__(
        self,
        timeout: float = 2.0,
        *,
        form: str = "any",
        strict: bool = False,
        conventions: dict[str, Any] | None = None,
    ):
        from envgym.verifiers.math import FORMS, Conventions

        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {form!r}")
        unknown = set(conventions or {}) - {"lists", "percent", "tolerance"}
        if unknown:
            raise ValueError(f"unknown conventions {sorted(unknown)}; known: lists, percent, tolerance")
        self.timeout, self.form, self.strict = timeout, form, bool(strict)
        self.conventions = Conventions(**(conventions or {}))

    def answers_equivalent(self, first: str, second: str) -> bool:
        """Whether two final answers are one value (``1/2``, ``0.5``, ``\\frac{1}{2}``): what group votes and
        ``maj@k`` cluster answers with (:func:`envgym.rewards.answer_equivalence`)."""
        from envgym.verifiers.math import equivalent

        return equivalent(first, second, timeout=self.timeout, conventions=self.conventions)

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        if task.answer is None:
            raise ValueError(f"task {task.id!r} has no gold answer; math envs need one to grade against")
        return task.prompt(), {}

    def _step(self, action: Action) -> StepResult:
        from envgym.verifiers.math import ANSWER_FORMATS, STRICT_FORMATS, grade

        formats = STRICT_FORMATS if self.strict else ANSWER_FORMATS
        result = grade(
            action_text(action),
            str(self.task.answer),
            formats=formats,
            timeout=self.timeout,
            form=self.form,
            conventions=self.conventions,
        )
        components = {"correct": result.reward}
        info = {
            "reward_components": components,
            "correct": result.correct,
            "answer": result.extracted,
            "reason": result.reason,
            "action_valid": result.reason not in _FORM_MISTAKES,
        }
        if result.reason in _FORM_MISTAKES:
            info["action_error"] = _FORM_MISTAKES[result.reason] + (f": {result.detail}" if result.detail else "")
        return [], reward_total(components), True, False, info

    def reference_action(self) -> Action | None:
        """The gold answer in the required format (``\\boxed{gold}``)."""
        if self.task is None or self.task.answer is None:
            return None
        return f"The answer is \\boxed{{{self.task.answer}}}."

    def wrong_action(self) -> Action | None:
        """An honest wrong answer in the required format: the gold plus one where the gold is a number, else 0
        (or 1 where 0 is right)."""
        if self.task is None or self.task.answer is None:
            return None
        gold = str(self.task.answer).strip()
        if len(gold) == 1 and gold.isalpha():  # a multiple-choice letter
            return f"The answer is \\boxed{{{'B' if gold.upper() == 'A' else 'A'}}}."
        try:
            value = Fraction(gold)
        except (ValueError, ZeroDivisionError):
            from envgym.verifiers.math import equivalent

            wrong = "1" if equivalent("0", gold, timeout=self.timeout) else "0"
        else:
            wrong = str(value + 1)
        return f"The answer is \\boxed{{{wrong}}}."

"""Arithmetic-v0: evaluate an arithmetic expression exactly (procedural, seeded, with a difficulty knob).

Difficulty d (1-5) sets the number of operands (d + 1), the size of the numbers (up to 10^min(d, 3)) and the
operators: + and - at 1, * from 2, / from 3 (exact fractions), parentheses from 4. Answers are computed with
``fractions.Fraction``, so "3/4" is the gold answer for 3/4, never 0.75. The task is to compute, so the answer must
be a simplified literal (``form="literal"``): the question's expression copied into the box earns 0.
"""

from __future__ import annotations

import operator as operator_module
from fractions import Fraction

import numpy as np

from envgym.core import Task
from envgym.envs.math.answer import ANSWER_INSTRUCTION, MathAnswerEnv
from envgym.tasks import ProceduralTaskSource

MAX_DIFFICULTY = 5
OPERATIONS = {
    "+": operator_module.add,
    "-": operator_module.sub,
    "*": operator_module.mul,
    "/": operator_module.truediv,
}


def _format(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


class Arithmetic(MathAnswerEnv):
    description = "Evaluate an arithmetic expression exactly; difficulty 1-5."

    def __init__(self, difficulty: int = 2, timeout: float = 2.0, *, form: str = "literal", strict: bool = False):
        if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be an integer from 1 to {MAX_DIFFICULTY}, got {difficulty!r}")
        super().__init__(timeout, form=form, strict=strict)
        self.difficulty = difficulty
        self.tasks = ProceduralTaskSource(self._make_task)

    def _expression(self, rng: np.random.Generator) -> tuple[str, Fraction]:
        operators = ["+", "-"] + (["*"] if self.difficulty >= 2 else []) + (["/"] if self.difficulty >= 3 else [])
        high = 10 ** min(self.difficulty, 3)
        text, value = self._operand(rng, high)
        for _ in range(self.difficulty):
            operator = str(rng.choice(operators))
            right_text, right_value = self._operand(rng, high)
            if operator == "/" and right_value == 0:
                right_text, right_value = "1", Fraction(1)
            # The value is computed left to right, so the text groups what came before whenever precedence
            # would bind the operator to the last operand only (and at random from difficulty 4).
            if (operator in "*/" and any(op in text for op in "+-")) or (self.difficulty >= 4 and rng.random() < 0.3):
                text = f"({text})"
            value = OPERATIONS[operator](value, right_value)
            text = f"{text} {operator} {right_text}"
        return text, value

    @staticmethod
    def _operand(rng: np.random.Generator, high: int) -> tuple[str, Fraction]:
        number = int(rng.integers(0, high))
        return str(number), Fraction(number)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        text, value = self._expression(rng)
        prompt = f"Compute {text}. Give the exact value (a fraction if it is not an integer). {ANSWER_INSTRUCTION}"
        return Task(
            id=f"arithmetic-d{self.difficulty}-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=_format(value),
            metadata={"difficulty": self.difficulty, "expression": text},
        )

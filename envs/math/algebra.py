"""Algebra-v0: solve equations (procedural, seeded, with a difficulty knob; answers exact by construction).

The solution is drawn first and the equation built around it, so the gold answer is exact:
1. ``a x + b = c`` with an integer solution;
2. ``a x + b = c x + d`` with a fractional solution;
3. a monic quadratic with two integer roots (answer: both roots, in any order, e.g. ``-2, 5``);
4. a 2x2 linear system with an integer solution (answer: the ordered pair ``(x, y)``);
5. a 2x2 linear system with a fractional solution.
Answers must be simplified literals (``form="literal"``): ``x = 7/2`` or ``7/2``, never ``\\frac{14}{4}`` or an
equation left to solve.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from envgym.core import Task
from envgym.envs.math.answer import ANSWER_INSTRUCTION, MathAnswerEnv
from envgym.tasks import ProceduralTaskSource

MAX_DIFFICULTY = 5


def _number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _linear(coefficient: int, variable: str, constant: int) -> str:
    """``3x - 4``-style text for ``coefficient * variable + constant``."""
    head = {1: variable, -1: f"-{variable}"}.get(coefficient, f"{coefficient}{variable}")
    if constant == 0:
        return head
    return f"{head} {'+' if constant > 0 else '-'} {abs(constant)}"


def _nonzero(rng: np.random.Generator, low: int, high: int) -> int:
    value = 0
    while value == 0:
        value = int(rng.integers(low, high + 1))
    return value


class Algebra(MathAnswerEnv):
    description = "Solve linear equations, quadratics and 2x2 systems exactly; difficulty 1-5."

    def __init__(self, difficulty: int = 1, timeout: float = 2.0, *, form: str = "literal", strict: bool = False):
        if isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be an integer from 1 to {MAX_DIFFICULTY}, got {difficulty!r}")
        super().__init__(timeout, form=form, strict=strict)
        self.difficulty = difficulty
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        make = {
            1: self._linear_integer,
            2: self._linear_fraction,
            3: self._quadratic,
            4: self._system,
            5: self._system,
        }[self.difficulty]
        question, answer = make(rng)
        prompt = f"{question} {ANSWER_INSTRUCTION}"
        return Task(
            id=f"algebra-d{self.difficulty}-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=answer,
            metadata={"difficulty": self.difficulty},
        )

    def _linear_integer(self, rng: np.random.Generator) -> tuple[str, str]:
        x, a, b = int(rng.integers(-20, 21)), _nonzero(rng, -12, 12), int(rng.integers(-50, 51))
        return f"Solve for x: {_linear(a, 'x', b)} = {a * x + b}.", str(x)

    def _linear_fraction(self, rng: np.random.Generator) -> tuple[str, str]:
        a, c = _nonzero(rng, -12, 12), _nonzero(rng, -12, 12)
        while c == a:
            c = _nonzero(rng, -12, 12)
        b, d = int(rng.integers(-30, 31)), int(rng.integers(-30, 31))
        x = Fraction(d - b, a - c)
        return f"Solve for x: {_linear(a, 'x', b)} = {_linear(c, 'x', d)}.", _number(x)

    def _quadratic(self, rng: np.random.Generator) -> tuple[str, str]:
        r, s = int(rng.integers(-12, 13)), int(rng.integers(-12, 13))
        while s == r:
            s = int(rng.integers(-12, 13))
        b, c = -(r + s), r * s
        equation = "x^2" + (f" {'+' if b > 0 else '-'} {_linear(abs(b), 'x', 0)}" if b else "")
        equation += f" {'+' if c > 0 else '-'} {abs(c)}" if c else ""
        roots = ", ".join(str(v) for v in sorted((r, s)))
        return f"Find all real solutions of {equation} = 0. List them separated by commas.", roots

    def _system(self, rng: np.random.Generator) -> tuple[str, str]:
        while True:
            a, b, c, d = (_nonzero(rng, -9, 9) for _ in range(4))
            if a * d - b * c != 0:
                break
        if self.difficulty == 4:
            x, y = Fraction(int(rng.integers(-10, 11))), Fraction(int(rng.integers(-10, 11)))
            e, f = a * x + b * y, c * x + d * y
        else:
            e, f = int(rng.integers(-30, 31)), int(rng.integers(-30, 31))
            det = a * d - b * c
            x, y = Fraction(e * d - b * f, det), Fraction(a * f - c * e, det)

        def side(p: int, q: int) -> str:
            return f"{_linear(p, 'x', 0)} {'+' if q > 0 else '-'} {_linear(abs(q), 'y', 0)}"

        question = (
            f"Solve the system {side(a, b)} = {_number(Fraction(e))} and {side(c, d)} = {_number(Fraction(f))}. "
            "Answer with the ordered pair (x, y)."
        )
        return question, f"({_number(x)}, {_number(y)})"

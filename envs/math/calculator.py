"""math/Calculator-v0: multi-digit arithmetic with a calculator tool, the smallest task where a tool pays.

A 135M model gets ``347 * 86`` right almost never in its head, and almost always by calling
``<calc>347 * 86</calc>`` and copying the ``<output>29842</output>`` the env returns into ``\\boxed{}``: two
turns, one call, a verifiable answer. That makes it the recipe for teaching a small model to use a tool on CPU
(``recipes/smollm2-tool-cpu.yaml``).

The calculator never runs the policy's text: it is read by
:func:`envgym.verifiers.safe_expr.evaluate_arithmetic`, an :mod:`ast` walk that accepts number literals,
``+ - * /``, ``**`` with small integer exponents and parentheses, and nothing else (names, calls, attributes
are refused), with every size bounded. A refused or malformed expression is the policy's mistake: the tool
answers with the reason, and :class:`~envgym.tools.ToolEnv` marks the turn ``action_valid=False``.
Reward components: ``correct`` (1/0) on the answering turn, ``tool_cost`` per call if ``call_cost`` is set.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from envgym.core import Task
from envgym.envs.math.answer import ANSWER_INSTRUCTION, MathAnswerEnv
from envgym.tasks import ProceduralTaskSource
from envgym.tools import Tool, ToolEnv

OPERATIONS = ("*", "+")
MAX_DIGITS = 6


class CalculationTasks(MathAnswerEnv):
    """Single-turn tasks ``a op b op ...`` with operands of the given digit counts (``digits=(3, 2)``: a
    3-digit number times a 2-digit one); answers are exact integers, graded as literals."""

    description = "Multi-digit products or sums; answer in \\boxed{}."

    def __init__(self, digits: tuple[int, ...] = (3, 2), operation: str = "*", timeout: float = 2.0):
        super().__init__(timeout, form="literal")  # the value is asked for: the copied expression earns 0
        digits = tuple(digits)
        if len(digits) < 2 or any(
            isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_DIGITS for d in digits
        ):
            raise ValueError(
                f"digits must list at least two operand sizes, each an integer from 1 to {MAX_DIGITS}, got {digits!r}"
            )
        if operation not in OPERATIONS:
            raise ValueError(f"operation must be one of {OPERATIONS}, got {operation!r}")
        self.digits, self.operation = digits, operation
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        operands = [int(rng.integers(10 ** (d - 1), 10**d)) for d in self.digits]
        value = operands[0]
        for operand in operands[1:]:
            value = value * operand if self.operation == "*" else value + operand
        expression = f" {self.operation} ".join(map(str, operands))
        prompt = f"Compute {expression}. {ANSWER_INSTRUCTION}"
        return Task(
            id=f"calculator-{self.operation}-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=str(value),
            metadata={"expression": expression},
        )


def calculate(expression: str) -> str:
    """The exact value of an arithmetic expression (see the module docstring for what is accepted), as text:
    an integer, or a fraction ``p/q``. Raises ``ValueError`` naming what was refused."""
    from envgym.verifiers.safe_expr import evaluate_arithmetic

    value: Fraction = evaluate_arithmetic(expression)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


class Calculator(ToolEnv):
    """Multi-digit arithmetic with a ``calc`` tool; see the module docstring.

    digits, operation: the task (:class:`CalculationTasks`).
    Remaining keywords go to :class:`~envgym.tools.ToolEnv` (limits, call cost, OTC weight, prompt format).
    """

    description = "Multi-digit arithmetic with a calculator tool (<calc>expression</calc>); answer in \\boxed{}."

    def __init__(self, *, digits: tuple[int, ...] = (3, 2), operation: str = "*", **tool_options: Any):
        tool_options.setdefault("answer_format", "\\boxed{...}")
        tool = Tool(
            name="calc",
            description="Evaluate an arithmetic expression exactly (numbers, + - * / ** and parentheses).",
            parameters={
                "type": "object",
                "properties": {"expression": {"type": "string", "description": "e.g. 347 * 86"}},
                "required": ["expression"],
            },
            function=calculate,
            result_tag="output",
        )
        super().__init__(CalculationTasks(digits, operation), [tool], **tool_options)

"""math/PythonTool-v0: computation-heavy math with a Python tool run in the sandbox (tool-integrated reasoning).

The questions (digit sums of huge powers, prime counts, Fibonacci numbers modulo m, ...) are easy to program
and hard to do in one's head, so a policy that learns to call ``<python>code</python>`` wins. The code runs in
:func:`envgym.sandbox.run` (isolated, CPU/memory limits); its output comes back as ``<output>...</output>``.
A turn without a call is the final answer, graded by :func:`envgym.verifiers.math.grade` (``\\boxed{}``).
Reward components: ``correct`` (1/0), ``tool_cost`` per call if set, OTC ``tool_efficiency`` if weighted
(see :class:`~envgym.tools.ToolEnv`). A sandbox infrastructure failure raises
:class:`~envgym.tools.ToolUnavailable` rather than becoming a reward of 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Task
from envgym.envs.math.answer import ANSWER_INSTRUCTION, MathAnswerEnv
from envgym.tasks import ProceduralTaskSource
from envgym.tools import Tool, ToolEnv, ToolUnavailable

# (question template, reference program template); the program prints the answer.
PROBLEMS: dict[str, tuple[str, str]] = {
    "digit_sum_power": (
        "What is the sum of the decimal digits of {a}^{b}?",
        "print(sum(int(d) for d in str({a} ** {b})))",
    ),
    "prime_count": (
        "How many prime numbers are less than {n}?",
        "n = {n}\nsieve = bytearray([1]) * n\nsieve[0:2] = b'\\x00\\x00'\n"
        "for i in range(2, int(n ** 0.5) + 1):\n    if sieve[i]:\n        sieve[i * i::i] = bytearray(len(range(i * i, n, i)))\n"  # noqa: E501 -- data, kept whole
        "print(sum(sieve))",
    ),
    "fibonacci_mod": (
        "Let F(1) = F(2) = 1 and F(k) = F(k-1) + F(k-2). What is F({n}) modulo {m}?",
        "a, b = 0, 1\nfor _ in range({n}):\n    a, b = b, (a + b) % {m}\nprint(a)",
    ),
    "multiples_sum": (
        "What is the sum of all positive integers below {n} that are multiples of {a} or {b}?",
        "print(sum(k for k in range({n}) if k % {a} == 0 or k % {b} == 0))",
    ),
    "digit_sum_count": (
        "How many integers from 1 to {n} inclusive have decimal digits that add up to {s}?",
        "print(sum(1 for k in range(1, {n} + 1) if sum(map(int, str(k))) == {s}))",
    ),
}


def _parameters(kind: str, rng: np.random.Generator) -> dict[str, int]:
    integer = lambda low, high: int(rng.integers(low, high))  # noqa: E731
    if kind == "digit_sum_power":
        return {"a": integer(2, 10), "b": integer(100, 2000)}
    if kind == "prime_count":
        return {"n": integer(10_000, 300_000)}
    if kind == "fibonacci_mod":
        return {"n": integer(1_000, 100_000), "m": int(rng.choice([1_000_003, 998_244_353, 1_000_000_007]))}
    if kind == "multiples_sum":
        a = integer(3, 12)
        return {"n": integer(1_000, 100_000), "a": a, "b": integer(a + 1, 20)}
    return {"n": integer(1_000, 100_000), "s": integer(5, 30)}


def _solve(kind: str, p: dict[str, int]) -> int:
    """The answer computed here, independently of the reference program the oracle runs in the sandbox."""
    if kind == "digit_sum_power":
        return sum(int(d) for d in str(p["a"] ** p["b"]))
    if kind == "prime_count":
        sieve = np.ones(p["n"], dtype=bool)
        sieve[:2] = False
        for i in range(2, int(p["n"] ** 0.5) + 1):
            if sieve[i]:
                sieve[i * i :: i] = False
        return int(sieve.sum())
    if kind == "fibonacci_mod":
        a, b = 0, 1
        for _ in range(p["n"]):
            a, b = b, (a + b) % p["m"]
        return a
    if kind == "multiples_sum":
        return sum(k for k in range(p["n"]) if k % p["a"] == 0 or k % p["b"] == 0)
    return sum(1 for k in range(1, p["n"] + 1) if sum(map(int, str(k))) == p["s"])


class ComputationTasks(MathAnswerEnv):
    """The single-turn math env under PythonTool: procedural computation questions, ``\\boxed{}`` answers."""

    description = "Computation-heavy math questions; answer in \\boxed{}."

    def __init__(self, kinds: tuple[str, ...] | None = None, timeout: float = 2.0):
        super().__init__(timeout, form="literal")  # the answer is a number to compute, never a formula
        self.kinds = tuple(kinds or PROBLEMS)
        unknown = [kind for kind in self.kinds if kind not in PROBLEMS]
        if unknown:
            raise ValueError(f"unknown problem kind(s) {unknown}; choose from {', '.join(PROBLEMS)}")
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        kind = self.kinds[int(rng.integers(len(self.kinds)))]
        parameters = _parameters(kind, rng)
        question, program = (text.format(**parameters) for text in PROBLEMS[kind])
        prompt = f"{question} You can run Python code to compute it. {ANSWER_INSTRUCTION}"
        return Task(
            id=f"python-tool-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=str(_solve(kind, parameters)),
            metadata={"kind": kind, "program": program},
        )


class PythonTool(ToolEnv):
    """Math with a sandboxed Python tool; see the module docstring.

    kinds: problem kinds to draw from (default: all of ``PROBLEMS``).
    code_timeout, memory_mb, backend: the sandbox's CPU-seconds budget, memory cap and backend (a name or an
        instance, see :func:`envgym.sandbox.get_backend`) per run.
    Remaining keywords go to :class:`~envgym.tools.ToolEnv` (limits, call cost, OTC weight).
    """

    description = "Computation-heavy math with a sandboxed Python tool; answer in \\boxed{}."

    def __init__(
        self,
        *,
        kinds: tuple[str, ...] | None = None,
        code_timeout: float = 5.0,
        memory_mb: int = 512,
        backend: Any = None,
        **tool_options: Any,
    ):
        if code_timeout <= 0 or memory_mb < 16:
            raise ValueError(f"need code_timeout > 0 and memory_mb >= 16, got {code_timeout} and {memory_mb}")
        self.code_timeout, self.memory_mb, self.backend = code_timeout, memory_mb, backend
        tool_options.setdefault("answer_format", "\\boxed{...}")
        tool = Tool(
            name="python",
            description="Run a Python 3 program and see what it prints (stdout, and stderr if any). Use print().",
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string", "description": "a Python program"}},
                "required": ["code"],
            },
            function=self._run_python,
            result_tag="output",
        )
        super().__init__(ComputationTasks(kinds), [tool], **tool_options)

    def _run_python(self, code: str) -> str:
        from envgym.sandbox import run

        result = run(code, timeout=self.code_timeout, memory_mb=self.memory_mb, backend=self.backend)
        if result.status == "infra_error":
            raise ToolUnavailable(f"the sandbox failed to run the code: {result.stderr.strip()[:500]}")
        text = result.stdout.rstrip("\n")
        if result.stderr.strip():
            text += f"\n[stderr]\n{result.stderr[-2000:]}"
        notes = {
            "timeout": f"[the program was stopped: it used more than {self.code_timeout} s of CPU]",
            "memory": f"[the program was stopped: it used more than {self.memory_mb} MB of memory]",
            "output_limit": "[the program was stopped: it printed too much]",
        }
        if result.status in notes:
            text += f"\n{notes[result.status]}"
        return text.strip() or "(no output)"

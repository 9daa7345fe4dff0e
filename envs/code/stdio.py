"""code/StdIO-v0: competitive-programming problems judged on stdin/stdout, in the sandbox.

Tasks come from a JSONL file in either common shape:

- CodeContests: ``{"name", "description", "public_tests": {"input": [...], "output": [...]},
  "private_tests": {...}, "generated_tests": {...}}``
- APPS: ``{"problem_id", "question", "input_output": "{\\"inputs\\": [...], \\"outputs\\": [...]}"}``

Without ``path`` a few built-in problems are used (enough to try the env and run its tests offline). The
reply's last fenced block is the solution; its fence language picks python, c or cpp (python by default).
Reward components: ``correct`` (1 when every case passes) and ``pass_fraction`` (weight 0 by default).
Feedback shows failing *visible* cases only (the public tests, or half the cases): ``common.visible_cases``.
A record's own solutions (CodeContests' ``solutions``, APPS' ``solutions``), when it has them, are the
reference the audit plays (``reference_action``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text
from envgym.envs.code.common import NO_CODE_FEEDBACK, attempt_feedback, extract_code, no_code_info, turn_info
from envgym.envs.code.stdio_samples import SAMPLE_PROBLEMS, SAMPLE_SOLUTIONS
from envgym.tasks import ListTaskSource

INSTRUCTION = (
    "Solve the following problem. Your program reads the input from stdin and writes the answer to "
    "stdout. Reply with the complete program in one ```python code block (```cpp or ```c also work)."
    "\n\n{statement}"
)
LANGUAGES = ("python", "c", "cpp")
CODECONTESTS_LANGUAGES = {3: "python", 2: "cpp"}  # its Language enum: PYTHON3 and CPP (Python 2 and Java: no)
WRONG_PROGRAM = "```python\npass\n```"  # an honest attempt that solves nothing: it prints nothing


def record_to_task(record: Mapping[str, Any], index: int) -> Task:
    """One CodeContests- or APPS-shaped record as a Task: ``answer["cases"]`` (all cases, public first),
    ``answer["public"]`` (how many are public; None when the dataset does not say) and ``answer["solution"]``
    (``[code, language]`` of a known correct program, or None)."""
    public, solution = None, None
    if "description" in record:
        statement = record["description"]
        cases = []
        for key in ("public_tests", "private_tests", "generated_tests"):
            tests = record.get(key) or {}
            cases += [{"input": i, "output": o} for i, o in zip(tests.get("input", []), tests.get("output", []))]
            if key == "public_tests":
                public = len(cases)
        task_id = str(record.get("name", index))
        solutions = record.get("solutions") or {}
        for language, code in zip(solutions.get("language", []), solutions.get("solution", [])):
            if language in CODECONTESTS_LANGUAGES:
                solution = [code, CODECONTESTS_LANGUAGES[language]]
                break
    elif "question" in record:
        statement = record["question"]
        io = record.get("input_output") or "{}"
        io = json.loads(io) if isinstance(io, str) else io
        cases = [{"input": _text(i), "output": _text(o)} for i, o in zip(io.get("inputs", []), io.get("outputs", []))]
        task_id = str(record.get("problem_id", index))
        solutions = record.get("solutions") or []
        solutions = json.loads(solutions) if isinstance(solutions, str) else solutions
        solution = [solutions[0], "python"] if solutions else None
    else:
        raise ValueError(
            f"record {index}: expected a CodeContests record (with 'description') or an APPS record "
            f"(with 'question'), got keys {sorted(record)}"
        )
    if not cases:
        raise ValueError(f"record {index} ({task_id}): no test cases")
    return Task(
        id=task_id,
        messages=[{"role": "user", "content": INSTRUCTION.format(statement=statement)}],
        answer={"cases": cases, "public": public, "solution": solution},
        metadata={"source": "stdio"},
    )


def _text(value: Any) -> str:
    return "\n".join(map(str, value)) + "\n" if isinstance(value, list) else str(value)


def load_stdio_tasks(path: str | Path | None = None) -> list[Task]:
    """The tasks of the JSONL file at ``path``, or the built-in samples (with their reference solutions)."""
    if path is None:
        samples = [
            {**record, "solutions": {"language": [3], "solution": [SAMPLE_SOLUTIONS[record["name"]]]}}
            for record in SAMPLE_PROBLEMS
        ]
        return [record_to_task(record, i) for i, record in enumerate(samples)]
    with open(path) as handle:
        return [record_to_task(json.loads(line), i) for i, line in enumerate(handle) if line.strip()]


def reference_program(task: Task) -> str | None:
    """The task's known correct program as a reply (a fenced block in its language), or None."""
    if not task.answer.get("solution"):
        return None
    code, language = task.answer["solution"]
    return f"```{language}\n{code.rstrip()}\n```"


def grade_program(env: Any, text: str):
    """Shared by StdIO and Refine: extract, run every case, return the report (None when no code block)."""
    from envgym.sandbox.testing import run_io_tests

    extracted = extract_code(text)
    if extracted is None:
        return None
    code, language = extracted
    return run_io_tests(
        code,
        env.task.answer["cases"],
        language=language if language in LANGUAGES else "python",
        timeout=env.timeout,
        memory_mb=env.memory_mb,
        backend=env.backend,
    )


class StdIO(Env):
    description = "Competitive programming on stdin/stdout; reward 1 when every test case passes."

    def __init__(
        self,
        path: str | None = None,
        timeout: float = 5.0,
        memory_mb: int = 512,
        pass_fraction_weight: float = 0.0,
        backend: Any = None,
    ):
        self.timeout, self.memory_mb, self.backend = timeout, memory_mb, backend
        self.pass_fraction_weight = pass_fraction_weight
        partial = RewardRange(0.0, max(0.0, pass_fraction_weight))
        self.reward_ranges = {"correct": RewardRange(), "pass_fraction": partial}
        self.tasks = ListTaskSource(load_stdio_tasks(path))

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {}

    def _step(self, action: Action) -> StepResult:
        report = grade_program(self, action_text(action))
        if report is None:
            reward, info = no_code_info()
            return [{"role": "user", "content": NO_CODE_FEEDBACK}], reward, True, False, info
        reward, info = turn_info(report, self.pass_fraction_weight)
        feedback = attempt_feedback(self.task, report)
        infra = report.infra_error is not None
        return [{"role": "user", "content": feedback}], reward, not infra, infra, info

    def reference_action(self) -> Action | None:
        """The record's own correct program (None when the dataset ships none)."""
        return reference_program(self.task) if self.task is not None else None

    def wrong_action(self) -> Action | None:
        return WRONG_PROGRAM

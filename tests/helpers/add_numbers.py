"""AddNumbers: a tiny single-turn task env for testing tool wrappers without any real environment."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from envgym.core import Env, Task, action_text
from envgym.tasks import ProceduralTaskSource


class AddNumbers(Env):
    """ "What is a + b?"; the turn's <answer> is graded (reward 1 when right); always ends the episode."""

    def __init__(self):
        self.tasks = ProceduralTaskSource(self._make)

    def _make(self, rng: np.random.Generator, index: int) -> Task:
        a, b = (int(x) for x in rng.integers(10**6, 10**7, size=2))
        return Task(id=f"add-{index}", messages=[{"role": "user", "content": f"What is {a} + {b}?"}], answer=a + b)

    def _reset(self, task: Task, options: dict[str, Any]):
        return task.prompt(), {}

    def _step(self, action):
        found = re.findall(r"<answer>\s*(-?\d+)\s*</answer>", action_text(action))
        correct = bool(found) and int(found[-1]) == self.task.answer
        components = {"correct": 1.0 if correct else 0.0}
        return (
            [{"role": "user", "content": "done"}],
            components["correct"],
            True,
            False,
            {"reward_components": components, "correct": correct},
        )

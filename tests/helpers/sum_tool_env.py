"""SumQuiz: two fixed addition tasks graded on ``<answer>N</answer>``, and a ToolEnv around it with an ``add`` tool.

Fixed tasks (not random numbers) so that a scripted or choice-constrained model can answer them right or wrong
on purpose. ``register_sum_tool_env()`` registers ``test/SumTool-v0`` (use it under the ``scratch_registry``
fixture, so the registration ends with the test).
"""

from __future__ import annotations

import re
from typing import Any

from envgym.core import Env, Task, action_text
from envgym.tasks import ListTaskSource
from envgym.tools import Tool, ToolEnv, ToolUnavailable

ENV_ID = "test/SumTool-v0"
TASKS = [
    Task("two-plus-three", [{"role": "user", "content": "What is 2 + 3?"}], answer=5),
    Task("four-plus-four", [{"role": "user", "content": "What is 4 + 4?"}], answer=8),
]


class SumQuiz(Env):
    """One turn: reward 1 when the turn's ``<answer>`` is the sum, else 0."""

    def __init__(self) -> None:
        self.tasks = ListTaskSource(TASKS)

    def _reset(self, task: Task, options: dict[str, Any]):
        return task.prompt(), {}

    def _step(self, action):
        found = re.findall(r"<answer>\s*(-?\d+)\s*</answer>", action_text(action))
        correct = bool(found) and int(found[-1]) == self.task.answer
        return [], float(correct), True, False, {"reward_components": {"correct": float(correct)}, "correct": correct}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return a + b


def broken_add(a: int, b: int) -> int:
    """Add two integers (its backend is down: every call is an infrastructure failure)."""
    raise ToolUnavailable("the adding service is unreachable")


def sum_tool_env(*, broken: bool = False, **tool_options: Any) -> ToolEnv:
    """SumQuiz with an ``add`` tool (``broken=True``: one that always raises ToolUnavailable)."""
    tool = Tool.from_function(broken_add if broken else add, name="add")
    tool_options.setdefault("prompt_format", "json")
    tool_options.setdefault("call_cost", 0.1)
    return ToolEnv(SumQuiz(), [tool], **tool_options)


def register_sum_tool_env() -> str:
    """Register ``test/SumTool-v0`` (at most 4 turns); returns the id."""
    from envgym.registration import register

    register(ENV_ID, sum_tool_env, max_turns=4, description="Two additions, with an add tool.")
    return ENV_ID

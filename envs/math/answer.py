"""The single-turn math env every math task family shares: one question, one answer, graded by
:func:`envgym.verifiers.math.grade`.

Reward components: ``correct`` (1 when the final answer equals the gold answer, else 0). A response with no
final answer (no ``\\boxed{}``, ``####`` or "the answer is") gets 0 and ``action_valid=False``. The episode
terminates after the one answer.
"""

from __future__ import annotations

from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total

ANSWER_INSTRUCTION = "Put your final answer in \\boxed{}."


class MathAnswerEnv(Env):
    """Subclasses set ``self.tasks`` (any TaskSource whose tasks carry the gold answer as a string)."""

    def __init__(self, timeout: float = 2.0):
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.timeout = timeout

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        if task.answer is None:
            raise ValueError(f"task {task.id!r} has no gold answer; math envs need one to grade against")
        return task.prompt(), {}

    def answers_equivalent(self, first: str, second: str) -> bool:
        """Whether two final answers are one value (``1/2``, ``0.5``, ``\\frac{1}{2}``): what group votes and
        ``maj@k`` cluster answers with (:func:`envgym.rewards.answer_equivalence`)."""
        from envgym.verifiers.math import equivalent

        return equivalent(first, second, timeout=self.timeout)

    def _step(self, action: Action) -> StepResult:
        from envgym.verifiers.math import grade

        result = grade(action_text(action), str(self.task.answer), timeout=self.timeout)
        components = {"correct": result.reward}
        info = {
            "reward_components": components,
            "correct": result.correct,
            "answer": result.extracted,
            "reason": result.reason,
            "action_valid": result.extracted is not None,
        }
        return [], reward_total(components), True, False, info

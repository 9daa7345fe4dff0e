"""code/Refine-v0: write code, see which visible tests fail, fix it; up to ``max_attempts`` turns.

Each turn is graded on *every* test, but feedback shows only the *visible* ones (``common.visible_cases``:
the dataset's public tests, or half of the cases; at least one is always held out): up to ``show_failures``
failing visible tests (name and error) come back as the next user message, and of the held-out tests only
whether some still fail. Feedback that quoted every failing test let a lookup table of the quoted cases pass a
third of HumanEval without solving anything.

Rewards per turn: ``correct`` is 1 on the turn where every test passes (the episode then terminates);
``pass_fraction`` is ``pass_fraction_weight`` times the *improvement* of the best fraction of tests passed so
far (0 by default). The pass-fraction rewards of an episode therefore sum to ``pass_fraction_weight * best
fraction``, and no strategy's return exceeds solving at the first attempt, ``1 + pass_fraction_weight`` (paid
per attempt, failing one case on purpose every attempt earned more than solving). The episode also
terminates, failed, after ``max_attempts`` graded turns; a reply without a code block counts as an attempt
with ``action_valid=False``.

``source="humaneval"`` (default) uses the HumanEval problems; ``source="stdio"`` the StdIO problems
(``path`` as in code/StdIO-v0).
"""

from __future__ import annotations

from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.code.common import NO_CODE_FEEDBACK, attempt_feedback, extract_code, no_code_info, turn_info
from envgym.tasks import ListTaskSource

SOURCES = ("humaneval", "stdio")


class Refine(Env):
    description = "Multi-turn coding: failing visible tests are shown after each attempt, up to max_attempts."

    def __init__(
        self,
        source: str = "humaneval",
        path: str | None = None,
        max_attempts: int = 3,
        show_failures: int = 3,
        timeout: float = 10.0,
        memory_mb: int = 512,
        pass_fraction_weight: float = 0.0,
        backend: Any = None,
    ):
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.source, self.max_attempts, self.show_failures = source, max_attempts, show_failures
        self.timeout, self.memory_mb, self.backend = timeout, memory_mb, backend
        self.pass_fraction_weight = pass_fraction_weight
        # pass_fraction is the gain of the best pass fraction on each attempt: its sum over turns is the best one
        self.reward_ranges = {
            "correct": RewardRange(),
            "pass_fraction": RewardRange(0.0, max(0.0, pass_fraction_weight), per_turn=True),
        }
        if source == "humaneval":
            from envgym.envs.code.humaneval import load_humaneval_tasks

            self.tasks = ListTaskSource(load_humaneval_tasks())
        else:
            from envgym.envs.code.stdio import load_stdio_tasks

            self.tasks = ListTaskSource(load_stdio_tasks(path))

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.attempt = 0
        self.best_fraction = 0.0  # pass-fraction rewards pay only for improving on it
        messages = task.prompt()
        messages[-1]["content"] += (
            f"\n\nYou have {self.max_attempts} attempts; after each one you will see "
            "which visible tests failed (hidden tests also decide the verdict)."
        )
        return messages, {"attempts_left": self.max_attempts}

    def _step(self, action: Action) -> StepResult:
        self.attempt += 1
        left = self.max_attempts - self.attempt
        report = self._grade(action_text(action))
        if report is None:
            reward, info = no_code_info()
            feedback = NO_CODE_FEEDBACK
        else:
            reward, info = turn_info(report, self.pass_fraction_weight)
            if report.infra_error is not None:
                return (
                    [{"role": "user", "content": "The sandbox failed; this attempt was not graded."}],
                    reward,
                    False,
                    True,
                    info,
                )
            reward = self._improvement_reward(info)
            feedback = attempt_feedback(self.task, report, self.show_failures)
        info["attempts_left"] = left
        solved = bool(info["correct"])
        if not solved:
            feedback += f"\nAttempts left: {left}." if left else "\nNo attempts left."
        return [{"role": "user", "content": feedback}], reward, solved or left == 0, False, info

    def _improvement_reward(self, info: dict[str, Any]) -> float:
        """This turn's reward: ``correct`` plus the weighted gain of the best pass fraction (never negative)."""
        gain = max(0.0, info["pass_fraction"] - self.best_fraction)
        self.best_fraction = max(self.best_fraction, info["pass_fraction"])
        info["reward_components"]["pass_fraction"] = self.pass_fraction_weight * gain
        return reward_total(info["reward_components"])

    def reference_action(self) -> Action | None:
        """The task's correct program, at any turn (HumanEval: the canonical solution; stdio: the record's)."""
        if self.task is None:
            return None
        if self.source == "stdio":
            from envgym.envs.code.stdio import reference_program

            return reference_program(self.task)
        from envgym.envs.code.humaneval import reference_reply

        return reference_reply(self.task.answer)

    def wrong_action(self) -> Action | None:
        if self.task is None:
            return None
        if self.source == "stdio":
            from envgym.envs.code.stdio import WRONG_PROGRAM

            return WRONG_PROGRAM
        from envgym.envs.code.humaneval import wrong_reply

        return wrong_reply(self.task.answer)

    def _grade(self, text: str):
        if self.source == "stdio":
            from envgym.envs.code.stdio import grade_program

            return grade_program(self, text)
        from envgym.envs.code.humaneval import humaneval_program
        from envgym.sandbox.testing import run_assert_tests

        extracted = extract_code(text)
        if extracted is None:
            return None
        answer = self.task.answer
        return run_assert_tests(
            humaneval_program(answer, extracted[0]),
            answer["test"],
            entry_point=answer["entry_point"],
            setup=answer["prompt"],
            timeout=self.timeout,
            memory_mb=self.memory_mb,
            backend=self.backend,
        )

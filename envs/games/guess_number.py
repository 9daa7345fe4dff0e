"""GuessNumber: the reference multi-turn env (copy this file to write a new one).

The agent guesses a hidden integer with ``<guess>N</guess>``; each wrong guess is answered "higher" or
"lower". Rewards per turn, as named components:

- ``correct``: +1 on the turn that finds the number (the episode then terminates);
- ``wasted``: ``-wasted_penalty`` for a guess that earlier feedback already ruled out;
- ``format``: ``-invalid_penalty`` for a turn without a well-formed guess (``action_valid=False``; the
  feedback explains the format and the episode goes on).

An invalid turn teaches nothing new, exactly like a wasted guess, so it costs at least as much
(``invalid_penalty >= wasted_penalty``, both 0.1 by default): stalling with invalid turns until the turn limit
never earns more than any sequence of legal guesses of the same length.

Turn limits are the registry's job (``max_turns`` -> ``TimeLimit`` -> truncated), not the env's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.games.move_parsing import MAX_DIGITS, last_tag, parse_int, quote
from envgym.tasks import ProceduralTaskSource


class GuessNumber(Env):
    description = "Guess a hidden integer from higher/lower feedback."

    def __init__(self, low: int = 1, high: int = 100, wasted_penalty: float = 0.1, invalid_penalty: float = 0.1):
        if low >= high:
            raise ValueError(f"need low < high, got low={low}, high={high}")
        if invalid_penalty < wasted_penalty:
            raise ValueError(
                f"invalid_penalty ({invalid_penalty}) must be >= wasted_penalty ({wasted_penalty}), so an "
                "invalid turn never costs less than a wasted guess"
            )
        self.low, self.high = low, high
        self.max_digits = max(MAX_DIGITS, len(str(abs(low))), len(str(abs(high))))  # every number in range parses
        self.wasted_penalty, self.invalid_penalty = wasted_penalty, invalid_penalty
        self.reward_ranges = {
            "correct": RewardRange(),
            "wasted": RewardRange(-wasted_penalty, 0.0, per_turn=True),
            "format": RewardRange(-invalid_penalty, 0.0, per_turn=True),
        }
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        secret = int(rng.integers(self.low, self.high + 1))
        rules = (
            f"I am thinking of an integer between {self.low} and {self.high} inclusive. Guess it. "
            "After each guess I will say whether the number is higher or lower. "
            "Answer with your guess in the form <guess>N</guess>."
        )
        return Task(
            id=f"guess-{self.low}-{self.high}-{index}",
            messages=[{"role": "user", "content": rules}],
            answer=secret,
            metadata={"low": self.low, "high": self.high},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.secret = task.answer
        self.candidates = [self.low, self.high]  # the interval still consistent with the feedback
        return task.prompt(), {}

    def reference_action(self) -> Action | None:
        """Binary search: the middle of the interval the feedback leaves open (wins in ceil(log2 n) + 1 turns)."""
        if self.task is None:
            return None
        lo, hi = self.candidates
        return f"<guess>{(lo + hi) // 2}</guess>"

    def wrong_action(self) -> Action | None:
        """A legal guess that is not the secret: an end of the open interval, or a number it rules out."""
        if self.task is None:
            return None
        lo, hi = self.candidates
        wrong = lo if lo != self.secret else hi if hi != self.secret else self.secret + 1
        return f"<guess>{wrong}</guess>"

    def _step(self, action: Action) -> StepResult:
        text = last_tag(action_text(action), "guess")
        guess = None if text is None else parse_int(text, self.max_digits)
        if guess is None:
            problem = "I could not find a guess." if text is None else f"{quote(text)} is not an integer in digits 0-9."
            feedback = f"{problem} Reply with your guess as <guess>N</guess>, e.g. <guess>50</guess>."
            components = {"format": 0.0 - self.invalid_penalty}  # 0.0 - p: no -0.0 when p is 0
            info = {
                "action_valid": False,
                "action_error": problem,
                "feedback": "invalid",
                "reward_components": components,
            }
            return [{"role": "user", "content": feedback}], reward_total(components), False, False, info

        lo, hi = self.candidates
        components = {"correct": 0.0, "wasted": 0.0 if lo <= guess <= hi else -self.wasted_penalty}
        if guess == self.secret:
            components["correct"] = 1.0
            feedback, verdict = f"Correct! The number was {self.secret}.", "correct"
        elif guess < self.secret:
            self.candidates = [max(lo, guess + 1), hi]
            feedback, verdict = f"{guess} is too low. The number is higher.", "higher"
        else:
            self.candidates = [lo, min(hi, guess - 1)]
            feedback, verdict = f"{guess} is too high. The number is lower.", "lower"
        info = {
            "action_valid": True,
            "feedback": verdict,
            "guess": guess,
            "correct": verdict == "correct",
            "reward_components": components,
        }
        return [{"role": "user", "content": feedback}], reward_total(components), verdict == "correct", False, info

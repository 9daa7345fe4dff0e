"""The turn logic Wordle and Mastermind share: break a hidden code within a budget of guesses.

Each turn the agent sends ``<guess>...</guess>``; a game subclass parses it and scores it against the secret.
Rewards per turn, as named components:

- ``correct``: +1 on the turn that guesses the secret (the episode then terminates);
- ``repeat``: ``-repeat_penalty`` for a guess already made (it still uses up a guess);
- ``format``: ``-invalid_penalty`` for a turn without a well-formed guess (``action_valid=False``; the feedback
  explains what is accepted; no guess is used up and the episode goes on).

The guess budget is a rule of the game that the agent is told, so running out of guesses is a loss inside the
MDP (``terminated``). The registry's ``max_turns`` bounds all turns, invalid ones included (``truncated``).
"""

from __future__ import annotations

import re
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total

GUESS = re.compile(r"<guess>(.*?)</guess>", re.DOTALL | re.IGNORECASE)


class CodeBreakingGame(Env):
    """Base class: subclasses make tasks whose ``answer`` is the secret (a string) and implement
    ``_parse_guess`` and ``_score``."""

    guess_example: str = ""

    def __init__(self, max_guesses: int, repeat_penalty: float, invalid_penalty: float):
        if isinstance(max_guesses, bool) or not isinstance(max_guesses, int) or max_guesses < 1:
            raise ValueError(f"max_guesses must be a positive int, got {max_guesses!r}")
        self.max_guesses = max_guesses
        self.repeat_penalty, self.invalid_penalty = float(repeat_penalty), float(invalid_penalty)

    def _parse_guess(self, text: str) -> tuple[str | None, str]:
        """The guess inside the tag in canonical form, or ``None`` and what was wrong with it."""
        raise NotImplementedError

    def _score(self, guess: str) -> tuple[str, dict[str, Any]]:
        """Feedback on a valid guess: the text the agent reads and the same facts for ``info``."""
        raise NotImplementedError

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.secret: str = task.answer
        self.guesses: list[str] = []
        return task.prompt(), {"guesses_left": self.max_guesses}

    def _step(self, action: Action) -> StepResult:
        matches = GUESS.findall(action_text(action))
        if matches:
            guess, problem = self._parse_guess(matches[-1])
        else:
            guess, problem = None, "I could not find a <guess>...</guess> tag."
        if guess is None:
            components = {"format": 0.0 - self.invalid_penalty}  # 0.0 - p: no -0.0 when p is 0
            feedback = f"{problem} Reply with your guess as {self.guess_example}. This turn used up no guess."
            info = {"action_valid": False, "action_error": problem, "guesses_left": self.max_guesses - len(self.guesses),
                    "reward_components": components}
            return [{"role": "user", "content": feedback}], reward_total(components), False, False, info

        repeated = guess in self.guesses
        self.guesses.append(guess)
        solved = guess == self.secret
        left = self.max_guesses - len(self.guesses)
        components = {"correct": 1.0 if solved else 0.0, "repeat": -self.repeat_penalty if repeated else 0.0}
        feedback, details = self._score(guess)
        if solved:
            feedback += f" Solved in {len(self.guesses)} guess{'es' if len(self.guesses) > 1 else ''}!"
        elif left == 0:
            feedback += f" No guesses left. The answer was {self.secret}."
        else:
            again = "You already tried that guess. " if repeated else ""
            feedback += f" {again}{left} guess{'es' if left > 1 else ''} left."
        terminated = solved or left == 0
        info = {"action_valid": True, "guess": guess, **details, "guesses_left": left, "correct": solved,
                "reward_components": components}
        if terminated:
            info["answer"] = self.secret
        return [{"role": "user", "content": feedback}], reward_total(components), terminated, False, info

"""The turn logic Wordle and Mastermind share: break a hidden code within a budget of guesses.

Each turn the agent sends ``<guess>...</guess>``; a game subclass parses it and scores it against the secret.
Rewards per turn, as named components:

- ``correct``: +1 on the turn that guesses the secret (the episode then terminates);
- ``repeat``: ``-repeat_penalty`` for a guess already made (it still uses up a guess);
- ``format``: ``-invalid_penalty`` for a turn without a well-formed guess (``action_valid=False``; the feedback
  explains what is accepted). The turn uses up a guess, like a repeated guess, which teaches nothing new
  either; ``invalid_penalty >= repeat_penalty`` (both 0.1 by default), so an invalid turn is never a free retry
  and stalling never earns more than any legal play: it loses the game at ``-invalid_penalty`` per guess.

The guess budget is a rule of the game that the agent is told, so running out of guesses is a loss inside the
MDP (``terminated``), invalid turns included; the registry's ``max_turns`` is set above the budget.
"""

from __future__ import annotations

from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.games.move_parsing import last_tag


class CodeBreakingGame(Env):
    """Base class: subclasses make tasks whose ``answer`` is the secret (a string) and implement
    ``_parse_guess``, ``_score`` and ``_solver_guess``."""

    guess_example: str = ""

    def __init__(self, max_guesses: int, repeat_penalty: float, invalid_penalty: float):
        if isinstance(max_guesses, bool) or not isinstance(max_guesses, int) or max_guesses < 1:
            raise ValueError(f"max_guesses must be a positive int, got {max_guesses!r}")
        if invalid_penalty < repeat_penalty:
            raise ValueError(
                f"invalid_penalty ({invalid_penalty}) must be >= repeat_penalty ({repeat_penalty}), so an "
                "invalid turn never costs less than a repeated guess"
            )
        self.max_guesses = max_guesses
        self.repeat_penalty, self.invalid_penalty = float(repeat_penalty), float(invalid_penalty)
        self.reward_ranges = {
            "correct": RewardRange(),
            "repeat": RewardRange(-self.repeat_penalty, 0.0, per_turn=True),
            "format": RewardRange(-self.invalid_penalty, 0.0, per_turn=True),
        }

    def _parse_guess(self, text: str) -> tuple[str | None, str]:
        """The guess inside the tag in canonical form, or ``None`` and what was wrong with it."""
        raise NotImplementedError

    def _score(self, guess: str) -> tuple[str, dict[str, Any]]:
        """Feedback on a valid guess: the text the agent reads and the same facts for ``info``."""
        raise NotImplementedError

    def _solver_guess(self) -> str:
        """A canonical guess consistent with the feedback on ``self.guesses`` (what ``reference_action`` plays)."""
        raise NotImplementedError

    def _wrong_guess(self) -> str:
        """A canonical guess that is neither the secret nor a guess made before (what ``wrong_action`` plays)."""
        raise NotImplementedError

    def _format_guess(self, guess: str) -> str:
        """A canonical guess as the agent writes it inside the tag."""
        return guess

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.secret: str = task.answer
        self.guesses: list[str] = []
        self.turns_used = 0
        return task.prompt(), {"guesses_left": self.max_guesses}

    def reference_action(self) -> Action | None:
        """The next guess of a consistent-guess solver (it solves every default task within the budget)."""
        if self.task is None:
            return None
        return f"<guess>{self._format_guess(self._solver_guess())}</guess>"

    def wrong_action(self) -> Action | None:
        """A well-formed guess that is wrong and new: honest play that loses the game without penalties."""
        if self.task is None:
            return None
        return f"<guess>{self._format_guess(self._wrong_guess())}</guess>"

    def _step(self, action: Action) -> StepResult:
        body = last_tag(action_text(action), "guess")
        if body is not None:
            guess, problem = self._parse_guess(body)
        else:
            guess, problem = None, "I could not find a <guess>...</guess> tag."
        self.turns_used += 1
        left = self.max_guesses - self.turns_used
        if guess is None:
            components = {"format": 0.0 - self.invalid_penalty}  # 0.0 - p: no -0.0 when p is 0
            feedback = f"{problem} Reply with your guess as {self.guess_example}. This turn used up a guess."
            info: dict[str, Any] = {
                "action_valid": False,
                "action_error": problem,
                "guesses_left": left,
                "correct": False,
                "reward_components": components,
            }
            if left == 0:
                feedback += f" No guesses left. The answer was {self.secret}."
                info["answer"] = self.secret
            return [{"role": "user", "content": feedback}], reward_total(components), left == 0, False, info

        repeated = guess in self.guesses
        self.guesses.append(guess)
        solved = guess == self.secret
        components = {"correct": 1.0 if solved else 0.0, "repeat": -self.repeat_penalty if repeated else 0.0}
        feedback, details = self._score(guess)
        if solved:
            feedback += f" Solved in {self.turns_used} guess{'es' if self.turns_used > 1 else ''}!"
        elif left == 0:
            feedback += f" No guesses left. The answer was {self.secret}."
        else:
            again = "You already tried that guess. " if repeated else ""
            feedback += f" {again}{left} guess{'es' if left > 1 else ''} left."
        terminated = solved or left == 0
        info = {
            "action_valid": True,
            "guess": guess,
            **details,
            "guesses_left": left,
            "correct": solved,
            "reward_components": components,
        }
        if terminated:
            info["answer"] = self.secret
        return [{"role": "user", "content": feedback}], reward_total(components), terminated, False, info

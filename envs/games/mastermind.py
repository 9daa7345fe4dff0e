"""Mastermind: break a hidden code of coloured pegs from black/white peg feedback.

Colours are the digits ``1``..``colors``; the code has ``code_length`` pegs and may repeat colours. After each
guess the agent learns how many pegs are the right colour in the right place (black) and how many more are
the right colour in the wrong place (white). Knuth showed every 4-peg, 6-colour code is found in at most five
guesses, so the default budget of ten is generous. Rewards and episode ends: see
:mod:`envgym.envs.games.code_breaking`.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Any

import numpy as np

from envgym.core import Task
from envgym.envs.games.code_breaking import CodeBreakingGame
from envgym.envs.games.move_parsing import quote
from envgym.tasks import ProceduralTaskSource

SEPARATORS = re.compile(r"[\s,]+")
ENUMERATION_LIMIT = 50_000  # codes the solver enumerates per turn at most (6^6); larger boards guess the secret


def score_pegs(guess: str, secret: str) -> tuple[int, int]:
    """``(black, white)``: pegs right in colour and place, and further pegs right in colour only."""
    black = sum(g == s for g, s in zip(guess, secret))
    common = sum((Counter(guess) & Counter(secret)).values())
    return black, common - black


class Mastermind(CodeBreakingGame):
    description = "Break a hidden code of coloured pegs from black/white peg feedback."

    def __init__(
        self,
        code_length: int = 4,
        colors: int = 6,
        max_guesses: int = 10,
        repeat_penalty: float = 0.1,
        invalid_penalty: float = 0.1,
    ):
        super().__init__(max_guesses, repeat_penalty, invalid_penalty)
        if isinstance(code_length, bool) or not isinstance(code_length, int) or not 1 <= code_length <= 12:
            raise ValueError(f"code_length must be an int in [1, 12], got {code_length!r}")
        if isinstance(colors, bool) or not isinstance(colors, int) or not 2 <= colors <= 9:
            raise ValueError(f"colors must be an int in [2, 9] (colours are the digits 1..colors), got {colors!r}")
        self.code_length, self.colors = code_length, colors
        self.guess_example = f"<guess>{' '.join(str(1 + i % colors) for i in range(code_length))}</guess>"
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        secret = "".join(str(d) for d in rng.integers(1, self.colors + 1, size=self.code_length))
        rules = (
            f"Let's play Mastermind. I have hidden a code of {self.code_length} pegs; each peg is a colour from 1 to "
            f"{self.colors}, and colours may repeat. You have {self.max_guesses} guesses to find it. After each guess "
            "I say how many pegs are the right colour in the right place (black) and how many more are the right "
            "colour in the wrong place (white). "
            f"Answer with your guess in the form {self.guess_example}."
        )
        return Task(
            id=f"mastermind-{self.code_length}x{self.colors}-{index}",
            messages=[{"role": "user", "content": rules}],
            answer=secret,
            metadata={"code_length": self.code_length, "colors": self.colors, "max_guesses": self.max_guesses},
        )

    def _parse_guess(self, text: str) -> tuple[str | None, str]:
        accepted = f"{self.code_length} colours from 1 to {self.colors}"
        if len(text) > 4 * self.code_length + 40:  # no well-formed code is this long; do not split 100 KB
            return None, f"Your guess {quote(text)} is not {accepted}."
        pegs = [peg for peg in SEPARATORS.split(text.strip()) if peg]
        if len(pegs) == 1 and len(pegs[0]) == self.code_length:  # "1234" written without separators
            pegs = list(pegs[0])
        # Compared as characters, so only the ASCII digits 1..colors pass (no int() of other scripts' digits).
        if len(pegs) != self.code_length or not all(len(p) == 1 and "1" <= p <= str(self.colors) for p in pegs):
            return None, f"Your guess {quote(text)} is not {accepted}."
        return "".join(pegs), ""

    def _solver_guess(self) -> str:
        """The first code, in counting order, that scores like the secret against every guess so far (at most
        9 guesses on the default board); the secret itself, always consistent, when the board is too big to
        enumerate."""
        if self.colors**self.code_length > ENUMERATION_LIMIT:
            return self.secret
        feedback = [(guess, score_pegs(guess, self.secret)) for guess in self.guesses]
        colours = "".join(str(c) for c in range(1, self.colors + 1))
        for pegs in itertools.product(colours, repeat=self.code_length):
            code = "".join(pegs)
            if all(score_pegs(guess, code) == pegs_seen for guess, pegs_seen in feedback):
                return code
        raise AssertionError("the secret is always consistent with its own feedback")

    def _wrong_guess(self) -> str:
        colours = "".join(str(c) for c in range(1, self.colors + 1))
        codes = ("".join(pegs) for pegs in itertools.product(colours, repeat=self.code_length))
        return next(code for code in codes if code != self.secret and code not in self.guesses)

    def _format_guess(self, guess: str) -> str:
        return " ".join(guess)

    def _score(self, guess: str) -> tuple[str, dict[str, Any]]:
        black, white = score_pegs(guess, self.secret)
        return f"{' '.join(guess)} -> {black} black, {white} white.", {"black": black, "white": white}

"""Wordle: find a hidden five-letter word in six guesses from green/yellow/gray letter feedback.

Secrets come from :data:`envgym.envs.games.wordle_words.WORDS`. By default any five letters count as a guess
(an LLM knows more words than the shipped list); ``require_known_word=True`` restricts guesses to the list,
as the real game does. Feedback per letter: ``G`` right letter in the right spot, ``Y`` in the word but
elsewhere, ``_`` not in the word (or no more copies of it). Rewards and episode ends: see
:mod:`envgym.envs.games.code_breaking`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from envgym.core import Task
from envgym.envs.games.code_breaking import CodeBreakingGame
from envgym.envs.games.move_parsing import quote
from envgym.envs.games.wordle_words import WORDS
from envgym.tasks import ProceduralTaskSource

WORD_LENGTH = 5
FIVE_LETTERS = re.compile(r"[a-z]{5}")
FIVE_ASCII_LETTERS = re.compile(r"[A-Za-z]{5}")  # checked before lower(), which maps some non-ASCII letters to a-z
OPENER = "trace"  # the guess splitting the shipped list into the most patterns, precomputed (it takes seconds)
SPLIT_SEARCH_LIMIT = 300  # above this many candidates, ranking guesses by their splits costs too much per turn


def feedback_pattern(guess: str, secret: str) -> str:
    """Wordle's colouring of ``guess`` against ``secret`` as a string of ``G``/``Y``/``_``.

    Greens are placed first; a yellow is given only while copies of that letter remain unmatched in the
    secret, so repeated letters are scored the way the real game scores them.
    """
    pattern = ["G" if g == s else "_" for g, s in zip(guess, secret)]
    unmatched = Counter(s for g, s in zip(guess, secret) if g != s)
    for i, letter in enumerate(guess):
        if pattern[i] == "_" and unmatched[letter] > 0:
            pattern[i] = "Y"
            unmatched[letter] -= 1
    return "".join(pattern)


class Wordle(CodeBreakingGame):
    description = "Find a hidden five-letter word from green/yellow/gray letter feedback."
    guess_example = "<guess>crane</guess>"

    def __init__(
        self,
        max_guesses: int = 6,
        require_known_word: bool = False,
        repeat_penalty: float = 0.1,
        invalid_penalty: float = 0.1,
        words: Sequence[str] | None = None,
    ):
        super().__init__(max_guesses, repeat_penalty, invalid_penalty)
        words = WORDS if words is None else tuple(words)
        bad = [word for word in words if not isinstance(word, str) or not FIVE_LETTERS.fullmatch(word)]
        if not words or bad:
            raise ValueError(f"words must be a non-empty list of five lowercase letters a-z, got bad entries {bad[:5]}")
        self.words = words
        self.known_words = frozenset(words)
        self.require_known_word = require_known_word
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        secret = self.words[int(rng.integers(len(self.words)))]
        rules = (
            f"Let's play Wordle. I am thinking of a five-letter English word; you have {self.max_guesses} guesses "
            "to find it. After each guess I colour every letter: G = right letter in the right spot, "
            "Y = the letter is in the word but in another spot, _ = the letter is not in the word "
            "(or not as many times as you used it). "
            f"Answer with your guess in the form {self.guess_example}."
        )
        return Task(
            id=f"wordle-{index}",
            messages=[{"role": "user", "content": rules}],
            answer=secret,
            metadata={"max_guesses": self.max_guesses},
        )

    def _parse_guess(self, text: str) -> tuple[str | None, str]:
        if not FIVE_ASCII_LETTERS.fullmatch(text.strip()):
            return None, f"Your guess {quote(text)} is not a word of exactly five letters a-z."
        word = text.strip().lower()
        if self.require_known_word and word not in self.known_words:
            return None, f"{word.upper()} is not in my word list."
        return word, ""

    def _solver_guess(self) -> str:
        """Among the listed words consistent with every pattern so far, the one splitting them into the most
        patterns (the shipped list's opener is precomputed): solves each of the 736 secrets within 5 guesses."""
        if not self.guesses and OPENER in self.known_words:
            return OPENER
        candidates = [
            word
            for word in self.words
            if all(feedback_pattern(guess, word) == feedback_pattern(guess, self.secret) for guess in self.guesses)
        ]
        if len(candidates) > SPLIT_SEARCH_LIMIT:
            return candidates[0]
        return max(candidates, key=lambda guess: len({feedback_pattern(guess, word) for word in candidates}))

    def _wrong_guess(self) -> str:
        return next(word for word in self.words if word != self.secret and word not in self.guesses)

    def _score(self, guess: str) -> tuple[str, dict[str, Any]]:
        pattern = feedback_pattern(guess, self.secret)
        return f"{guess.upper()} -> {' '.join(pattern)}.", {"pattern": pattern}

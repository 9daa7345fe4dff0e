"""Describe and guess: a language game between two seats that share one verifiable reward.

The ``describer`` knows a secret word from a list of candidates; the ``guesser`` sees only the category and the
candidates. Each round the describer gives a clue (``<clue>...</clue>``) and the guesser names a candidate
(``<guess>word</guess>``); after a wrong guess both are told, and the describer clues again, for ``rounds`` rounds.

Rewards per seat (component ``outcome``), decided by string checks only:

- the guesser names the secret word: +1 to both seats (they win together);
- the rounds run out: 0 to both;
- the describer breaks the rules (no ``<clue>``, an empty clue or one over ``max_clue_chars``, the secret word in
  any disguise anywhere in its message, or a clue about the word or the list instead of the thing): -1 to the
  describer, 0 to the guesser, and the game ends;
- the guesser breaks the rules (no ``<guess>``, or a word that is not a candidate): -1 to the guesser, 0 to the
  describer, and the game ends.

The taboo (:mod:`envgym.envs.games.taboo`) reads the describer's message after normalisation and decoding: the
word in any case or script (homoglyphs, full-width, zero-width characters), at the start of a word, spelled with
separators or digits between its letters, backwards or rearranged, in leetspeak, rot13, base64, hex, byte codes,
letter numbers, Morse, the NATO alphabet, letter names, an acrostic, or a translation into five languages. The clue
itself may not talk about the word or the list (rhymes, spelling, letters, positions such as "the second
candidate") or name another candidate (an elimination list), and the two seats see the candidates in independent
random orders, so a position carries nothing. What no rule catches: a private code the seats agree on, other
languages, puns; the guess itself is always checked exactly (docs/multi-agent.md).

:meth:`DescribeGuess.reference_action` gives the describer a hand-written clue that singles the word out among
the candidates, and the guesser the secret word, so reference play wins in the first round.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import numpy as np

from envgym.core import Action, Message, RewardRange, Task, action_text
from envgym.envs.games.move_parsing import last_tag, quote
from envgym.envs.games.taboo import meta_clue, names_word
from envgym.multiagent import MultiAgentEnv, SeatTurn
from envgym.tasks import ProceduralTaskSource

DESCRIBER, GUESSER = "describer", "guesser"
MAX_CLUE_CHARS = 300
MAX_GUESS_CHARS = 40

# category -> word -> a clue that singles the word out among the category's words (the reference describer's).
WORDS: dict[str, dict[str, str]] = {
    "animals": {
        "cat": "a small pet that purrs and chases mice",
        "dog": "a loyal pet that barks and fetches sticks",
        "horse": "you ride it, and it gallops and neighs",
        "cow": "a farm animal that moos and gives milk",
        "lion": "a big wild feline with a mane, king of the savanna",
        "elephant": "the largest land animal, with a trunk and tusks",
        "penguin": "a black and white bird that swims but cannot fly",
        "owl": "a night bird that hoots and turns its head far around",
    },
    "fruits": {
        "apple": "crunchy, red or green, one a day keeps the doctor away",
        "banana": "long, yellow and curved; monkeys love it",
        "orange": "a round citrus fruit named like its colour",
        "grape": "small, grows in bunches, and is pressed into wine",
        "lemon": "a very sour yellow citrus fruit",
        "cherry": "small, red, on a long stem, with a stone inside",
        "strawberry": "red, heart-shaped, with its seeds on the outside",
        "watermelon": "huge, green outside, red and juicy inside",
    },
    "tools": {
        "hammer": "you hit nails into wood with it",
        "saw": "a toothed blade you push back and forth to cut wood",
        "screwdriver": "you turn screws with its tip",
        "wrench": "it grips nuts and bolts to turn them",
        "ladder": "you climb its rungs to reach high places",
        "shovel": "you dig holes in the ground with it",
        "drill": "it spins fast to bore holes",
        "scissors": "two blades joined in the middle that cut paper",
    },
    "vehicles": {
        "bicycle": "two wheels and pedals, powered by your legs",
        "car": "four wheels, a steering wheel, the usual way to drive to work",
        "train": "runs on rails and stops at stations",
        "airplane": "flies passengers between airports with fixed wings",
        "boat": "floats on water and may have sails or a motor",
        "bus": "a long road vehicle carrying many passengers on a fixed route with stops",
        "helicopter": "flies with spinning rotor blades on top and can hover",
        "rocket": "launches astronauts into space",
    },
    "jobs": {
        "doctor": "treats sick patients and writes prescriptions",
        "teacher": "gives lessons to pupils in a school",
        "chef": "cooks meals in a restaurant kitchen",
        "pilot": "flies an airplane from the cockpit",
        "farmer": "grows crops and raises animals on the land",
        "firefighter": "puts out fires and rescues people",
        "dentist": "looks after your teeth",
        "baker": "makes bread and cakes in an oven early in the morning",
    },
}


def _user(text: str) -> Message:
    return {"role": "user", "content": text}


class DescribeGuess(MultiAgentEnv):
    description = (
        "Describe and guess between two seats: a describer clues a secret word, a guesser names it "
        "among candidates; +1 to both for a right guess, -1 to a seat that breaks the rules."
    )
    agents = (DESCRIBER, GUESSER)
    reward_ranges = {"outcome": RewardRange(-1.0, 1.0)}

    def __init__(self, rounds: int = 2, candidates: int = 4, max_clue_chars: int = MAX_CLUE_CHARS):
        if not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"rounds must be an int >= 1, got {rounds!r}")
        most = min(len(words) for words in WORDS.values())
        if not isinstance(candidates, int) or not 2 <= candidates <= most:
            raise ValueError(f"candidates must be an int in [2, {most}] (words per category), got {candidates!r}")
        if not isinstance(max_clue_chars, int) or max_clue_chars < 10:
            raise ValueError(f"max_clue_chars must be an int >= 10, got {max_clue_chars!r}")
        self.rounds, self.candidates, self.max_clue_chars = rounds, candidates, max_clue_chars
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        category = sorted(WORDS)[int(rng.integers(len(WORDS)))]
        words = sorted(WORDS[category])
        chosen = [words[i] for i in rng.permutation(len(words))[: self.candidates]]
        secret = chosen[int(rng.integers(len(chosen)))]
        listed = ", ".join(chosen)
        # The guesser's list is in an order of its own: "the second candidate" tells it nothing.
        guesser_listed = ", ".join(chosen[i] for i in rng.permutation(len(chosen)))
        describer = (
            f"Let's play describe-and-guess. You are the describer; your partner guesses. The category is {category} "
            f"and the candidates are: {listed}. The secret word is: {secret}. Each round, describe it in the form "
            "<clue>your description</clue> so that your partner can tell it apart from the other candidates. Never "
            "write the secret word itself in any form (spelled out, backwards, rearranged, encoded, translated, or as "
            "the start of a longer word), never name another candidate or talk about the word's letters, sound or "
            f"place in the list, and keep the clue to at most {self.max_clue_chars} characters, or you lose. You "
            "both win if your "
            f"partner names it within {self.rounds} round(s)."
        )
        guesser = (
            "Let's play describe-and-guess. You are the guesser; your partner knows a secret word and describes it. "
            f"The category is {category} and the candidates are: {guesser_listed}. Answer with one candidate in the "
            "form <guess>word</guess>. Naming anything that is not a candidate loses the game. You both win if you "
            f"name the secret word within {self.rounds} round(s)."
        )
        return Task(
            id=f"describe-guess-{index}",
            messages=[_user(describer)],
            answer=secret,
            metadata={"category": category, "candidates": chosen, "guesser_prompt": guesser},
        )

    def _reset_seats(self, task: Task, options: dict[str, Any]) -> tuple[str, list[Message], dict[str, Any]]:
        self.secret, self.candidate_words = task.answer, list(task.metadata["candidates"])
        self.round, self.guesser_prompted, self.wrong_guess = 1, False, None
        return DESCRIBER, task.prompt(), {"category": task.metadata["category"], "round": 1}

    def reference_action(self) -> Action | None:
        """The hand-written clue for the describer, the secret word for the guesser."""
        if self.agent_selection == DESCRIBER:
            return f"<clue>{WORDS[self.task.metadata['category']][self.secret]}</clue>"
        if self.agent_selection == GUESSER:
            return f"<guess>{self.secret}</guess>"
        return None

    def _play(self, agent: str, action: Action) -> SeatTurn:
        text = action_text(action)
        return self._clue(text) if agent == DESCRIBER else self._guess(text)

    def _clue(self, text: str) -> SeatTurn:
        clue = last_tag(text, "clue")
        clue = None if clue is None else clue.strip()
        if clue is None:
            problem = "I could not find a <clue>...</clue> tag."
        elif not clue:
            problem = "The clue is empty."
        elif len(clue) > self.max_clue_chars:
            problem = f"The clue has {len(clue)} characters; the most is {self.max_clue_chars}."
        elif names_word(text, self.secret):
            problem = "Your message contains the secret word."
        elif (meta := meta_clue(clue, self.candidate_words, self.secret)) is not None:
            problem = f"Not allowed: {meta}."
        else:
            intro = "" if self.guesser_prompted else self.task.metadata["guesser_prompt"] + "\n\n"
            if self.wrong_guess is not None:  # the guesser hears of its miss with the next clue: one message a turn
                intro = f"No, it is not {self.wrong_guess}. "
            self.guesser_prompted = True
            return SeatTurn(
                messages={GUESSER: [_user(f"{intro}Round {self.round}. Your partner's clue: {clue}")]},
                rewards={DESCRIBER: {"outcome": 0.0}},
                next_agent=GUESSER,
                info={"action_valid": True, "round": self.round},
            )
        return self._broken(DESCRIBER, problem)

    def _guess(self, text: str) -> SeatTurn:
        guess = last_tag(text, "guess")
        word = None if guess is None else unicodedata.normalize("NFKC", guess).strip().casefold()
        if guess is None:
            return self._broken(GUESSER, "I could not find a <guess>word</guess> tag.")
        if len(word) > MAX_GUESS_CHARS or word not in self.candidate_words:
            return self._broken(GUESSER, f"{quote(guess, 20)} is not one of the candidates.")
        info: dict[str, Any] = {"action_valid": True, "round": self.round, "guess": word}
        if word == self.secret:
            both = "Your partner named the secret word: you both win!"
            info.update(correct=True, outcomes={DESCRIBER: "win", GUESSER: "win"})
            return SeatTurn(
                messages={GUESSER: [_user(f"Yes, it is {word}: you both win!")], DESCRIBER: [_user(both)]},
                rewards={DESCRIBER: {"outcome": 1.0}, GUESSER: {"outcome": 1.0}},
                next_agent=None,
                info=info,
            )
        if self.round >= self.rounds:
            info.update(correct=False, outcomes={DESCRIBER: "loss", GUESSER: "loss"})
            end = f"No, it is not {word}. That was the last round: the secret word was {self.secret}."
            return SeatTurn(
                messages={GUESSER: [_user(end)], DESCRIBER: [_user(f"Your partner guessed {word}. {end}")]},
                rewards={GUESSER: {"outcome": 0.0}},
                next_agent=None,
                info=info,
            )
        self.round, self.wrong_guess = self.round + 1, word
        return SeatTurn(
            messages={
                DESCRIBER: [
                    _user(f"Your partner guessed {word}, which is wrong. Round {self.round}: give another clue.")
                ]
            },
            rewards={GUESSER: {"outcome": 0.0}},
            next_agent=DESCRIBER,
            info=info,
        )

    def _broken(self, agent: str, problem: str) -> SeatTurn:
        """``agent`` broke the rules: it loses at -1, its partner gets 0, and the game ends."""
        partner = GUESSER if agent == DESCRIBER else DESCRIBER
        return SeatTurn(
            messages={
                agent: [_user(f"{problem} That breaks the rules, so the game is over: you lose.")],
                partner: [_user("Your partner broke the rules, so the game is over.")],
            },
            rewards={agent: {"outcome": -1.0}, partner: {"outcome": 0.0}},
            next_agent=None,
            info={"action_valid": False, "action_error": problem, "outcomes": {agent: "loss", partner: "loss"}},
        )

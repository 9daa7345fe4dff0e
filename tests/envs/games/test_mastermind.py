"""Mastermind: peg scoring, a consistent-guess solver always wins, trivial play scores zero."""

import itertools
import re

import numpy as np
import pytest

import envgym
from envgym.envs.games.mastermind import score_pegs
from envgym.utils import check_env

TASKS = range(20)
FEEDBACK = re.compile(r"((?:\d ?)+) -> (\d+) black, (\d+) white\.")
ALL_CODES = ["".join(code) for code in itertools.product("123456", repeat=4)]


class ConsistentGuessSolver:
    """Guesses the first code (in lexicographic order) that agrees with all feedback read so far."""

    def __init__(self):
        self.candidates = ALL_CODES

    def __call__(self, messages, info):
        for guess, black, white in FEEDBACK.findall(messages[-1]["content"]):
            guess, pegs = guess.replace(" ", ""), (int(black), int(white))
            self.candidates = [code for code in self.candidates if score_pegs(guess, code) == pegs]
        return f"<guess>{' '.join(self.candidates[0])}</guess>"


def test_passes_check_env():
    check_env(envgym.make("games/Mastermind-v0"), probe_actions=("<guess>1 2 3 4</guess>", "", "<guess>1122</guess>"))


@pytest.mark.parametrize(
    "guess, secret, pegs",
    [
        ("1234", "1234", (4, 0)),
        ("1234", "4321", (0, 4)),
        ("1122", "1212", (2, 2)),
        ("1111", "1222", (1, 0)),  # one 1 in the secret: the other three 1s score nothing
        ("5566", "1234", (0, 0)),
    ],
)
def test_pegs_count_each_secret_peg_at_most_once(guess, secret, pegs):
    assert score_pegs(guess, secret) == pegs


def test_consistent_guess_solver_wins_every_task_within_the_budget(play):
    env = envgym.make("games/Mastermind-v0")
    for index in TASKS:
        steps = play(env, ConsistentGuessSolver(), index)
        assert steps[-1].terminated and steps[-1].info["correct"] and len(steps) <= 10
        assert [s.reward for s in steps] == [0.0] * (len(steps) - 1) + [1.0]


def test_random_text_spends_every_guess_and_loses_at_the_invalid_penalty(play):
    env = envgym.make("games/Mastermind-v0")
    env.action_space.seed(0)
    results = [play(env, lambda m, i: env.action_space.sample(), index) for index in TASKS]
    assert all(len(steps) == 10 and steps[-1].terminated for steps in results)
    assert [sum(s.reward for s in steps) for steps in results] == pytest.approx([-1.0] * len(TASKS))


def test_random_codes_almost_never_win(play):
    env = envgym.make("games/Mastermind-v0")
    rng = np.random.default_rng(0)
    wins = [
        play(env, lambda m, i: f"<guess>{rng.choice(ALL_CODES)}</guess>", index)[-1].info.get("correct")
        for index in range(100)
    ]
    assert sum(bool(w) for w in wins) <= 5


@pytest.mark.parametrize("text", ["1 2 3 4", "1,2,3,4", "1234", " 1 2, 3 4 "])
def test_separators_between_pegs_are_optional(text):
    env = envgym.make("games/Mastermind-v0")
    env.reset(seed=0)
    assert env.step(f"<guess>{text}</guess>")[4]["guess"] == "1234"


@pytest.mark.parametrize(
    "text",
    [
        "1 2 3",
        "1 2 3 4 5",
        "1 2 3 7",
        "0 1 2 3",
        "red blue green red",
        "12 3 4 5",
        "١٢٣٤",
        "１２３４",
        "¹²³⁴",
        "1 2 3 4 " * 10_000,
        "nan",
        "-0",
    ],
    ids=lambda text: text[:12],
)
def test_a_malformed_code_is_invalid_and_uses_up_a_guess(text):
    env = envgym.make("games/Mastermind-v0", invalid_penalty=0.5)
    env.reset(seed=0)
    messages, reward, terminated, _, info = env.step(f"<guess>{text}</guess>")
    assert info["action_valid"] is False and info["guesses_left"] == 9 and reward == -0.5 and not terminated
    assert "4 colours from 1 to 6" in messages[0]["content"]


def test_running_out_of_guesses_ends_the_game_as_lost_and_reveals_the_answer():
    env = envgym.make("games/Mastermind-v0", max_guesses=1)
    env.reset(seed=0, options={"task_index": 0})
    wrong = next(code for code in ALL_CODES if code != env.unwrapped.secret)
    _, reward, terminated, truncated, info = env.step(f"<guess>{wrong}</guess>")
    assert terminated and not truncated and reward == 0.0 and info["answer"] == env.unwrapped.secret


def test_a_repeated_guess_costs_the_repeat_penalty():
    env = envgym.make("games/Mastermind-v0")
    env.reset(seed=0, options={"task_index": 0})
    wrong = next(code for code in ALL_CODES if code != env.unwrapped.secret)
    env.step(f"<guess>{wrong}</guess>")
    assert env.step(f"<guess>{wrong}</guess>")[1] == pytest.approx(-0.1)


def test_the_reference_solver_wins_every_task_within_the_budget(play):
    env = envgym.make("games/Mastermind-v0")
    for index in TASKS:
        steps = play(env, lambda messages, info: env.reference_action(), index)
        assert steps[-1].info["correct"] and sum(s.reward for s in steps) == 1.0 and len(steps) <= 10


def test_the_reference_on_a_board_too_big_to_enumerate_is_still_a_winning_guess():
    env = envgym.make("games/Mastermind-v0", code_length=12, colors=9)
    env.reset(seed=0, options={"task_index": 0})
    assert env.step(env.reference_action())[4]["correct"] is True


def test_other_board_sizes_make_codes_of_that_shape():
    env = envgym.make("games/Mastermind-v0", code_length=5, colors=8)
    env.reset(seed=3)
    assert re.fullmatch(r"[1-8]{5}", env.unwrapped.secret)


@pytest.mark.parametrize("kwargs", [{"colors": 10}, {"colors": 1}, {"code_length": 0}, {"max_guesses": 0}])
def test_impossible_boards_are_rejected(kwargs):
    with pytest.raises(ValueError, match="must be"):
        envgym.make("games/Mastermind-v0", **kwargs)

"""Wordle: feedback like the real game, a candidate-filtering solver always wins, trivial play scores zero."""

import re

import numpy as np
import pytest

import envgym
from envgym.envs.games.wordle import feedback_pattern
from envgym.envs.games.wordle_words import WORDS
from envgym.utils import check_env

TASKS = range(20)
FEEDBACK = re.compile(r"([A-Z]{5}) -> ([GY_ ]{9})\.")


class FilteringSolver:
    """Keeps the words consistent with all feedback read from the messages; guesses the word that splits
    them into the most feedback patterns (a candidate when it ties)."""

    def __init__(self):
        self.candidates = list(WORDS)

    def __call__(self, messages, info):
        for guess, pattern in FEEDBACK.findall(messages[-1]["content"]):
            pattern = pattern.replace(" ", "")
            self.candidates = [w for w in self.candidates if feedback_pattern(guess.lower(), w) == pattern]
        if len(self.candidates) == len(WORDS):
            return "<guess>trace</guess>"  # the best opener on the shipped list, precomputed
        pool = WORDS if len(self.candidates) > 3 else self.candidates
        consistent = set(self.candidates)
        best = max(pool, key=lambda g: (len({feedback_pattern(g, s) for s in self.candidates}), g in consistent))
        return f"<guess>{best}</guess>"


def test_passes_check_env():
    check_env(envgym.make("games/Wordle-v0"), probe_actions=("<guess>crane</guess>", "", "<guess>12345</guess>"))


def test_the_shipped_word_list_has_hundreds_of_distinct_five_letter_words():
    assert len(WORDS) >= 300 and len(set(WORDS)) == len(WORDS)
    assert all(re.fullmatch(r"[a-z]{5}", word) for word in WORDS)


@pytest.mark.parametrize(
    "guess, secret, pattern",
    [
        ("crane", "crane", "GGGGG"),
        ("speed", "abide", "__Y_Y"),  # only one E of SPEED is yellow: ABIDE has one E
        ("eerie", "there", "Y_Y_G"),  # the green E takes one copy; the first E gets the other
        ("llama", "hello", "YY___"),
    ],
)
def test_feedback_scores_repeated_letters_like_the_real_game(guess, secret, pattern):
    assert feedback_pattern(guess, secret) == pattern


def test_filtering_solver_wins_every_task_within_six_guesses(play):
    env = envgym.make("games/Wordle-v0")
    for index in TASKS:
        steps = play(env, FilteringSolver(), index)
        assert len(steps) <= 6 and steps[-1].terminated and steps[-1].info["correct"]
        assert [s.reward for s in steps] == [0.0] * (len(steps) - 1) + [1.0]


def test_random_text_spends_every_guess_and_loses_at_the_invalid_penalty(play):
    env = envgym.make("games/Wordle-v0")
    env.action_space.seed(0)
    results = [play(env, lambda m, i: env.action_space.sample(), index) for index in TASKS]
    assert all(len(steps) == 6 and steps[-1].terminated for steps in results)
    assert [sum(s.reward for s in steps) for steps in results] == pytest.approx([-0.6] * len(TASKS))


def test_random_words_almost_never_win(play):
    env = envgym.make("games/Wordle-v0")
    rng = np.random.default_rng(0)
    wins = [
        play(env, lambda m, i: f"<guess>{rng.choice(WORDS)}</guess>", index)[-1].info.get("correct")
        for index in range(100)
    ]
    assert sum(bool(w) for w in wins) <= 5


def test_many_guess_tags_in_one_turn_count_as_the_last_guess_only():
    env = envgym.make("games/Wordle-v0")
    env.reset(seed=0, options={"task_index": 0})
    secret = env.unwrapped.secret
    others = [w for w in WORDS if w != secret][:5]
    _, reward, terminated, _, info = env.step("".join(f"<guess>{w}</guess>" for w in [secret, *others]))
    assert info["guess"] == others[-1] and reward == 0.0 and not terminated


def test_running_out_of_guesses_ends_the_game_as_lost_and_reveals_the_answer():
    env = envgym.make("games/Wordle-v0", max_guesses=2)
    env.reset(seed=0, options={"task_index": 0})
    wrong = [w for w in WORDS if w != env.unwrapped.secret][:2]
    env.step(f"<guess>{wrong[0]}</guess>")
    messages, reward, terminated, truncated, info = env.step(f"<guess>{wrong[1]}</guess>")
    assert terminated and not truncated and reward == 0.0
    assert info["answer"] == env.unwrapped.secret and env.unwrapped.secret in messages[0]["content"]


def test_a_repeated_guess_uses_a_guess_and_costs_the_repeat_penalty():
    env = envgym.make("games/Wordle-v0")
    env.reset(seed=0, options={"task_index": 0})
    word = next(w for w in WORDS if w != env.unwrapped.secret)
    env.step(f"<guess>{word}</guess>")
    _, reward, _, _, info = env.step(f"<guess>{word}</guess>")
    assert reward == pytest.approx(-0.1) and info["guesses_left"] == 4


@pytest.mark.parametrize(
    "action",
    [
        "crane",
        "<guess>cranes</guess>",
        "<guess>cr4ne</guess>",
        "<guess></guess>",
        "<guess>ｃｒａｎｅ</guess>",
        "<guess>\u212arane</guess>",
    ],
)
def test_a_malformed_guess_is_invalid_and_uses_up_a_guess(action):
    env = envgym.make("games/Wordle-v0", invalid_penalty=0.5)
    env.reset(seed=0)
    messages, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False and info["guesses_left"] == 5
    assert reward == -0.5 and not terminated and not truncated
    assert "<guess>crane</guess>" in messages[0]["content"]


def test_unknown_words_are_rejected_only_when_the_word_list_is_required():
    assert "qzxvw" not in WORDS
    strict = envgym.make("games/Wordle-v0", require_known_word=True)
    strict.reset(seed=0)
    _, _, _, _, info = strict.step("<guess>qzxvw</guess>")
    assert info["action_valid"] is False and "word list" in info["action_error"]
    lenient = envgym.make("games/Wordle-v0")
    lenient.reset(seed=0)
    assert lenient.step("<guess>qzxvw</guess>")[4]["action_valid"] is True


def test_invalid_turns_spend_the_guess_budget_and_lose_the_game_before_the_turn_limit():
    env = envgym.make("games/Wordle-v0")
    env.reset(seed=0)
    results = [env.step("no guess here") for _ in range(6)]
    assert [r[2] for r in results] == [False] * 5 + [True] and not any(r[3] for r in results)
    assert sum(r[1] for r in results) == pytest.approx(-0.6) and results[-1][4]["answer"] == env.unwrapped.secret


def test_the_reference_solver_wins_every_task_within_the_budget(play):
    env = envgym.make("games/Wordle-v0")
    for index in TASKS:
        steps = play(env, lambda messages, info: env.reference_action(), index)
        assert steps[-1].info["correct"] and sum(s.reward for s in steps) == 1.0 and len(steps) <= 6


def test_a_word_list_with_a_bad_entry_is_rejected_with_what_is_accepted():
    with pytest.raises(ValueError, match="five lowercase letters"):
        envgym.make("games/Wordle-v0", words=["crane", "toolong"])

"""GuessNumber: binary search always wins in time with the documented per-turn rewards."""

import math

import pytest

import envgym
from envgym.utils import check_env

SEEDS = range(50)


def play_binary_search(env, seed: int, low: int, high: int) -> list[tuple[float, dict]]:
    """Guess the middle of the interval the feedback leaves open; return (reward, info) per turn."""
    env.reset(seed=seed, options={"task_index": seed})
    turns = []
    while True:
        guess = (low + high) // 2
        _, reward, terminated, truncated, info = env.step(f"<guess>{guess}</guess>")
        turns.append((reward, info))
        if terminated or truncated:
            return turns
        if info["feedback"] == "higher":
            low = guess + 1
        else:
            high = guess - 1


def test_passes_check_env():
    check_env(envgym.make("games/GuessNumber-v0"))


@pytest.mark.parametrize("low, high", [(1, 100), (1, 10), (-50, 50), (1, 1000)])
def test_binary_search_wins_within_log2_turns_with_reward_only_on_the_last_turn(low, high):
    bound = math.ceil(math.log2(high - low + 1)) + 1
    env = envgym.make("games/GuessNumber-v0", low=low, high=high, max_turns=bound)
    for seed in SEEDS:
        turns = play_binary_search(env, seed, low, high)
        assert len(turns) <= bound
        *misses, (last_reward, last_info) = turns
        assert last_info["correct"] is True and last_reward == 1.0
        assert all(reward == 0.0 and info["action_valid"] for reward, info in misses)


def test_the_reference_is_binary_search_and_always_wins_in_time(play):
    env = envgym.make("games/GuessNumber-v0")
    for seed in SEEDS:
        steps = play(env, lambda messages, info: env.reference_action(), seed)
        assert steps[-1].info["correct"] and sum(s.reward for s in steps) == 1.0 and len(steps) <= 7


def test_numbers_longer_than_twelve_digits_parse_when_the_range_has_them(play):
    env = envgym.make("games/GuessNumber-v0", low=1, high=10**15, max_turns=52)
    steps = play(env, lambda messages, info: env.reference_action(), 0)
    assert steps[-1].info["correct"] and all(step.info["action_valid"] for step in steps)


def test_negative_zero_is_the_guess_zero():
    env = envgym.make("games/GuessNumber-v0", low=-5, high=5)
    env.reset(seed=0)
    assert env.step("<guess>-0</guess>")[4]["guess"] == 0


def test_an_invalid_turn_cheaper_than_a_wasted_guess_is_rejected():
    with pytest.raises(ValueError, match="invalid_penalty .* must be >= wasted_penalty"):
        envgym.make("games/GuessNumber-v0", invalid_penalty=0.0)


def test_repeating_a_ruled_out_guess_costs_the_wasted_penalty():
    env = envgym.make("games/GuessNumber-v0")
    env.reset(seed=0, options={"task_index": 0})
    secret = env.unwrapped.secret
    wrong = 1 if secret != 1 else 100
    _, first_reward, *_ = env.step(f"<guess>{wrong}</guess>")
    _, reward, terminated, _, info = env.step(f"<guess>{wrong}</guess>")
    assert first_reward == 0.0
    assert reward == pytest.approx(-0.1) and info["reward_components"]["wasted"] == pytest.approx(-0.1)
    assert not terminated


@pytest.mark.parametrize(
    "action",
    [
        "",
        "fifty",
        "<guess>fifty</guess>",
        "<guess>50",
        "<guess>٥٠</guess>",
        "<guess>５０</guess>",
        "<guess>⁵⁰</guess>",
        "<guess>५०</guess>",
        "<guess>nan</guess>",
        "<guess>50.0</guess>",
        "<guess>1" + "0" * 100_000 + "</guess>",
    ],
)
def test_a_malformed_guess_costs_as_much_as_a_wasted_guess_and_the_episode_goes_on(action):
    env = envgym.make("games/GuessNumber-v0")
    env.reset(seed=0)
    messages, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False
    assert reward == pytest.approx(-0.1) and not terminated and not truncated
    assert "<guess>N</guess>" in messages[0]["content"]

"""Bandit: pulling the best arm has zero regret and the most payoff; random play gains nothing over chance."""

import re

import numpy as np
import pytest

import envgym
from envgym.utils import check_env

TASKS = range(20)
TALLY = re.compile(r"arm (\d+): (\d+)/(\d+)")


def best_arm_oracle(env):
    """Knows the hidden means and always pulls the best arm."""
    return lambda messages, info: f"<pull>{int(np.argmax(env.unwrapped.means)) + 1}</pull>"


def fixed_arm(arm: int):
    return lambda messages, info: f"<pull>{arm}</pull>"


def random_arm(seed: int, arms: int = 5):
    rng = np.random.default_rng(seed)
    return lambda messages, info: f"<pull>{rng.integers(1, arms + 1)}</pull>"


def explore_then_commit(messages, info):
    """Reads the tally: pulls every arm twice, then the arm with the best payoff rate so far."""
    tally = [(int(paid), int(pulled)) for _, paid, pulled in TALLY.findall(messages[-1]["content"])]
    if not tally:
        return "<pull>1</pull>"
    untried = [arm for arm, (_, pulled) in enumerate(tally) if pulled < 2]
    arm = untried[0] if untried else max(range(len(tally)), key=lambda a: tally[a][0] / tally[a][1])
    return f"<pull>{arm + 1}</pull>"


def normalized_score(env, steps) -> float:
    """1 for zero regret, 0 for the regret of pulling uniformly at random (in expectation)."""
    means = env.unwrapped.means
    random_regret = env.unwrapped.pulls * (max(means) - sum(means) / len(means))
    return 1.0 - steps[-1].info["cumulative_regret"] / random_regret


def test_passes_check_env():
    check_env(envgym.make("games/Bandit-v0"), probe_actions=("<pull>1</pull>", "<pull>3</pull>", "", "<pull>9</pull>"))


def test_pulling_the_best_arm_has_zero_regret_and_the_most_payoff_of_any_fixed_arm(play):
    env = envgym.make("games/Bandit-v0")
    for index in TASKS:
        steps = play(env, best_arm_oracle(env), index)
        assert len(steps) == 20 and steps[-1].terminated and steps[-1].info["cumulative_regret"] == 0.0
        best_total = sum(s.reward for s in steps)
        for arm in range(1, 6):  # payoffs share one draw per turn, so the best arm pays the most on every path
            assert sum(s.reward for s in play(env, fixed_arm(arm), index)) <= best_total


def test_random_pulls_score_near_zero_on_the_regret_scale(play):
    env = envgym.make("games/Bandit-v0")
    scores = [normalized_score(env, play(env, random_arm(index), index)) for index in TASKS]
    assert abs(np.mean(scores)) < 0.25


def test_explore_then_commit_from_the_tally_beats_random(play):
    env = envgym.make("games/Bandit-v0")
    scores = [normalized_score(env, play(env, explore_then_commit, index)) for index in TASKS]
    assert np.mean(scores) > 0.25  # it spends half the budget exploring


def test_random_text_pays_nothing_and_wastes_every_pull(play):
    env = envgym.make("games/Bandit-v0")
    env.action_space.seed(0)
    for index in TASKS:
        steps = play(env, lambda m, i: env.action_space.sample(), index)
        assert sum(s.reward for s in steps) == 0.0 and len(steps) == 20 and steps[-1].terminated
        assert steps[-1].info["cumulative_regret"] == pytest.approx(20 * max(env.unwrapped.means))


def test_a_wasted_turn_does_not_change_what_later_pulls_pay():
    env = envgym.make("games/Bandit-v0")
    env.reset(options={"task_index": 3})
    env.step("no pull")
    after_waste = [env.step("<pull>1</pull>")[4]["payoff"] for _ in range(10)]
    env.reset(options={"task_index": 3})
    env.step("<pull>2</pull>")
    after_pull = [env.step("<pull>1</pull>")[4]["payoff"] for _ in range(10)]
    assert after_waste == after_pull


@pytest.mark.parametrize(
    "action, problem",
    [
        ("1", "could not find"),
        ("<pull>0</pull>", "not an arm number"),
        ("<pull>6</pull>", "not an arm number"),
        ("<pull>two</pull>", "not an arm number"),
        ("<pull>²</pull>", "not an arm number"),
        ("<pull>٣</pull>", "not an arm number"),
        ("<pull>３</pull>", "not an arm number"),
        ("<pull>३</pull>", "not an arm number"),
        ("<pull>-0</pull>", "not an arm number"),
        ("<pull>nan</pull>", "not an arm number"),
        ("<pull>" + "9" * 50_000 + "</pull>", "not an arm number"),
        ("<pull>2", "could not find"),
    ],
)
def test_a_pull_of_no_arm_is_invalid_and_costs_the_penalty(action, problem):
    env = envgym.make("games/Bandit-v0", invalid_penalty=0.5)
    env.reset(seed=0)
    messages, reward, terminated, _, info = env.step(action)
    assert info["action_valid"] is False and problem in info["action_error"] and reward == -0.5 and not terminated
    assert info["pulls_left"] == 19 and "<pull>k</pull>" in messages[0]["content"]


def test_the_reference_pulls_the_best_arm_with_zero_regret(play):
    env = envgym.make("games/Bandit-v0")
    for index in TASKS:
        steps = play(env, lambda messages, info: env.reference_action(), index)
        assert len(steps) == 20 and steps[-1].info["cumulative_regret"] == 0.0


def test_the_last_turn_reveals_the_best_arm():
    env = envgym.make("games/Bandit-v0", pulls=1)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step("<pull>1</pull>")
    assert terminated and info["answer"] == int(np.argmax(env.unwrapped.means)) + 1


@pytest.mark.parametrize("kwargs", [{"arms": 1}, {"arms": 101}, {"pulls": 0}, {"pulls": 2.5}])
def test_impossible_settings_are_rejected(kwargs):
    with pytest.raises(ValueError, match="must be"):
        envgym.make("games/Bandit-v0", **kwargs)

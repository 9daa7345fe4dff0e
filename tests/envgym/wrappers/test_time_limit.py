import pytest

import envgym
from envgym import ResetNeeded
from envgym.envs.games.guess_number import GuessNumber
from envgym.wrappers import TimeLimit


def test_truncates_after_max_turns_and_counts_turns():
    env = TimeLimit(GuessNumber(), max_turns=2)
    env.reset(seed=0)
    assert env.step("no guess")[3] is False
    _, _, terminated, truncated, info = env.step("no guess")
    assert (terminated, truncated, info["turn"], info["truncated_by"]) == (False, True, 2, "max_turns")
    with pytest.raises(ResetNeeded, match="ended"):
        env.step("no guess")


def test_termination_on_the_last_turn_is_not_truncation():
    env = TimeLimit(GuessNumber(low=1, high=2), max_turns=1)
    env.reset(options={"task": envgym.Task("t", [], answer=1)})
    _, _, terminated, truncated, _ = env.step("<guess>1</guess>")
    assert terminated and not truncated


def test_step_before_reset_raises():
    with pytest.raises(ResetNeeded, match="before reset"):
        TimeLimit(GuessNumber(), max_turns=3).step("x")


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_turns_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="positive int"):
        TimeLimit(GuessNumber(), max_turns=bad)


def test_the_reference_action_is_the_wrapped_envs_and_wins_within_the_limit():
    env = TimeLimit(GuessNumber(), max_turns=7)
    env.reset(seed=0, options={"task_index": 3})
    while True:
        _, reward, terminated, truncated, _ = env.step(env.reference_action())
        if terminated or truncated:
            break
    assert terminated and reward == 1.0

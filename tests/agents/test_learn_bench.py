"""``envgym bench learn``'s verdict: the step at which a curve's 10-step average first reaches a reward."""

from envgym.agents.learn_bench import WINDOW, first_step_reaching


def test_the_first_step_whose_trailing_average_reaches_the_target():
    rewards = [0.0] * WINDOW + [1.0] * WINDOW
    assert first_step_reaching(rewards, 0.5) == WINDOW + WINDOW // 2
    assert first_step_reaching(rewards, 0.0) == WINDOW
    assert first_step_reaching(rewards, 1.0) == 2 * WINDOW


def test_a_curve_that_never_gets_there_has_no_step():
    assert first_step_reaching([0.2] * 30, 0.3) is None
    assert first_step_reaching([1.0] * (WINDOW - 1), 0.5) is None  # fewer steps than one window

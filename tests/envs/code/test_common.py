"""What the code envs share: which test cases feedback may show, and what it says."""

from envgym.envs.code.common import failure_feedback, visible_cases
from envgym.sandbox import testing


def test_the_split_is_the_same_every_time_and_depends_on_the_task():
    assert visible_cases("HumanEval/0", 10) == visible_cases("HumanEval/0", 10)
    assert any(visible_cases("HumanEval/0", 10) != visible_cases(f"HumanEval/{i}", 10) for i in range(1, 5))


def test_at_least_one_case_is_always_held_out():
    for total in range(1, 30):
        assert len(visible_cases("task", total)) == total // 2 < total


def test_public_tests_are_the_visible_ones_when_some_are_left_out():
    assert visible_cases("task", 5, public=2) == {0, 1}
    assert len(visible_cases("task", 2, public=2)) == 1  # all public: half are held out all the same


def test_feedback_names_no_held_out_case():
    report = testing.TestReport([testing.TestCaseResult("shown", False, "wrong"), testing.TestCaseResult("held out", False, "secret")])
    feedback = failure_feedback(report, frozenset({0}))
    assert "shown: wrong" in feedback and "secret" not in feedback and "held out" not in feedback


def test_feedback_says_when_only_held_out_cases_fail():
    report = testing.TestReport([testing.TestCaseResult("shown", True), testing.TestCaseResult("held out", False, "secret")])
    feedback = failure_feedback(report, frozenset({0}))
    assert "hidden tests fail" in feedback and "secret" not in feedback

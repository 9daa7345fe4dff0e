"""What the code envs share: reading the fenced block, which test cases feedback may show, and what it says."""

import re

import pytest

from envgym.envs.code.common import LANGUAGE_ALIASES, extract_code, failure_feedback, visible_cases
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
    report = testing.TestReport(
        [testing.TestCaseResult("shown", False, "wrong"), testing.TestCaseResult("held out", False, "secret")]
    )
    feedback = failure_feedback(report, frozenset({0}))
    assert "shown: wrong" in feedback and "secret" not in feedback and "held out" not in feedback


def test_feedback_says_when_only_held_out_cases_fail():
    report = testing.TestReport(
        [testing.TestCaseResult("shown", True), testing.TestCaseResult("held out", False, "secret")]
    )
    feedback = failure_feedback(report, frozenset({0}))
    assert "hidden tests fail" in feedback and "secret" not in feedback


FENCES = [
    "```python\nprint(1)\n```",
    "text ```py\na\n``` more ```\nb\n```",
    "```python title\nx\n```",
    "````python\ncode```",
    "``` \n```",
    "```python\nunclosed",
    "no fence",
    "```a```b\nc\n```",
    "```c++\nint main(){}\n```",
    "```\n```\n```python\nlast\n```",
    "```\r\nwindows\r\n```",
]
# The regular expression extract_code used before it scanned in one pass: the same blocks, found slowly.
OLD_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+#-]*)[^\n]*\n(.*?)```", re.DOTALL)


@pytest.mark.parametrize("text", FENCES)
def test_fences_are_read_as_the_regular_expression_read_them(text):
    blocks = OLD_FENCE.findall(text)
    expected = (
        None if not blocks else (blocks[-1][1], LANGUAGE_ALIASES.get(blocks[-1][0].lower(), blocks[-1][0].lower()))
    )
    assert extract_code(text) == expected


@pytest.mark.timeout(10)  # a hang guard, not a speed target: the regular expression took 20 s on these
@pytest.mark.parametrize("text", ["```a" * 25_000, "`" * 100_000, "``` " * 25_000])
def test_100_kb_of_unclosed_fences_is_read_in_one_pass(text):
    assert extract_code(text) is None


@pytest.mark.timeout(10)  # the entry-point search took 38 s on a reply of 100,000 newlines
def test_a_reply_of_blank_lines_is_graded_without_backtracking():
    from envgym.envs.code.humaneval import humaneval_program

    answer = {"entry_point": "add", "prompt": "def add(x, y):\n"}
    assert humaneval_program(answer, "\n" * 100_000).startswith("def add(x, y):\n\n")

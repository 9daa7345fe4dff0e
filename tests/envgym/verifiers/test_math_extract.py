"""extract_answer and grade: where the final answer is found, and what a grade says."""

import pytest

from envgym.verifiers.math import Grade, extract_answer, grade


def test_the_last_boxed_answer_wins_and_nested_braces_are_matched():
    assert extract_answer("First \\boxed{1}, then \\boxed{\\frac{1}{2}}.") == "\\frac{1}{2}"


def test_fbox_and_unbraced_boxed_count():
    assert extract_answer("so \\fbox{7}") == "7"
    assert extract_answer("so \\boxed 7 done") == "7"


def test_only_text_after_think_is_searched():
    assert extract_answer("<think>maybe \\boxed{3}</think> it is \\boxed{4}") == "4"


def test_an_unfinished_think_has_no_answer():
    assert extract_answer("<think>maybe \\boxed{3}") is None


def test_gsm8k_and_answer_is_formats():
    assert extract_answer("She has 3 + 4 = 7 apples.\n#### 7") == "7"
    assert extract_answer("So the answer is $\\frac{3}{4}$.") == "\\frac{3}{4}"
    assert extract_answer("Final answer: 12") == "12"


def test_last_number_is_opt_in():
    assert extract_answer("I think 41, no, 42") is None
    assert extract_answer("I think 41, no, 42", formats=("boxed", "last_number")) == "42"


def test_formats_are_tried_in_order_and_a_tuple_is_one_tier_where_the_later_answer_wins():
    text = "\\boxed{1} was a slip; #### 2"
    assert extract_answer(text, formats=("boxed", "gsm8k")) == "1"
    assert extract_answer(text, formats=(("boxed", "gsm8k"),)) == "2"


def test_an_answer_in_prose_needs_the_lenient_formats():
    from envgym.verifiers.math import LENIENT_FORMATS

    assert extract_answer("We get $x = 5$ in the end.") is None
    assert extract_answer("We get $x = 5$ in the end.", formats=LENIENT_FORMATS) == "x = 5"


def test_unknown_formats_are_rejected():
    with pytest.raises(ValueError, match="unknown answer formats"):
        extract_answer("x", formats=("boxed", "latex"))


def test_grade_reports_reward_extracted_answer_and_reason():
    assert grade("... \\boxed{0.5}", "\\frac{1}{2}") == Grade(1.0, "0.5", "correct")
    assert grade("... \\boxed{0.6}", "\\frac{1}{2}") == Grade(0.0, "0.6", "incorrect")
    assert grade("no idea", "\\frac{1}{2}") == Grade(0.0, None, "no_answer")

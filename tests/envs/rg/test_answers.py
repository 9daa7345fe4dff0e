"""Task-independent checks on an answer (NaN on number tasks, hedges) and each task's reference answer."""

import pytest

from envgym.envs.rg.answers import extract_answer, is_hedge, reference_answer, refuse_before_scoring


def test_the_answer_is_the_text_of_the_last_answer_tags():
    assert extract_answer("think <answer>1</answer> then <answer> 2 </answer> done") == "2"
    assert extract_answer("<answer><answer>0</answer>") == "0"
    assert extract_answer("<answer>1</answer><answer>2") == "1"
    assert extract_answer("no tags") is None and extract_answer("</answer><answer>") is None


@pytest.mark.timeout(20)  # a hang guard, not a speed target: reasoning-gym's regex takes over 30 s here
def test_extraction_finishes_on_100_kb_of_unclosed_tags():
    assert extract_answer("<answer>" * 12_500) is None


def test_number_tasks_refuse_nan_infinities_and_overflowing_literals():
    for answer in ("nan", "-NaN", "inf", "Infinity", "nan+nanj", "1e309", "(nan, 2)"):
        assert refuse_before_scoring(answer, "48.0 + 36.0i") is not None, answer


def test_finite_numbers_and_text_tasks_are_scored_as_usual():
    assert refuse_before_scoring("1e30", "-3.5") is None
    assert refuse_before_scoring("nan", "grandmother") is None  # "nan" is a word in a text task
    assert refuse_before_scoring("infinite", "2") is None


def test_the_gold_among_other_words_is_a_hedge():
    assert is_hedge("5 days or 0", "5 days")
    assert is_hedge("noremopyh noremopyh", "noremopyh")
    assert is_hedge("A → B, or C", "A → B")


def test_the_gold_alone_in_another_form_is_not_a_hedge():
    assert not is_hedge("5 Days.", "5 days")
    assert not is_hedge("1.00", "1.0")
    assert not is_hedge("0", "5 days")


def test_the_reference_answer_is_the_gold_or_a_known_solution():
    assert reference_answer("gcd", {"answer": "6", "metadata": {}}) == "6"
    colouring = {"metadata": {"possible_answer": {0: 1, 1: 2}}, "answer": None}
    assert reference_answer("graph_color", colouring) == '{"0": 1, "1": 2}'
    assert reference_answer("boxnet", {"answer": None, "metadata": {"initial_state": {}}}) is None

"""Task-independent checks on an answer (NaN on number tasks, hedges) and each task's reference answer."""

from envgym.envs.rg.answers import is_hedge, reference_answer, refuse_before_scoring


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

"""single_answer: one committed answer in a tag; several different answers are none."""

from envgym.envs.answer_tag import single_answer, tag_bodies


def test_one_answer_is_read_stripped():
    assert single_answer("so <answer> hxq </answer>") == ("hxq", None)


def test_the_same_answer_repeated_is_one_answer():
    assert single_answer("<answer>7</answer> again <answer>7</answer>") == ("7", None)


def test_two_different_answers_are_refused_with_a_reason():
    answer, why = single_answer("<answer>7</answer><answer>8</answer>")
    assert answer is None and "2 different" in why


def test_no_tag_is_no_answer():
    assert single_answer("the answer is 7")[0] is None


def test_nested_tags_give_the_innermost_body():
    assert tag_bodies("<answer><answer>0</answer></answer>", "answer") == ["0"]

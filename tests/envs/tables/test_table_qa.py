"""tables/TableQA-v0: numbers to their written precision, text by normalized exact match, honest answers."""

from fractions import Fraction

import pytest

import envgym
from envgym.envs.tables.table_qa import format_number, number_is_right
from envgym.utils import check_env


def play(action, index=0, **kwargs):
    env = envgym.make("tables/TableQA-v0", **kwargs)
    env.reset(options={"task_index": index})
    return env.step(action(env) if callable(action) else action)


def task_where(condition):
    """The first task index whose task meets ``condition``."""
    env = envgym.make("tables/TableQA-v0")
    for index in range(300):
        env.reset(options={"task_index": index})
        if condition(env.task):
            return index
    raise AssertionError("no such task in the first 300")


@pytest.mark.parametrize(
    "answer, right",
    [
        ("12.35", True),
        ("12.347", True),
        ("12.3467", True),
        ("12.34", False),
        ("12.3", False),
        ("12", False),
        ("12.36", False),
        ("1e1", None),
        ("12.35 or 12", None),
        ("nan", None),
        ("١٢.٣٥", None),
    ],
)
def test_a_mean_is_right_to_the_answers_written_precision_and_at_least_2_places(answer, right):
    assert number_is_right(answer, Fraction(3704, 300)) == right  # 12.34666...


def test_an_exact_value_needs_only_its_own_places():
    assert number_is_right("12.5", Fraction(25, 2)) and number_is_right("12.50", Fraction(25, 2))
    assert number_is_right("1,234", Fraction(1234)) and not number_is_right("1234.4", Fraction(1234))


def test_format_number_rounds_to_the_required_places():
    assert [format_number(v) for v in (Fraction(3704, 300), Fraction(25, 2), Fraction(-7), Fraction(1, 20))] == [
        "12.35",
        "12.5",
        "-7",
        "0.05",
    ]


@pytest.mark.parametrize("table_format", ["markdown", "csv", "json"])
def test_the_reference_answer_earns_1_and_the_wrong_one_0(table_format):
    env = envgym.make("tables/TableQA-v0", table_format=table_format)
    for index in range(40):
        env.reset(options={"task_index": index})
        assert env.step(env.reference_action())[1] == 1.0
        env.reset(options={"task_index": index})
        _, reward, _, _, info = env.step(env.wrong_action())
        assert reward == 0.0 and info["action_valid"]


def test_text_answers_ignore_case_and_surrounding_punctuation():
    index = task_where(lambda task: task.answer["type"] == "text")
    assert play(lambda e: f"<answer> {e.task.answer['display'].upper()}. </answer>", index)[1] == 1.0


def test_a_list_of_candidates_earns_nothing():
    index = task_where(lambda task: task.metadata["kind"] == "compare")
    assert play(lambda e: f"<answer>{e.task.answer['display']}, {e.task.answer['wrong']}</answer>", index)[1] == 0.0


def test_two_different_answer_tags_are_refused():
    _, reward, _, _, info = play(
        lambda e: f"<answer>{e.task.answer['wrong']}</answer><answer>{e.task.answer['display']}</answer>"
    )
    assert reward == 0.0 and info["action_valid"] is False


def test_a_numeric_answer_that_is_not_a_number_is_a_policy_mistake():
    index = task_where(lambda task: task.answer["type"] == "number")
    _, reward, _, _, info = play("<answer>about 12</answer>", index)
    assert reward == 0.0 and info["action_valid"] is False and "plain number" in info["action_error"]


@pytest.mark.parametrize("kwargs", [{"table_format": "html"}, {"domains": ["planets"]}, {"domains": []}])
def test_bad_options_are_refused(kwargs):
    with pytest.raises(ValueError):
        envgym.make("tables/TableQA-v0", **kwargs)


@pytest.mark.parametrize("table_format", ["markdown", "json"])
def test_passes_check_env(table_format):
    check_env(envgym.make("tables/TableQA-v0", table_format=table_format))

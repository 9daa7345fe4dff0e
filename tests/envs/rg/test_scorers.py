"""Our replacements for reasoning-gym scorers: they keep the task's rule and close the hole."""

import inspect
import re

import pytest

from envgym.envs.rg.answers import reference_answer
from envgym.envs.rg.excluded import EXCLUDED
from envgym.envs.rg.scorers import SCORERS
from envgym.envs.rg.tasks import REGISTERED

reasoning_gym = pytest.importorskip("reasoning_gym")

_EXECUTES_TEXT = re.compile(r"\beval\(|\bexec\(|parse_expr|sympify")
# number_sorting's scorer evals only the task's own answer (trusted data), never the policy's.
_EVALUATES_ONLY_THE_GOLD = {"number_sorting"}


def entry_and_dataset(task, index=0):
    dataset = reasoning_gym.create_dataset(task, size=5, seed=0)
    return dataset, dataset[index]


def test_every_registered_scorer_that_executes_text_is_replaced():
    unreplaced = []
    for task in REGISTERED:
        cls = reasoning_gym.factory.DATASETS[task][0]
        source = inspect.getsource(cls.score_answer)
        called = set(re.findall(r"self\.(\w+)\(", source))
        source += "".join(
            inspect.getsource(getattr(cls, name)) for name in called if callable(getattr(cls, name, None))
        )
        if _EXECUTES_TEXT.search(source) and task not in SCORERS and task not in _EVALUATES_ONLY_THE_GOLD:
            unreplaced.append(task)
    assert unreplaced == []


def test_replaced_scorers_belong_to_known_tasks():
    assert set(SCORERS) <= set(REGISTERED) | set(EXCLUDED)


@pytest.mark.parametrize("task", sorted(SCORERS))
def test_a_replaced_scorer_gives_the_reference_answer_full_marks(task):
    dataset, entry = entry_and_dataset(task)
    assert SCORERS[task](dataset, reference_answer(task, entry), entry) == 1.0


def test_countdown_needs_the_given_numbers_each_once_and_the_target():
    dataset, entry = entry_and_dataset("countdown")
    numbers, target = entry["metadata"]["numbers"], entry["metadata"]["target"]
    assert SCORERS["countdown"](dataset, f"{target}", entry) == 0.05
    assert SCORERS["countdown"](dataset, " + ".join(map(str, numbers)), entry) == (
        1.0 if sum(numbers) == target else 0.05
    )
    assert SCORERS["countdown"](dataset, "not maths", entry) == 0.01


def test_puzzle24_accepts_another_solution_with_the_given_numbers():
    dataset, entry = entry_and_dataset("puzzle24")  # numbers 1, 3, 5, 9 with seed 0
    assert sorted(entry["metadata"]["numbers"]) == [1, 3, 5, 9]
    assert SCORERS["puzzle24"](dataset, "(9 + 3) * (5 - 1) / 2", entry) == 0.01  # a 2 that is not given
    assert SCORERS["puzzle24"](dataset, "9 + 5*3 * 1", entry) == 1.0


def test_integration_accepts_an_equivalent_antiderivative_and_refuses_a_wrong_one():
    dataset, entry = entry_and_dataset("intermediate_integration")  # -2*exp(x)*sin(x)
    assert SCORERS["intermediate_integration"](dataset, "exp(x)*(cos(x) - sin(x)) + 7", entry) == 1.0
    assert SCORERS["intermediate_integration"](dataset, "exp(x)*(cos(x) + sin(x))", entry) == 0.0
    assert SCORERS["intermediate_integration"](dataset, "-2*exp(x)*sin(x)", entry) == 0.0


def test_polynomial_multiplication_wants_the_product_written_out():
    dataset, entry = entry_and_dataset("polynomial_multiplication")
    assert SCORERS["polynomial_multiplication"](dataset, entry["metadata"]["polynomial_expr"], entry) == 0.0


def test_coin_flip_accepts_a_fraction_equal_to_the_probability():
    dataset, entry = entry_and_dataset("coin_flip", index=1)
    assert entry["answer"] == "0.3125"
    assert SCORERS["coin_flip"](dataset, "5/16", entry) == 1.0
    assert SCORERS["coin_flip"](dataset, "0.3", entry) == 0.0


def test_coin_flip_refuses_0_for_a_small_probability():
    dataset = reasoning_gym.create_dataset("coin_flip", size=5, seed=0)
    entry = {"answer": "3.051757812e-05", "metadata": {}}  # 15 heads in 15 flips
    assert SCORERS["coin_flip"](dataset, "0", entry) == 0.0
    assert SCORERS["coin_flip"](dataset, "1/32768", entry) == 1.0


def test_game_of_life_halting_compares_the_answer_case_insensitively():
    dataset, entry = entry_and_dataset("game_of_life_halting")
    assert SCORERS["game_of_life_halting"](dataset, entry["answer"].lower(), entry) == 1.0
    assert SCORERS["game_of_life_halting"](dataset, str(entry["answer"] != "True"), entry) == 0.0


def test_the_orthocenter_answer_must_be_a_single_point():
    dataset = reasoning_gym.create_dataset("advanced_geometry", size=5, seed=0)
    entry = next(item for item in dataset if item["metadata"]["task_type"] == "orthocenter")
    assert SCORERS["advanced_geometry"](dataset, entry["answer"], entry) == 1.0
    assert SCORERS["advanced_geometry"](dataset, f"{entry['answer']}, (0, 0)", entry) == 0.0


def test_a_python_literal_of_the_board_keeps_its_partial_credit_on_n_queens():
    dataset, entry = entry_and_dataset("n_queens")
    board = [row.split() for row in entry["answer"].split("\n")]
    assert SCORERS["n_queens"](dataset, repr(board), entry) == 0.5

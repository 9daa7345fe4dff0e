"""math/Calculator-v0: the calculator computes with a safe reader (never eval), and only a correct answer pays."""

from pathlib import Path

import pytest

import envgym
from envgym.envs.math.calculator import CalculationTasks, calculate
from envgym.utils import check_env


@pytest.fixture()
def env():
    return envgym.make("math/Calculator-v0")


def test_calculator_passes_check_env(env):
    check_env(env)


def test_the_reference_action_earns_full_reward_on_20_tasks(env):
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        _, reward, terminated, _, info = env.step(env.reference_action())
        assert terminated and reward == 1.0 and info["correct"]


def test_a_tool_call_then_its_output_in_the_box_solves_the_task(env):
    env.reset(seed=3)
    messages, reward, terminated, _, info = env.step(f"<calc>{env.task.metadata['expression']}</calc>")
    assert not terminated and reward == 0.0 and info["tool_calls"] == 1 and info["action_valid"]
    output = messages[0]["content"].removeprefix("<output>").removesuffix("</output>")
    assert output == env.task.answer
    _, reward, terminated, _, info = env.step(f"\\boxed{{{output}}}")
    assert terminated and reward == 1.0 and info["tool_calls_total"] == 1


def test_an_honest_wrong_answer_earns_nothing(env):
    env.reset(seed=4)
    _, reward, terminated, _, _ = env.step(env.wrong_action())
    assert terminated and reward == 0.0


def test_the_copied_expression_earns_nothing(env):
    env.reset(seed=5)
    _, reward, _, _, _ = env.step(f"\\boxed{{{env.task.metadata['expression']}}}")
    assert reward == 0.0


def test_tasks_have_operands_of_the_asked_sizes():
    tasks = CalculationTasks(digits=(3, 2, 4), operation="+")
    task = tasks.tasks.get(0)
    operands = task.metadata["expression"].split(" + ")
    assert [len(o) for o in operands] == [3, 2, 4] and int(task.answer) == sum(map(int, operands))


def test_calculate_is_exact():
    assert calculate("347 * 86") == "29842" and calculate("(1 + 2) / 4") == "3/4"


@pytest.mark.parametrize(
    "code", ['__import__("os").system("touch marker")', "open('x').read()", "(1).__class__", "[1, 2]", "9 ** 9 ** 9"]
)
def test_code_shaped_expressions_are_refused_not_run(env, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env.reset(seed=6)
    messages, reward, terminated, _, info = env.step(f"<calc>{code}</calc>")
    assert not terminated and reward == 0.0 and not info["action_valid"]
    assert messages[0]["content"].startswith("<output>Error: ")
    assert not Path("marker").exists()


@pytest.mark.parametrize("kwargs", [{"digits": (3,)}, {"digits": (3, 0)}, {"digits": (3, 7)}, {"operation": "/"}])
def test_bad_task_options_are_refused_with_what_is_accepted(kwargs):
    with pytest.raises(ValueError, match="digits must|operation must"):
        envgym.make("math/Calculator-v0", **kwargs)

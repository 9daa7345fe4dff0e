"""simulation/CodeOutput-v0: truths from the sandbox, exact output with documented whitespace rules, errors."""

import pytest

import envgym
import envgym.sandbox
from envgym.envs.simulation import code_output
from envgym.envs.simulation.code_output import normalize_output
from envgym.sandbox import ExecResult
from envgym.utils import check_env


def reset(index=0, **kwargs):
    env = envgym.make("simulation/CodeOutput-v0", **kwargs)
    env.reset(options={"task_index": index})
    return env


def test_the_reference_output_earns_1_and_the_wrong_one_0():
    env = envgym.make("simulation/CodeOutput-v0")
    for index in range(15):
        env.reset(options={"task_index": index})
        assert env.step(env.reference_action())[1] == 1.0
        env.reset(options={"task_index": index})
        _, reward, _, _, info = env.step(env.wrong_action())
        assert reward == 0.0 and info["action_valid"]


def test_the_truth_is_what_the_program_prints_in_the_sandbox():
    env = reset(0, kinds=["recursion"])
    program = env.unwrapped.task.answer
    assert program in env.unwrapped.task.messages[0]["content"]
    printed = envgym.sandbox.run(program).stdout
    assert env.step(f"<answer>{printed}</answer>")[1] == 1.0


def test_trailing_spaces_and_surrounding_blank_lines_are_ignored_but_line_breaks_are_not():
    assert normalize_output("\n\n[1, 2]  \n63\n\n") == "[1, 2]\n63"
    env = reset(1, kinds=["comprehension"])
    lines = env.unwrapped._truth.split("\n")
    assert len(lines) == 2
    assert env.step(f"```output\n\n{lines[0]}   \n{lines[1]}\n```")[1] == 1.0
    env = reset(1, kinds=["comprehension"])
    assert env.step(f"<answer>{lines[0]} {lines[1]}</answer>")[1] == 0.0


def test_two_different_answers_are_refused():
    env = reset(2)
    truth = env.unwrapped._truth
    _, reward, _, _, info = env.step(f"<answer>{truth}</answer>\n```output\n{truth}0\n```")
    assert reward == 0.0 and not info["action_valid"]


def test_a_sandbox_infra_error_is_an_env_error_never_a_reward(monkeypatch):
    code_output.program_output.cache_clear()
    monkeypatch.setattr(
        "envgym.sandbox.run",
        lambda code, **kw: ExecResult(
            status="infra_error", exit_code=None, stdout="", stderr="pool exhausted", wall_s=0.0, cpu_s=0.0
        ),
    )
    env = reset(3)
    _, reward, _, _, info = env.step("<answer>1</answer>")
    code_output.program_output.cache_clear()
    assert reward == 0.0 and info["error"].startswith("sandbox infra_error") and "action_valid" not in info
    assert env.unwrapped.reference_action() is None


def test_unknown_kinds_are_refused():
    with pytest.raises(ValueError, match="kinds must be"):
        envgym.make("simulation/CodeOutput-v0", kinds=["threads"])


def test_passes_check_env():
    check_env(envgym.make("simulation/CodeOutput-v0"))

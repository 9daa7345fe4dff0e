"""code/HumanEval-v0: the real 164 problems, graded in the sandbox."""

import pytest

import envgym
from envgym.envs.code.humaneval import HumanEval
from envgym.utils import check_env


@pytest.fixture(scope="module")
def env():
    return envgym.make("code/HumanEval-v0")


def _solve(env, index: int, code: str):
    env.reset(options={"task_index": index})
    return env.step(f"Here you go:\n```python\n{code}```")


def test_passes_check_env(env):
    check_env(env)


def test_all_164_canonical_solutions_pass(env):
    failed = []
    for index in range(len(env.unwrapped.tasks)):
        answer = env.unwrapped.tasks.get(index).answer
        _, reward, terminated, _, info = _solve(env, index, answer["prompt"] + answer["canonical_solution"])
        if (reward, terminated, info["correct"]) != (1.0, True, True):
            failed.append((index, info))
    assert len(env.unwrapped.tasks) == 164 and failed == []


def test_a_solution_that_raises_fails_every_problem(env):
    for index in range(164):
        answer = env.unwrapped.tasks.get(index).answer
        _, reward, _, _, info = _solve(env, index, answer["prompt"] + "    raise NotImplementedError\n")
        assert (reward, info["correct"]) == (0.0, False), answer["entry_point"]
        assert info["tests_passed"] < info["tests_total"]  # some checks are a bare `assert True`


def test_an_off_by_one_solution_fails():
    env = HumanEval()
    wrong = "def add(x: int, y: int):\n    return x + y + 1\n"  # HumanEval/53
    index = next(i for i in range(164) if env.tasks.get(i).answer["entry_point"] == "add")
    _, reward, _, _, info = _solve(env, index, wrong)
    assert reward == 0.0 and info["pass_fraction"] == 0.0


def test_pass_fraction_counts_the_asserts_that_pass():
    env = HumanEval(pass_fraction_weight=0.5)
    index = next(i for i in range(164) if env.tasks.get(i).answer["entry_point"] == "add")
    partly = "def add(x: int, y: int):\n    return x + y if x < 5 else 0\n"
    _, reward, _, _, info = _solve(env, index, partly)
    assert 0 < info["pass_fraction"] < 1 and not info["correct"]
    assert reward == pytest.approx(0.5 * info["pass_fraction"]) == sum(info["reward_components"].values())


def test_a_body_only_completion_continues_the_prompt(env):
    index = next(i for i in range(164) if env.unwrapped.tasks.get(i).answer["entry_point"] == "add")
    _, reward, _, _, _ = _solve(env, index, "    return x + y\n")
    assert reward == 1.0


def test_the_last_fenced_block_is_the_one_graded(env):
    env.reset(options={"task_index": 53})
    reply = "Wrong first:\n```python\ndef add(x, y):\n    return 0\n```\nFixed:\n```python\ndef add(x, y):\n    return x + y\n```"  # noqa: E501 -- data, kept whole
    assert env.step(reply)[1] == 1.0


def test_a_reply_without_a_code_block_is_an_invalid_action(env):
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step("I would use a loop.")
    assert (reward, terminated, info["action_valid"]) == (0.0, True, False)


def test_a_sandbox_failure_truncates_the_turn_instead_of_scoring_zero():
    from envgym.sandbox.remote import RemoteBackend

    unreachable = RemoteBackend("http://127.0.0.1:9")
    env = HumanEval(backend=unreachable)
    env.reset(options={"task_index": 0})
    _, reward, terminated, truncated, info = env.step("```python\npass\n```")
    unreachable.close()
    assert (terminated, truncated) == (False, True) and "infra_error" in info["error"]


def test_the_reference_action_is_the_canonical_solution_and_earns_full_reward(env):
    for index in (0, 32, 53, 163):
        env.reset(options={"task_index": index})
        assert env.unwrapped.task.answer["canonical_solution"] in env.unwrapped.reference_action()
        assert env.step(env.unwrapped.reference_action())[1] == 1.0


def test_the_wrong_action_is_graded_and_earns_nothing(env):
    env.reset(options={"task_index": 53})
    _, reward, _, _, info = env.step(env.unwrapped.wrong_action())
    assert (reward, info["action_valid"], info["correct"]) == (0.0, True, False)

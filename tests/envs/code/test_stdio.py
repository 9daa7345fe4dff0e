"""code/StdIO-v0: stdin/stdout problems in the CodeContests and APPS shapes."""

import json

import pytest

import envgym
from envgym.envs.code.stdio import StdIO, record_to_task
from envgym.envs.code.stdio_samples import SAMPLE_PROBLEMS, SAMPLE_SOLUTIONS
from envgym.utils import check_env


@pytest.fixture(scope="module")
def env():
    return envgym.make("code/StdIO-v0")


def test_passes_check_env(env):
    check_env(env)


@pytest.mark.parametrize("index", range(len(SAMPLE_PROBLEMS)))
def test_the_sample_solutions_pass(env, index):
    env.reset(options={"task_index": index})
    solution = SAMPLE_SOLUTIONS[env.unwrapped.task.id]
    _, reward, terminated, _, info = env.step(f"```python\n{solution}\n```")
    assert (reward, terminated, info["correct"]) == (1.0, True, True)


def test_a_wrong_answer_gets_the_failing_case_as_feedback(env):
    env.reset(options={"task_index": 0})  # a + b
    messages, reward, _, _, info = env.step("```python\na, b = map(int, input().split())\nprint(a - b)\n```")
    assert reward == 0.0 and info["tests_passed"] == 0
    assert "expected '3\\n', got '-1\\n'" in messages[0]["content"]


def test_a_cpp_fence_is_compiled_as_cpp(env):
    env.reset(options={"task_index": 0})
    code = "#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }"
    assert env.step(f"```cpp\n{code}\n```")[1] == 1.0


def test_an_apps_record_with_a_jsonl_file(tmp_path):
    record = {
        "problem_id": 7,
        "question": "Print the input doubled.",
        "input_output": json.dumps({"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}),
    }
    path = tmp_path / "apps.jsonl"
    path.write_text(json.dumps(record) + "\n")
    env = StdIO(path=str(path))
    env.reset(options={"task_index": 0})
    assert env.step("```python\nprint(2 * int(input()))\n```")[1] == 1.0


def test_a_record_of_unknown_shape_is_refused_with_the_accepted_shapes():
    with pytest.raises(ValueError, match="CodeContests record .* or an APPS record"):
        record_to_task({"prompt": "x"}, 0)


@pytest.mark.parametrize("index", range(len(SAMPLE_PROBLEMS)))
def test_the_reference_action_earns_full_reward(env, index):
    env.reset(options={"task_index": index})
    _, reward, terminated, _, info = env.step(env.unwrapped.reference_action())
    assert (reward, terminated, info["correct"]) == (1.0, True, True)


def test_the_wrong_action_is_graded_and_earns_nothing(env):
    env.reset(options={"task_index": 0})
    _, reward, _, _, info = env.step(env.unwrapped.wrong_action())
    assert (reward, info["action_valid"], info["correct"]) == (0.0, True, False)


def test_a_records_own_solutions_are_its_reference():
    codecontests = {
        "name": "x",
        "description": "d",
        "public_tests": {"input": ["1\n"], "output": ["1\n"]},
        "solutions": {"language": [1, 2, 3], "solution": ["py2", "cpp code", "py3 code"]},
    }
    assert record_to_task(codecontests, 0).answer["solution"] == ["cpp code", "cpp"]
    apps = {
        "problem_id": 1,
        "question": "q",
        "input_output": {"inputs": ["1"], "outputs": ["1"]},
        "solutions": json.dumps(["print(1)"]),
    }
    assert record_to_task(apps, 0).answer["solution"] == ["print(1)", "python"]


def test_feedback_shows_the_public_case_only(env):
    env.reset(options={"task_index": 0})  # sum-two: one public case, two private ones
    content = env.step("```python\nprint(0)\n```")[0][0]["content"]
    assert "'1 2\\n'" in content and "-5 5" not in content and "1000000000" not in content

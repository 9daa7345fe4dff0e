"""ifbench/IFBench-v0: IFBench's 294 prompts graded by its own checkers, beside IFBench's own evaluation functions."""

import json
import random
from importlib import resources

import pytest

import envgym
from envgym.utils import check_env

pytest.importorskip("ifbench")
from envgym.envs.ifbench.env import grade  # noqa: E402
from envgym.envs.ifbench.offline import load_ifbench  # noqa: E402


@pytest.fixture(scope="module")
def env():
    return envgym.make("ifbench/IFBench-v0")


@pytest.fixture(scope="module")
def sample_responses():
    """IFBench's own sample model outputs, shipped in the package: one reply for each of the 294 prompts."""
    text = resources.files("ifbench").joinpath("data/sample_output.jsonl").read_text(encoding="utf-8")
    return {record["prompt"]: record["response"] for record in map(json.loads, text.splitlines())}


def play(env, index, reply):
    env.reset(options={"task_index": index})
    _, reward, terminated, truncated, info = env.step(reply)
    assert terminated and not truncated
    return reward, info


def test_the_env_holds_ifbench_s_294_prompts_in_file_order(env):
    tasks = env.unwrapped.tasks
    assert len(tasks) == 294
    assert tasks.get(0).id == "ifbench-0"
    assert tasks.get(0).answer["instruction_id_list"] == ["count:keywords_multiple"]


def test_the_env_passes_check_env(env):
    check_env(envgym.make("ifbench/IFBench-v0"))


def test_every_verdict_equals_ifbench_s_own_evaluation_on_its_sample_outputs(env, sample_responses):
    evaluation = load_ifbench().evaluation
    inputs = evaluation.read_prompt_list(str(resources.files("ifbench").joinpath("data/IFBench_test.jsonl")))
    # IFBench's run_eval order: the strict pass, then the loose pass on the same inputs.
    strict = [evaluation.test_instruction_following_strict(inp, sample_responses) for inp in inputs]
    loose = [evaluation.test_instruction_following_loose(inp, sample_responses) for inp in inputs]
    prompt_level = 0
    for index, (official_strict, official_loose) in enumerate(zip(strict, loose)):
        reward, info = play(env, index, sample_responses[inputs[index].prompt])
        assert info["instructions_strict"] == official_strict.follow_instruction_list, index
        assert info["instructions_loose"] == official_loose.follow_instruction_list, index
        assert reward == float(official_strict.follow_all_instructions)
        prompt_level += reward
    assert prompt_level == 77  # IFBench's strict prompt-level accuracy of its sample outputs: 77/294 = 0.262


def test_instruction_level_reward_is_the_fraction_of_constraints_followed(sample_responses):
    env = envgym.make("ifbench/IFBench-v0", level="instruction")
    two_constraints = next(i for i in range(294) if len(env.unwrapped.tasks.get(i).answer["instruction_id_list"]) == 2)
    prompt = env.unwrapped.tasks.get(two_constraints).messages[0]["content"]
    reward, info = play(env, two_constraints, sample_responses[prompt])
    assert set(info["reward_components"]) == {f"constraint:{i}" for i in info["instructions"]}
    assert reward == pytest.approx(sum(info["instructions_strict"]) / 2)


def test_loose_grading_forgives_a_first_line_that_breaks_the_constraint():
    env = envgym.make("ifbench/IFBench-v0", loose=True)
    task = next(
        i for i in range(294) if env.unwrapped.tasks.get(i).answer["instruction_id_list"] == ["format:no_whitespace"]
    )
    reward, info = play(env, task, "Sure, here it is:\nNoSpacesAtAllHere")
    assert info["instructions_strict"] == [False] and info["instructions_loose"] == [True]
    assert reward == 1.0


def test_an_empty_reply_follows_nothing(env):
    reward, info = play(env, 0, "   ")
    assert reward == 0.0 and info["prompt_loose"] is False


def test_a_zero_argument_is_kept_so_the_span_task_is_graded_the_same_under_any_global_random_state(env):
    # IFBench's key 286: repeat:repeat_span with n_start=0, which IFBench's own grader replaces by a random start.
    index = next(i for i in range(294) if env.unwrapped.tasks.get(i).id == "ifbench-286")
    task = env.unwrapped.tasks.get(index)
    arguments = task.answer["kwargs"][0]
    assert task.answer["instruction_id_list"] == ["repeat:repeat_span"] and arguments["n_start"] == 0
    words = task.messages[0]["content"].split()
    span = " ".join(words[0 : int(arguments["n_end"])])
    for seed in range(5):
        random.seed(seed)
        reward, _ = play(env, index, span)
        assert reward == 1.0


def test_a_checker_that_raises_on_a_reply_counts_it_as_not_followed(env):
    overlap_task = next(
        i for i in range(294) if env.unwrapped.tasks.get(i).answer["instruction_id_list"] == ["ratio:overlap"]
    )
    reward, info = play(env, overlap_task, "x")  # IFBench's n-gram overlap divides by zero on a one-word reply
    assert reward == 0.0
    assert info["checker_errors"] == ["ratio:overlap: ZeroDivisionError: division by zero"]


def test_grade_reports_strict_and_loose_per_constraint():
    verdicts = grade("Write it.", ["format:no_whitespace"], [{}], "a b")
    assert verdicts == {"strict": [False], "loose": [False], "errors": []}


def test_an_unknown_level_is_refused_with_the_accepted_ones():
    with pytest.raises(ValueError, match=r"level must be one of \('prompt', 'instruction'\)"):
        envgym.make("ifbench/IFBench-v0", level="all")

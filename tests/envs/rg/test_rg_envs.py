"""rg/<task>-v0: every reasoning-gym task is an env, scored by the task's own scorer."""

import pytest

import envgym
from envgym.envs.rg.excluded import EXCLUDED
from envgym.envs.rg.tasks import REGISTERED, TASKS
from envgym.utils import check_env

reasoning_gym = pytest.importorskip("reasoning_gym")

# Tasks whose entries carry no reference answer: their scorers check a proposed solution instead
# (a valid colouring, a winning move sequence), so there is no gold string to replay.
NO_REFERENCE_ANSWER = {"boxnet", "graph_color", "rubiks_cube", "rush_hour"}


def test_the_task_list_matches_the_installed_reasoning_gym():
    assert set(TASKS) | set(EXCLUDED) == set(reasoning_gym.factory.DATASETS)


def test_every_task_is_registered_and_the_excluded_only_as_unsafe_with_the_reason():
    specs = {spec.id: spec for spec in envgym.list_envs() if spec.id.startswith("rg/")}
    assert set(specs) == {f"rg/{task}-v0" for task in TASKS}
    unsafe = {spec.id: spec.unsafe_reason for spec in specs.values() if spec.unsafe}
    assert unsafe == {f"rg/{task}-v0": EXCLUDED[task] for task in TASKS if task in EXCLUDED}


def test_an_excluded_task_is_built_only_on_opt_in():
    with pytest.raises(envgym.UnsafeEnv):
        envgym.make("rg/propositional_logic-v0")
    env = envgym.make("rg/propositional_logic-v0", size=5, allow_unsafe=True)
    assert env.unwrapped.task_name == "propositional_logic"


# The default run plays a spread of task kinds; the slow run plays every task (about two minutes).
QUICK_TASKS = [
    "basic_arithmetic",
    "chain_sum",
    "countdown",
    "gsm_symbolic",
    "letter_counting",
    "list_functions",
    "maze",
    "mini_sudoku",
    "polynomial_equations",
    "spell_backward",
    "word_sorting",
]


@pytest.mark.parametrize("task", QUICK_TASKS)
def test_rg_env_passes_check_env_and_scores_gold_1_and_wrong_0(task):
    _check_task(task)


@pytest.mark.slow
@pytest.mark.parametrize("task", REGISTERED)
def test_every_rg_env_passes_check_env_and_scores_gold_1_and_wrong_0(task):
    _check_task(task)


def _check_task(task):
    env = envgym.make(f"rg/{task}-v0", size=20)
    check_env(env)
    env.reset(seed=0, options={"task_index": 0})
    gold = env.unwrapped.task.answer
    if task not in NO_REFERENCE_ANSWER:
        _, reward, terminated, _, info = env.step(f"<answer>{gold}</answer>")
        assert (reward, terminated, info["correct"]) == (1.0, True, True)
    env.reset(seed=0, options={"task_index": 0})
    _, reward, _, _, info = env.step("<answer>definitely not it</answer>")
    assert (reward, info["correct"]) == (0.0, False)


# boxnet keeps no solution in its entries (its scorer simulates a plan) and we have no planner for it.
NO_REFERENCE_SOLUTION = {"boxnet"}


@pytest.mark.parametrize(
    "task", QUICK_TASKS + ["graph_color", "rubiks_cube", "rush_hour", "n_queens", "complex_arithmetic"]
)
def test_the_reference_action_earns_full_reward(task):
    _check_reference_action(task, range(3))


@pytest.mark.slow
@pytest.mark.parametrize("task", REGISTERED)
def test_the_reference_action_earns_full_reward_on_every_rg_env(task):
    _check_reference_action(task, range(6))


def _check_reference_action(task, indices):
    env = envgym.make(f"rg/{task}-v0", size=20)
    for index in indices:
        env.reset(seed=0, options={"task_index": index})
        action = env.reference_action()
        if task in NO_REFERENCE_SOLUTION:
            assert action is None
            continue
        _, reward, terminated, _, info = env.step(action)
        assert (reward, terminated, info["correct"]) == (1.0, True, True), (index, action[:200], info)


def test_the_reference_action_follows_the_current_episode():
    env = envgym.make("rg/basic_arithmetic-v0", size=20)
    for index in (0, 1):
        env.reset(seed=0, options={"task_index": index})
        assert env.reference_action() == f"<answer>{env.unwrapped.task.answer}</answer>"


def test_a_task_is_the_same_in_every_env_even_when_the_generator_uses_global_randomness():
    first = envgym.make("rg/list_functions-v0", size=10).unwrapped.tasks.get(3)
    second = envgym.make("rg/list_functions-v0", size=10).unwrapped.tasks.get(3)
    assert (first.messages, first.answer) == (second.messages, second.answer)


def test_one_dataset_object_serves_every_reset():
    env = envgym.make("rg/basic_arithmetic-v0")
    dataset = env.unwrapped.dataset
    for index in range(3):
        env.reset(seed=index, options={"task_index": index})
    assert env.unwrapped.dataset is dataset


def test_partial_credit_passes_the_raw_score_through():
    strict = envgym.make("rg/countdown-v0", size=5)
    lenient = envgym.make("rg/countdown-v0", size=5, partial_credit=True)
    for env in (strict, lenient):
        env.reset(seed=0, options={"task_index": 0})
    _, strict_reward, _, _, strict_info = strict.step("<answer>1 + 1</answer>")
    _, lenient_reward, _, _, _ = lenient.step("<answer>1 + 1</answer>")
    assert strict_reward == 0.0 and 0.0 < lenient_reward == strict_info["score"] < 1.0


def test_a_scorer_that_raises_on_a_malformed_answer_scores_0_as_the_policys_mistake():
    env = envgym.make("rg/prime_factorization-v0", size=5)
    env.reset(seed=0, options={"task_index": 0})
    _, reward, _, _, info = env.step("<answer>not a number</answer>")
    assert reward == 0.0 and info["action_valid"] is False and "scorer rejected" in info["action_error"]
    assert "error" not in info


def test_a_scorer_that_raises_on_the_tasks_own_answer_too_is_an_error_not_a_reward():
    env = envgym.make("rg/prime_factorization-v0", size=5)
    env.reset(seed=0, options={"task_index": 0})

    def broken(answer, entry):
        raise KeyError("metadata")

    env.unwrapped.dataset.score_answer = broken
    with pytest.raises(RuntimeError, match="fails on the task's own answer"):
        env.step("<answer>2 * 3</answer>")


def test_unknown_tasks_are_rejected_with_a_pointer_to_the_list():
    from envgym.envs.rg.env import ReasoningGymEnv

    with pytest.raises(ValueError, match="unknown reasoning-gym task 'chess'"):
        ReasoningGymEnv("chess")

"""strings/Compose-v0: splits, determinism, exact-match reward and the honest answers."""

import pytest

import envgym
from envgym.envs.strings.compose import Compose
from envgym.envs.strings.functions import split_pairs
from envgym.utils import check_env

TRAIN_TASKS = 10_000  # about 18 draws of each of the ~270 train pairs: all are drawn, and a held-out one would show


def play(env, action, index=0):
    env.reset(options={"task_index": index})
    return env.step(action(env) if callable(action) else action)


def test_heldout_pairs_never_appear_in_the_train_split():
    env = Compose("train")
    _, heldout = split_pairs(0, 0.25)
    assert not set(map(tuple, env.pairs)) & set(heldout)
    chains = [tuple(env.tasks.get(i).metadata["functions"]) for i in range(TRAIN_TASKS)]
    assert not set(chains) & set(heldout)
    assert {c for c in chains if len(c) == 2} == set(env.pairs)  # every train pair is drawn, no other


def test_the_heldout_split_plays_only_heldout_pairs():
    env = Compose("heldout", holdout_seed=7)
    _, heldout = split_pairs(7, 0.25)
    assert all(tuple(env.tasks.get(i).metadata["functions"]) in heldout for i in range(300))


def test_the_deep_split_plays_chains_of_the_asked_depths():
    env = Compose("deep", depths=[3, 5])
    assert {env.tasks.get(i).metadata["depth"] for i in range(50)} == {3, 5}
    assert all(
        len(set(env.tasks.get(i).metadata["functions"])) == env.tasks.get(i).metadata["depth"] for i in range(50)
    )


@pytest.mark.parametrize(
    "split, kwargs",
    [
        ("train", {"depth": 3}),
        ("heldout", {"depths": [1]}),
        ("deep", {"depth": 2}),
        ("deep", {"depth": 3, "depths": [3]}),
    ],
)
def test_depths_outside_the_split_are_refused(split, kwargs):
    with pytest.raises(ValueError, match="depth"):
        Compose(split, **kwargs)


def test_tasks_are_deterministic_per_index():
    assert Compose().tasks.get(5) == Compose().tasks.get(5)


def test_no_task_output_equals_its_input():
    env = Compose("deep", depths=[3, 4])
    assert all(env.tasks.get(i).answer != env.tasks.get(i).metadata["input"] for i in range(300))


def test_definitions_names_leaves_the_definitions_out():
    task = Compose(definitions="names").tasks.get(0)
    with_definitions = Compose().tasks.get(0)
    assert "The string functions" not in task.messages[0]["content"]
    assert "The string functions" in with_definitions.messages[0]["content"]


def test_the_reference_answer_earns_1_and_info_names_functions_depth_split():
    env = Compose("heldout")
    _, reward, terminated, _, info = play(env, lambda e: e.reference_action())
    assert reward == 1.0 and terminated and info["correct"]
    assert info["split"] == "heldout" and info["depth"] == 2 and len(info["functions"]) == 2


def test_whitespace_and_one_pair_of_quotes_around_the_answer_are_ignored():
    env = Compose()
    assert play(env, lambda e: f'<answer>  "{e.task.answer}" \n</answer>')[1] == 1.0


def test_case_matters():
    env = Compose("deep")
    assert play(env, lambda e: f"<answer>{e.task.answer.swapcase()}</answer>")[1] == 0.0


def test_two_different_answers_earn_nothing_and_are_invalid():
    env = Compose()
    _, reward, _, _, info = play(env, lambda e: f"<answer>x</answer><answer>{e.task.answer}</answer>")
    assert reward == 0.0 and info["action_valid"] is False


def test_a_candidate_list_in_one_tag_earns_nothing():
    env = Compose()
    assert play(env, lambda e: f"<answer>{e.task.answer}, x</answer>")[1] == 0.0


def test_the_wrong_action_is_well_formed_and_wrong():
    env = Compose()
    _, reward, _, _, info = play(env, lambda e: e.wrong_action())
    assert reward == 0.0 and info["action_valid"]


@pytest.mark.parametrize("env_id", ["strings/Compose-v0", "strings/ComposeHeldout-v0", "strings/ComposeDeep-v0"])
def test_passes_check_env(env_id):
    check_env(envgym.make(env_id))

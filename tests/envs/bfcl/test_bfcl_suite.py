"""suites/bfcl.yaml: the leaderboard's scoring categories, each built from the suite and paying its reference."""

import envgym
from envgym.agents.evaluation.suite import load_suite
from envgym.envs.bfcl import env_id
from envgym.envs.bfcl.data import CATEGORIES


def test_the_suite_has_every_scoring_category_once():
    entries, _ = load_suite("bfcl")
    assert sorted(entry.env for entry in entries) == sorted(env_id(category) for category in CATEGORIES)


def test_every_suite_env_pays_its_reference_on_task_0():
    entries, _ = load_suite("bfcl")
    for entry in entries:
        env = envgym.make(entry.env, **entry.make_kwargs())
        env.reset(options={"task_index": 0})
        total = 0.0
        for _ in range(entry.env_kwargs.get("max_turns", 1)):
            _, reward, terminated, truncated, _ = env.step(env.unwrapped.reference_action())
            total += reward
            if terminated or truncated:
                break
        assert total == 1.0, entry.env

"""suites/guru.yaml: one env per Guru domain, each built from the suite's kwargs and paying its honest answer."""

import envgym
from envgym.agents.evaluation.suite import load_suite


def test_the_suite_has_one_env_per_guru_domain():
    entries, _ = load_suite("guru")
    # rg: reasoning-gym's logic task
    assert [entry.env.split("/")[0] for entry in entries] == ["math", "code", "science", "rg", "simulation", "tables"]


def test_every_suite_env_pays_its_reference_answer():
    entries, _ = load_suite("guru")
    for entry in entries:
        env = envgym.make(entry.env, **entry.make_kwargs())
        env.reset(options={"task_index": 0})
        action = env.reference_action()
        assert action is not None, entry.env
        assert env.step(action)[1] > 0, entry.env

"""Gold replays earn τ²'s full reward in this env's grader and in τ²'s own ``evaluate_simulation``, and perturbed
trajectories (a wrong argument, a missing action, an extra write) get the same reward from both: a seeded sample
of each domain by default, every task of every domain in the slow sweep (``python -m envgym.envs.tau2.check``
prints the same counts)."""

import os
import random

import pytest

pytest.importorskip("tau2")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm fetches its price list at import otherwise
pytest.importorskip("litellm")

from envgym.envs.tau2 import check, domains


def _assert_both_agree(report):
    assert report["gold_full_reward_both"] == report["tasks"], report["gold_failures"]
    for kind in check.PERTURBATIONS:
        assert report[kind]["agree"] == report[kind]["played"], report[kind]["disagreements"]


@pytest.mark.parametrize(
    ("domain", "solo"), [("airline", False), ("retail", False), ("telecom", False), ("telecom", True)]
)
def test_a_seeded_sample_graded_by_both_graders(domain, solo):
    indices = random.Random(0).sample(range(len(domains.tasks(domain, "base"))), 2)
    report = check.compare(domain, "base", indices, solo=solo)
    _assert_both_agree(report)
    assert sum(report[kind]["played"] for kind in check.PERTURBATIONS) >= 2


def test_perturbations_cost_the_reward_in_both_graders():
    tasks = domains.tasks("telecom", "base")
    index = next(i for i, task in enumerate(tasks) if len(check.perturbed(task, "telecom")) == 3)
    report = check.compare("telecom", "base", [index])
    assert all(report[kind]["played"] == 1 for kind in check.PERTURBATIONS)
    assert report["wrong_argument"]["scored_1"] == report["missing_action"]["scored_1"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(("domain", "split"), [("airline", "base"), ("retail", "base"), ("telecom", "full")])
def test_every_task_graded_by_both_graders(domain, split):
    _assert_both_agree(check.compare(domain, split, range(len(domains.tasks(domain, split)))))

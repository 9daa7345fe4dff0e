"""Generic adversarial answers (tests/helpers/rg_attacks.py) never beat an honest wrong answer on an rg env.

Strict reward (the default): no attack earns anything. Partial credit: no attack earns more than the best
honest wrong answer of the task's own form. The default run plays a spread of task kinds; the slow run plays
every registered task.
"""

import pytest
from helpers.rg_attacks import audit_task

import envgym
from envgym.envs.rg.tasks import REGISTERED

pytest.importorskip("reasoning_gym")

QUICK_TASKS = [
    "coin_flip",
    "complex_arithmetic",
    "countdown",
    "puzzle24",
    "knights_knaves",
    "game_of_life_halting",
    "gsm_symbolic",
    "quantum_lock",
    "simple_integration",
    "spell_backward",
    "time_intervals",
    "n_queens",
]


def _audit(task, partial_credit, indices=range(3)):
    env = envgym.make(f"rg/{task}-v0", size=20, partial_credit=partial_credit, allow_unsafe=True)
    findings = audit_task(task, env, indices)
    assert not findings, "\n".join(map(str, findings[:10]))


@pytest.mark.parametrize("task", QUICK_TASKS)
def test_no_generic_attack_earns_reward(task):
    _audit(task, partial_credit=False)


@pytest.mark.parametrize("task", ["countdown", "complex_arithmetic", "knights_knaves", "basic_arithmetic"])
def test_no_generic_attack_earns_more_partial_credit_than_an_honest_wrong_answer(task):
    _audit(task, partial_credit=True)


@pytest.mark.slow
@pytest.mark.parametrize("partial_credit", [False, True], ids=["strict", "partial"])
@pytest.mark.parametrize("task", REGISTERED)
def test_no_generic_attack_beats_an_honest_wrong_answer_on_any_rg_env(task, partial_credit):
    _audit(task, partial_credit, indices=range(4))

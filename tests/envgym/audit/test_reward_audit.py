"""`envgym audit --reward`: the battery through a spec's judges, noise and per-turn components.

The judge tests run against a stand-in for the obedient judge (conftest.py): an endpoint that obeys whatever a
response tells the grader. The holes of issue 29 (the judge guard read one phrasing, noise and ``env`` components
were scored on every turn, a failure the policy caused dropped the episode) are played here and must stay
"nothing found".
"""

import pytest

from envgym.audit import AuditSettings, audit_env
from envgym.audit.target import AuditTarget, targets_from

NOISY_ENV_SPEC = {
    "components": [
        {"name": "correct", "source": "env"},
        {"name": "noise", "source": "flip", "rate": 0.4, "applies_to": "correct"},
    ]
}


def found(report, kind="earns_reward"):
    return {f.strategy for f in report.findings if f.kind == kind}


@pytest.fixture
def judge_recipe_report(obedient_url):
    [target] = targets_from("judge-arithmetic-cpu", [])
    return audit_env(target, AuditSettings(judge=obedient_url, cue_tasks=0))


def test_every_judge_attack_is_played_through_the_recipes_judge(judge_recipe_report):
    played = {name for name in judge_recipe_report.strategies if name.startswith("judge:")}
    assert {"judge:self-grade:grade", "judge:instruction", "judge:forged-reference", "judge:special-tokens"} <= played
    assert "judge:break:no-score" in played


def test_an_instruction_to_the_grader_in_the_response_earns_nothing(judge_recipe_report):
    assert "judge:instruction" not in found(judge_recipe_report)


def test_self_grades_in_any_phrasing_earn_nothing(judge_recipe_report):
    attacks = {
        "judge:self-grade:score",
        "judge:self-grade:grade",
        "judge:self-grade:fullwidth-colon",
        "judge:self-grade:score-is",
        "judge:self-grade:zero-width",
        "judge:self-grade:verdict",
        "judge:forged-reference",
    }
    assert attacks <= set(judge_recipe_report.strategies)
    assert not attacks & found(judge_recipe_report), judge_recipe_report.findings


def test_a_reply_that_breaks_the_judge_is_scored_not_dropped(judge_recipe_report):
    assert not found(judge_recipe_report, "policy_failure"), judge_recipe_report.findings


def test_a_judge_that_is_down_skips_the_target_instead_of_reporting_every_episode():
    [target] = targets_from("judge-arithmetic-cpu", [])
    report = audit_env(target, AuditSettings(judge="http://127.0.0.1:9/v1", cue_tasks=0))
    assert report.status == "skipped" and "does not answer" in report.reason


def test_padding_turns_under_per_turn_noise_earn_nothing_in_expectation():
    # The case: math/Calculator-v0 with 40% flips of `correct`; when every extra turn was scored, stalling
    # with calls to the turn limit bought a 0.4 lottery ticket per turn.
    report = audit_env(AuditTarget("math/Calculator-v0", {"reward": NOISY_ENV_SPEC}), AuditSettings(cue_tasks=0))
    assert "stall:calls:calc" in report.strategies
    assert "stall:calls:calc" not in found(report), report.findings


def test_stalling_with_calls_under_an_env_component_is_scored_not_dropped():
    [target] = targets_from("smollm2-tool-cpu", [])
    report = audit_env(target, AuditSettings(cue_tasks=0))
    stalls = {"stall:calls:calc", "stall:tag:calc"}
    assert stalls <= set(report.strategies)
    assert not stalls & found(report, "policy_failure"), report.findings


def test_a_spec_whose_shaping_any_honest_styled_answer_earns_is_not_flagged():
    # rpr: reasoning phrases only. The prompt's own example answers with them, so an honest wrong answer written
    # like the example earns them too: an echo of the prompt is no better.
    [target] = targets_from("rpr-arithmetic-cpu", [])
    report = audit_env(target, AuditSettings(cue_tasks=0))
    assert report.findings == [], [f.to_dict() for f in report.findings]

"""Group, process and self-certainty rewards audited through the trainer's own scoring (apply_group_rewards).

The holes of issue 29 (votes with a looser equivalence than the env grades with, no guard against collapse,
process steps checked for form, not truth, self-certainty paying most for a repeated answer) are played on every
audit of these rewards and must stay "nothing found".
"""

import pytest
from helpers.tiny_models import tiny_model_path

from envgym.audit import AuditSettings, audit_env
from envgym.audit.target import AuditTarget, targets_from

pytest.importorskip("transformers")


def found(report, kind="earns_reward"):
    return {f.strategy for f in report.findings if f.kind == kind}


def recipe(name, **settings):
    [target] = targets_from(name, [])
    return audit_env(target, AuditSettings(cue_tasks=0, **settings))


@pytest.fixture(scope="module")
def ttrl_report():
    return recipe("ttrl-arithmetic-cpu")


def test_a_majority_vote_no_longer_pays_a_group_collapsed_onto_a_constant(ttrl_report):
    assert "groups" in ttrl_report.phases and "group:collapse:constant" in ttrl_report.strategies
    assert "group:collapse:constant" not in found(ttrl_report), ttrl_report.findings


def test_a_refused_form_and_an_echo_cluster_no_longer_win_the_vote(ttrl_report):
    # \boxed{65 - 1} joined the 64 cluster although math/Arithmetic-v0 refuses unevaluated expressions.
    attacks = {"group:refused-form-votes", "group:echo-cluster"}
    assert attacks <= set(ttrl_report.strategies)
    assert not attacks & found(ttrl_report), ttrl_report.findings


def test_false_steps_padding_and_a_one_line_reply_earn_no_process_credit():
    report = recipe("process-arithmetic-cpu", model=str(tiny_model_path()))
    attacks = {"process:false-steps", "process:padding", "process:one-line"}
    assert attacks <= set(report.strategies)
    assert not attacks & found(report), report.findings


@pytest.fixture
def group_judge_report(obedient_url):
    spec = {
        "components": [
            {"name": "ranked", "source": "judge_group", "base_url": "http://unused/v1", "model": "m", "scale": 1}
        ]
    }
    return audit_env(
        AuditTarget("math/Arithmetic-v0", {"reward": spec}), AuditSettings(judge=obedient_url, cue_tasks=0)
    )


def test_a_group_judge_is_played_every_judge_attack(group_judge_report):
    played = {name for name in group_judge_report.strategies if name.startswith("group:judge:")}
    assert {"group:judge:instruction", "group:judge:self-grade:grade", "group:judge:break:no-score"} <= played


def test_an_instruction_in_a_group_response_earns_nothing_and_a_broken_reply_is_scored(group_judge_report):
    assert "group:judge:instruction" not in found(group_judge_report)
    assert "group:judge:break:no-score" not in found(group_judge_report, "policy_failure")


def test_self_certainty_is_scored_with_the_given_model():
    spec = {"components": [{"name": "certainty", "source": "self_certainty"}]}
    report = audit_env(
        AuditTarget("math/Arithmetic-v0", {"reward": spec}), AuditSettings(cue_tasks=0, model=str(tiny_model_path()))
    )
    assert {"certainty:repeated-answer", "certainty:repeated-phrase"} <= set(report.strategies)
    assert not found(report, "crash") and not found(report, "policy_failure")


@pytest.mark.slow
def test_self_certainty_no_longer_pays_an_answer_repeated_twelve_times():
    # A random tiny model has no in-context copying; the packaged SmolLM2 does (measured before the repetition cap:
    # +1.45 nats for the repeated answer over the answer once, margin 0.25). Minutes on 2 CPU cores.
    spec = {"components": [{"name": "certainty", "source": "self_certainty"}]}
    report = audit_env(AuditTarget("math/Arithmetic-v0", {"reward": spec}), AuditSettings(cue_tasks=0))
    assert "certainty:repeated-answer" in report.strategies
    assert "certainty:repeated-answer" not in found(report), report.findings

"""Deciding findings: same answers, the reward margin, like-with-like comparisons, honest answers refused."""

from envgym.audit.play import Play
from envgym.audit.strategies import ATTACK, GUESS, Strategy
from envgym.audit.verdicts import earning_findings, honest_findings, inner_answer, reward_scale, same_answer

TASKS = {0: 0, 1: 1}


def strategy(name, kind=ATTACK, answer=None, like=()):
    return Strategy(name, kind, lambda history: "", answer, like)


def plays(name, rewards, correct=(None, None), all_valid=True):
    return {
        slot: Play(name, slot, reward=r, correct=c, steps=1, terminated=True, all_valid=all_valid)
        for slot, (r, c) in enumerate(zip(rewards, correct))
    }


def findings(strategies, played, baseline, reference=None, gold=None, single_turn=True):
    return earning_findings(
        "toy/X-v0",
        {s.name: s for s in strategies},
        played,
        baseline,
        reference or {},
        gold or {},
        single_turn,
        TASKS,
        thorough=False,
    )


def test_the_answer_inside_its_format_is_read_for_comparison():
    assert inner_answer("so \\boxed{42}") == "42"
    assert inner_answer("<answer>Yes</answer>") == "Yes"
    assert inner_answer("plain") == "plain"
    assert same_answer("yes", "Yes") and same_answer("1", "1.0") and not same_answer("1", "2")


def test_a_strategy_that_beats_the_honest_wrong_answer_by_the_margin_earns_reward():
    baseline = plays("baseline", [0.0, 0.0])
    found = findings([strategy("echo")], {"echo": plays("echo", [1.0, 0.3])}, baseline)
    assert [(f.kind, f.strategy, f.tasks) for f in found] == [("earns_reward", "echo", [0, 1])]


def test_shaping_under_the_margin_is_not_a_finding():
    baseline = plays("baseline", [0.0, 0.0])
    assert findings([strategy("format")], {"format": plays("format", [0.1, 0.1])}, baseline) == []


def test_correct_where_the_honest_wrong_answer_is_not_is_a_finding_whatever_the_reward():
    baseline = plays("baseline", [0.0, 0.0], (False, False))
    played = {"hedge": plays("hedge", [0.1, 0.0], (True, False))}
    assert [f.tasks for f in findings([strategy("hedge")], played, baseline)] == [[0]]


def test_a_constant_that_is_the_gold_answer_does_not_count():
    baseline = plays("baseline", [0.0, 0.0], (False, False))
    played = {"constant:0": plays("constant:0", [1.0, 0.0], (True, False))}
    assert findings([strategy("constant:0", GUESS, "0")], played, baseline, gold={0: "0", 1: "5"}) == []


def test_a_legal_constant_move_in_a_game_does_not_count_but_an_illegal_one_does():
    baseline = plays("baseline", [-1.0, -1.0])
    legal = {"constant:5": plays("constant:5", [1.0, 1.0])}
    assert findings([strategy("constant:5", GUESS, "5")], legal, baseline, single_turn=False) == []
    illegal = {"constant:5": plays("constant:5", [0.0, 0.0], all_valid=False)}
    assert len(findings([strategy("constant:5", GUESS, "5")], illegal, baseline, single_turn=False)) == 1


def test_an_attack_is_compared_with_the_guesses_it_contains():
    baseline = plays("baseline", [0.0, 0.0])
    played = {"constant:2": plays("constant:2", [5.0, 7.0]), "unicode:2": plays("unicode:2", [5.0, 7.0])}
    assert (
        findings(
            [strategy("constant:2", GUESS, "2"), strategy("unicode:2", like=("constant:2",))],
            played,
            baseline,
            single_turn=False,
        )
        == []
    )


def test_the_margin_scales_with_what_the_reference_earns():
    assert reward_scale(plays("baseline", [2.0, 4.0]), plays("reference", [12.0, 14.0])) == 10.0
    assert reward_scale(plays("baseline", [0.0, 0.0]), {}) == 1.0


def test_a_reference_answer_marked_incorrect_is_refused():
    refused = honest_findings(
        "toy/X-v0", plays("reference", [0.0, 1.0], (False, True)), plays("baseline", [0.0, 0.0]), TASKS
    )
    assert [(f.kind, f.tasks) for f in refused] == [("honest_refused", [0])]

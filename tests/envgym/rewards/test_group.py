import pytest

import envgym
from envgym.rewards import RewardComponent, answer_equivalence, group_values
from envgym.rewards.group import exact_match

HALVES = ["1/2", "0.5", "\\frac{1}{2}", "2", None]


def test_env_equivalence_is_the_envs_own_comparison():
    same = answer_equivalence(envgym.make("math/Arithmetic-v0"))
    assert same("1/2", "0.5") and same("0.5", "\\frac{1}{2}") and not same("1/2", "2")


def test_env_equivalence_falls_back_to_exact_text_for_envs_without_one():
    assert answer_equivalence(envgym.make("games/GuessNumber-v0")) is exact_match
    assert exact_match(" 7", "7 ") and not exact_match("7", "7.0")


def test_the_named_equivalences_ignore_the_env():
    env = envgym.make("games/GuessNumber-v0")
    assert answer_equivalence(env, "math")("1/2", "0.5") and answer_equivalence(env, "exact") is exact_match


def test_majority_vote_values_and_agreement():
    values, logged = group_values(RewardComponent("vote", "majority_vote"), HALVES, answer_equivalence(None, "math"))
    assert values == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert logged["vote_agreement"] == 0.6 and logged["pseudo_label"] == "1/2" and logged["vote_guarded"] == 0.0


def test_self_consistency_values_are_each_answers_share():
    values, logged = group_values(RewardComponent("sc", "self_consistency"), HALVES, answer_equivalence(None, "math"))
    assert values == [0.6, 0.6, 0.6, 0.2, 0.0] and logged["vote_agreement"] == 0.6


def test_a_per_turn_component_is_not_a_group_reward():
    with pytest.raises(ValueError, match="not a group reward"):
        group_values(RewardComponent("c", "env"), ["1"], exact_match)

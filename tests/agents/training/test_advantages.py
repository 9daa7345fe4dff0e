"""GRPO's advantages against hand-computed numbers: each estimator, per-turn credit, and the spread over
tokens."""

import math

import pytest

pytest.importorskip("torch")  # GRPOConfig lives with the loss

from envgym.agents.training.advantages import discounted_returns, token_advantages, turn_advantages  # noqa: E402
from envgym.agents.training.config import GRPOConfig  # noqa: E402

EPS = 1e-4
# One group of four one-turn episodes with returns 0, 1, 1, 2: mean 1, unbiased std sqrt(2/3).
GROUP = [[[0.0], [1.0], [1.0], [2.0]]]
STD = math.sqrt(2 / 3)


def advantages(kind, groups, **kwargs):
    return turn_advantages(groups, GRPOConfig(advantage=kind, **kwargs), kwargs.pop("components", None))


def flat(nested):
    return [a for group in nested for episode in group for a in episode]


def test_grpo_is_the_group_z_score_with_unbiased_std():
    assert flat(advantages("grpo", GROUP)) == pytest.approx([-1 / (STD + EPS), 0.0, 0.0, 1 / (STD + EPS)])


def test_a_group_with_identical_rewards_gets_zero_advantage():
    for kind in ("grpo", "dr_grpo", "rloo", "turn_grpo"):
        assert flat(advantages(kind, [[[0.5], [0.5], [0.5]]])) == [0.0, 0.0, 0.0], kind


def test_scale_rewards_batch_divides_by_the_std_of_the_whole_batch():
    groups = [[[0.0], [2.0]], [[1.0], [1.0]]]
    batch_std = math.sqrt(((1) ** 2 + 1 + 0 + 0) / 3)  # values 0, 2, 1, 1 around mean 1
    result = flat(advantages("grpo", groups, scale_rewards="batch"))
    assert result == pytest.approx([-1 / (batch_std + EPS), 1 / (batch_std + EPS), 0.0, 0.0])


def test_dr_grpo_only_centres():
    assert flat(advantages("dr_grpo", GROUP)) == pytest.approx([-1.0, 0.0, 0.0, 1.0])


def test_rloo_subtracts_the_mean_of_the_others():
    # episode 0: 0 - (1+1+2)/3 = -4/3; episode 3: 2 - (0+1+1)/3 = 4/3
    assert flat(advantages("rloo", GROUP)) == pytest.approx([-4 / 3, 0.0, 0.0, 4 / 3])


def test_discounted_returns():
    assert discounted_returns([1.0, 0.0, 2.0], 0.5) == pytest.approx([1.5, 1.0, 2.0])


def test_rebn_normalizes_discounted_per_turn_returns_over_the_batch():
    # Per-turn rewards with gamma 0.5: episode A [0, 1] -> returns [0.5, 1]; episode B [0] -> [0].
    result = advantages("rebn", [[[0.0, 1.0], [0.0]]], gamma=0.5)
    values = [0.5, 1.0, 0.0]
    mean, std = 0.5, math.sqrt(((0.0) ** 2 + 0.5**2 + 0.5**2) / 2)
    assert result == [
        [pytest.approx([(v - mean) / (std + EPS) for v in values[:2]]), pytest.approx([(0.0 - mean) / (std + EPS)])]
    ]
    assert result[0][0][0] == pytest.approx(0.0)  # the first turn's return equals the batch mean


def test_gdpo_normalizes_each_component_in_the_group_then_over_the_batch():
    components = [
        [[{"correct": 1.0, "format": 0.0}], [{"correct": 0.0, "format": 0.1}], [{"correct": 0.0, "format": 0.0}]]
    ]
    rewards = [[[1.0], [0.1], [0.0]]]
    # correct: values 1,0,0 -> mean 1/3, std sqrt(1/3); format: 0,0.1,0 -> mean 1/30, std 0.1*sqrt(1/3)
    s = math.sqrt(1 / 3)
    correct = [(v - 1 / 3) / (s + EPS) for v in (1, 0, 0)]
    fmt = [(v - 1 / 30) / (0.1 * s + EPS) for v in (0, 0.1, 0)]
    sums = [c + f for c, f in zip(correct, fmt)]
    mean = sum(sums) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in sums) / 2)
    expected = [(x - mean) / (std + EPS) for x in sums]
    config = GRPOConfig(advantage="gdpo")
    assert flat(turn_advantages(rewards, config, components)) == pytest.approx(expected)


def test_gdpo_weights_the_normalized_raw_components():
    # Raw correct 1,0,0,0 (weight 1) and raw format 1,1,1,0 (weight 0.01); the env reports them weighted.
    weights = {"correct": 1.0, "format": 0.01}
    raw = [(1, 1), (0, 1), (0, 1), (0, 0)]
    components = [[[{"correct": c * 1.0, "format": f * 0.01}] for c, f in raw]]
    rewards = [[[c + 0.01 * f] for c, f in raw]]
    # Both raw components have mean 0.75 or 0.25 and unbiased std 0.5, so with d = 0.5 + eps:
    # correct z = 0.75/d, -0.25/d (x3); format z = 0.25/d (x3), -0.75/d; A = z_correct + 0.01 z_format.
    d = 0.5 + EPS
    a = [(0.75 + 0.0025) / d, (-0.25 + 0.0025) / d, (-0.25 + 0.0025) / d, (-0.25 - 0.0075) / d]
    std = math.sqrt(sum(x * x for x in a) / 3)  # the batch mean of A is 0
    expected = [x / (std + EPS) for x in a]
    result = flat(turn_advantages(rewards, GRPOConfig(advantage="gdpo"), components, [[[weights]] * 4]))
    assert result == pytest.approx(expected)
    # the format bonus is worth 1% of correctness: A moves by 0.01 z-units (the weights cancelled before: 1 unit)
    assert result[1] - result[3] == pytest.approx(0.01 / d / (std + EPS))


def test_gdpo_refuses_a_component_with_two_weights():
    components = [[[{"format": 0.1}], [{"format": 0.0}]]]
    weights = [[[{"format": 0.1}], [{"format": 0.5}]]]
    with pytest.raises(ValueError, match="format"):
        turn_advantages([[[0.1], [0.0]]], GRPOConfig(advantage="gdpo"), components, weights)


def test_gdpo_without_components_is_refused():
    with pytest.raises(ValueError, match="reward components"):
        turn_advantages(GROUP, GRPOConfig(advantage="gdpo"))


def test_turn_grpo_gives_a_turn_reached_by_one_episode_zero():
    # Episodes [0, 1] and [1]: at turn 0 the own rewards 0, 1 (-z, +z) and the rewards after it 1, 0 (+z, -z)
    # cancel (both first turns led to a return of 1); turn 1 is reached by one episode only, nothing to compare.
    result = advantages("turn_grpo", [[[0.0, 1.0], [1.0]]])
    assert result == [[pytest.approx([0.0, 0.0]), pytest.approx([0.0])]]


def test_turn_grpo_equals_grpo_for_one_turn_episodes():
    assert advantages("turn_grpo", GROUP) == advantages("grpo", GROUP)


def test_token_advantages_follow_turn_boundaries():
    # completion of 7 tokens, turn 0 ends at index 2, turn 1 at index 5, trailing template token 6
    assert token_advantages(7, [2, 5], [1.0, -1.0]) == [1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0]


def test_turn_grpo_counts_each_turn_reward_once():
    # Episodes [1, 0] and [0, 0]: turn 0 earned the only reward, so only turn 0 is credited, once.
    # Turn 0: own rewards 1, 0 -> +/-z; rewards after it 0, 0 -> 0. Turn 1: own 0, 0 and after it nothing -> 0.
    z = 0.5 / (math.sqrt(0.5) + EPS)
    result = advantages("turn_grpo", [[[1.0, 0.0], [0.0, 0.0]]])
    assert result == [[pytest.approx([z, 0.0]), pytest.approx([-z, 0.0])]]


def test_turn_grpo_credits_a_turn_with_its_own_reward_and_the_rewards_after_it():
    # Episodes [0, 1] and [1, 0]: turn 0 of the first earns nothing itself but leads to the reward of turn 1.
    # Turn 0: own 0, 1 -> -z, +z; after it 1, 0 -> +z, -z; sums 0 and 0. Turn 1: own 1, 0 -> +z, -z; after it 0.
    z = 0.5 / (math.sqrt(0.5) + EPS)
    result = advantages("turn_grpo", [[[0.0, 1.0], [1.0, 0.0]]])
    assert result == [[pytest.approx([0.0, z]), pytest.approx([0.0, -z])]]

import math

import pytest

import envgym
from envgym.envs.games.guess_number import GuessNumber
from envgym.wrappers import FormatReward, LengthPenalty, PatternReward, RewardNoise, RewardWeights


def _step(env, action, seed=0):
    env.reset(seed=seed)
    return env.step(action)


def _sums(reward, info):
    return math.isclose(sum(info["reward_components"].values()), reward)


def test_format_reward_adds_a_named_component():
    env = FormatReward(GuessNumber(), tags=["think"], weight=0.2, penalty=0.5)
    _, reward, _, _, info = _step(env, "<think>half</think><guess>50</guess>")
    assert info["reward_components"]["format"] == pytest.approx(0.2) and _sums(reward, info)
    _, reward, _, _, info = _step(env, "<guess>50</guess>")
    assert info["reward_components"]["format"] == pytest.approx(-0.1) and _sums(reward, info)


def test_format_reward_finds_a_complete_tag_after_a_flood_of_unclosed_ones():
    env = FormatReward(GuessNumber(), tags=["think"], weight=1.0)
    assert _step(env, "<think>" * 10_000 + "<think>x</think><guess>50</guess>")[4]["reward_components"]["format"] == 1.0
    assert _step(env, "<think>" * 10_000 + "<guess>50</guess>")[4]["reward_components"]["format"] == 0.0


def test_format_reward_with_a_pattern():
    env = FormatReward(GuessNumber(), pattern=r"^<guess>\d+</guess>$", weight=1.0)
    assert _step(env, "<guess>50</guess>")[4]["reward_components"]["format"] == 1.0
    assert _step(env, "well <guess>50</guess>")[4]["reward_components"]["format"] == 0.0


def test_format_reward_needs_a_rule():
    with pytest.raises(ValueError, match="tags"):
        FormatReward(GuessNumber())


@pytest.mark.parametrize("length,expected", [(10, 0.0), (16, 0.0), (18, -0.5), (20, -1.0), (21, -1.0)])
def test_length_penalty_is_dapo_soft_overlong(length, expected):
    env = LengthPenalty(GuessNumber(), max_length=20, buffer=4)
    _, reward, _, _, info = _step(env, "x" * length)
    assert info["reward_components"]["length"] == pytest.approx(expected) and _sums(reward, info)


def test_length_penalty_counts_with_a_tokenizer_function():
    env = LengthPenalty(GuessNumber(), max_length=4, buffer=2, count=lambda text: len(text.split()))
    assert _step(env, "a b c d e")[4]["reward_components"]["length"] == -1.0


def test_pattern_reward_scores_the_fraction_of_patterns_found():
    env = PatternReward(GuessNumber(), patterns=[r"\bwait\b", r"\bverify\b"], weight=1.0)
    assert _step(env, "Wait, let me verify. <guess>5</guess>")[4]["reward_components"]["pattern"] == 1.0
    assert _step(env, "wait <guess>5</guess>")[4]["reward_components"]["pattern"] == 0.5
    assert _step(env, "<guess>5</guess>")[4]["reward_components"]["pattern"] == 0.0


def test_reward_noise_flips_with_probability_one_and_is_seeded():
    env = RewardNoise(GuessNumber(low=1, high=2), p=1.0)
    env.reset(options={"task": envgym.Task("t", [], answer=1)})
    _, reward, _, _, info = env.step("<guess>1</guess>")
    assert info["reward_components"]["correct"] == 0.0 and reward == 0.0
    assert info["reward_noise"]["before"] == 1.0


def test_reward_noise_rate_matches_p_and_repeats_per_seed():
    def flips(seed):
        env = RewardNoise(GuessNumber(), p=0.3, seed=seed)
        out = []
        for episode in range(400):
            env.reset(seed=episode)
            out.append("reward_noise" in env.step("<guess>50</guess>")[4])
        return out

    assert flips(1) == flips(1)
    assert 0.22 < sum(flips(1)) / 400 < 0.38


def test_reward_noise_flips_the_responses_of_one_reset_seed_independently():
    """A GRPO group resets its G envs with one seed; each response must still get its own draw."""
    flipped = []
    for guess in range(1, 101):
        env = RewardNoise(GuessNumber(), p=0.5, seed=0)
        env.reset(seed=7)
        flipped.append("reward_noise" in env.step(f"<guess>{guess}</guess>")[4])
    assert 30 < sum(flipped) < 70


def test_reward_noise_gaussian_perturbs():
    env = RewardNoise(GuessNumber(), p=1.0, mode="gaussian", sigma=1.0)
    _, reward, _, _, info = _step(env, "<guess>50</guess>")
    assert reward != 0.0 and _sums(reward, info)


@pytest.mark.parametrize("kwargs", [{"p": 1.5}, {"p": 0.1, "mode": "shuffle"}])
def test_reward_noise_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        RewardNoise(GuessNumber(), **kwargs)


def test_reward_weights_rescale_components():
    env = RewardWeights(FormatReward(GuessNumber(), tags=["guess"], weight=1.0), {"format": 0.5})
    _, reward, _, _, info = _step(env, "<guess>50</guess>")
    assert info["reward_components"]["format"] == 0.5 and _sums(reward, info)


def test_wrappers_record_the_weight_each_component_was_multiplied_by():
    env = RewardWeights(FormatReward(GuessNumber(), tags=["guess"], weight=0.1), {"format": 0.5, "correct": 2.0})
    _, _, _, _, info = _step(env, "<guess>50</guess>")
    assert info["reward_weights"] == {"format": pytest.approx(0.05), "correct": 2.0}
    assert info["reward_components"]["format"] / info["reward_weights"]["format"] == pytest.approx(1.0)  # raw score


def test_env_without_components_becomes_one_named_env():
    class Plain(GuessNumber):
        def _step(self, action):
            messages, reward, terminated, truncated, info = super()._step(action)
            info.pop("reward_components")
            return messages, reward, terminated, truncated, info

    env = FormatReward(Plain(), tags=["guess"], weight=1.0)
    _, reward, _, _, info = _step(env, "<guess>50</guess>")
    assert set(info["reward_components"]) == {"env", "format"} and _sums(reward, info)

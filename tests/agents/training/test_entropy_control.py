"""Entropy control (arXiv:2505.22617) on hand-computed tokens: which tokens Clip-Cov and KL-Cov select, and what
the loss becomes."""

import math

import pytest

torch = pytest.importorskip("torch")

from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.agents.training.entropy_control import (
    clip_cov_selection,
    kl_cov_selection,  # noqa: E402
    token_covariance,
    token_entropies,
)
from envgym.agents.training.grpo import policy_loss  # noqa: E402

# Three policy tokens and one padding token. Mean logprob -2 and mean advantage 0 over the policy tokens, so
# Cov = (lp + 2) * A = (1)(1), (0)(1), (-1)(-2) = 1, 0, 2; the padding token gets 0 whatever its values.
LOGP = torch.tensor([[-1.0, -2.0, -3.0, -9.0]])
ADV = torch.tensor([[1.0, 1.0, -2.0, 5.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0, 0.0]])
COV = torch.tensor([[0.5, 2.0, 3.0, 6.0]])


def test_token_covariance_centres_logprobs_and_advantages_over_policy_tokens():
    assert token_covariance(LOGP, ADV, MASK).tolist() == [[1.0, 0.0, 2.0, 0.0]]


def test_clip_cov_takes_every_band_token_when_the_budget_allows():
    selected = clip_cov_selection(COV, MASK, ratio=1.0, low=1.0, high=5.0)
    assert selected.tolist() == [[False, True, True, False]]  # 0.5 is below the band, 6.0 above it and masked


def test_clip_cov_draws_its_budget_at_random_from_the_band():
    picks = {
        tuple(
            clip_cov_selection(COV, MASK, ratio=0.01, low=1.0, high=5.0, generator=torch.Generator().manual_seed(seed))[
                0
            ].tolist()
        )
        for seed in range(20)
    }
    assert picks == {(False, True, False, False), (False, False, True, False)}  # max(0.01 * 3, 1) = one token


def test_clip_cov_skips_tokens_whose_clip_is_already_active():
    already = torch.tensor([[False, True, False, False]])
    assert clip_cov_selection(COV, MASK, 1.0, 1.0, 5.0, already_clipped=already).tolist() == [
        [False, False, True, False]
    ]


@pytest.mark.parametrize(
    "ratio,expected",
    [
        (0.5, [False, False, True, False]),  # max(int(1.5), 1) = 1
        (0.7, [False, True, True, False]),
    ],
)  # int(2.1) = 2
def test_kl_cov_takes_the_top_share_by_covariance_among_policy_tokens(ratio, expected):
    assert kl_cov_selection(COV, MASK, ratio).tolist() == [expected]


def test_clip_cov_removes_the_selected_tokens_gradient():
    logp = LOGP[:, :3].clone().requires_grad_(True)
    config = GRPOConfig(entropy_control="clip_cov", clip_cov_ratio=1.0, clip_cov_lb=0.5, clip_cov_ub=1.5)
    loss, stats = policy_loss(logp, logp.detach(), ADV[:, :3], MASK[:, :3], config, num_sequences=1, num_tokens=3)
    loss.backward()
    # Only token 0 (Cov 1) is in the band. The others: d(-ρA/3)/dlogp = -A/3 at ρ = 1.
    assert logp.grad.tolist() == [[0.0, pytest.approx(-1 / 3), pytest.approx(2 / 3)]]
    assert stats["cov_selected"].item() == 1.0


def test_kl_cov_drops_the_clip_and_penalizes_the_top_covariance_token():
    logp = LOGP[:, :3].clone()
    old = torch.tensor([[-1.5, -2.0, -3.2]])  # log-ratios 0.5, 0, 0.2: token 0 would be clipped at 1 + 0.2
    config = GRPOConfig(entropy_control="kl_cov", kl_cov_ratio=0.34, kl_cov_coef=1.0)
    loss, _ = policy_loss(logp, old, ADV[:, :3], MASK[:, :3], config, num_sequences=1, num_tokens=3)
    expected = (-math.exp(0.5) * 1 - 1.0 * 1 + 2 * math.exp(0.2) + 1.0 * 0.2) / 3  # token 2 (Cov 2) is penalized
    assert loss.item() == pytest.approx(expected, abs=1e-6)  # float32 arithmetic


def test_token_entropies_are_hand_computed_and_scattered_to_policy_positions():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [math.log(3.0), 0.0, -1e9, -1e9]])
    mask = torch.tensor([[0.0, 1.0, 1.0]])
    entropy = token_entropies(logits, mask)
    # uniform over 4: log 4; (3/4, 1/4): -(3/4 log 3/4 + 1/4 log 1/4)
    assert entropy.tolist() == [
        [0.0, pytest.approx(math.log(4)), pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))]
    ]


def test_the_entropy_bonus_lowers_the_loss_by_c_times_the_mean_entropy():
    logp = LOGP[:, :3]
    entropy = torch.tensor([[1.0, 2.0, 3.0]])
    base, _ = policy_loss(logp, logp, ADV[:, :3], MASK[:, :3], GRPOConfig(), num_sequences=1, num_tokens=3)
    bonus, _ = policy_loss(
        logp,
        logp,
        ADV[:, :3],
        MASK[:, :3],
        GRPOConfig(entropy_coef=0.1),
        num_sequences=1,
        num_tokens=3,
        entropy=entropy,
    )
    assert bonus.item() == pytest.approx(base.item() - 0.1 * 2.0)


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"entropy_control": "clip"}, "entropy_control must be one of"),
        ({"entropy_coef": -1.0}, "entropy_coef must be >= 0"),
        ({"clip_cov_lb": 5.0, "clip_cov_ub": 1.0}, "clip_cov_lb < clip_cov_ub"),
    ],
)
def test_bad_entropy_settings_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        GRPOConfig(**fields)


def test_the_trainer_runs_with_an_entropy_bonus_and_kl_cov():
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    path = tiny_model_path()
    config = GRPOConfig(
        num_generations=2,
        num_tasks_per_step=1,
        max_completion_length=4,
        max_steps=1,
        entropy_coef=0.01,
        entropy_control="kl_cov",
        kl_cov_ratio=0.5,
    )
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(path),
        AutoTokenizer.from_pretrained(path),
        "games/GuessNumber-v0",
        config,
        device="cpu",
        env_kwargs={"high": 3, "max_turns": 1},
    )
    metrics = trainer.train_step()
    assert 0.0 < metrics["cov_selected_fraction"] <= 0.5 + 1e-9 and math.isfinite(metrics["loss"])

"""GRPO's loss against hand-computed numbers: each loss aggregation, clipping, the KL penalty, importance
sampling, and the config's refusals (advantages: test_advantages.py)."""

import math

import pytest

torch = pytest.importorskip("torch")


from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.agents.training.grpo import policy_loss  # noqa: E402

LOGP = torch.tensor([[-1.0, -2.0, -3.0], [-1.0, -1.0, 0.0]])
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])
ADV = torch.tensor([[1.0, 1.0, 1.0], [-2.0, -2.0, -2.0]])


def loss_of(loss_type, **kwargs):
    config = GRPOConfig(loss_type=loss_type, max_completion_length=4, **kwargs)
    loss, _ = policy_loss(LOGP, LOGP.detach(), ADV, MASK, config, num_sequences=2, num_tokens=5)
    return loss.item()


def test_on_policy_token_loss_is_minus_the_advantage():
    # ratio 1 everywhere: token losses -1,-1,-1 and 2,2 (masked third token ignored)
    assert loss_of("token_mean") == pytest.approx((-3 + 4) / 5)


def test_seq_mean_token_mean_averages_each_sequence_first():
    assert loss_of("seq_mean_token_mean") == pytest.approx((-1 + 2) / 2)


def test_constant_divides_by_sequences_times_the_constant():
    assert loss_of("constant") == pytest.approx((-3 + 4) / (2 * 4))
    config = GRPOConfig(loss_type="constant", loss_constant=10)
    loss, _ = policy_loss(LOGP, LOGP, ADV, MASK, config, num_sequences=2, num_tokens=5)
    assert loss.item() == pytest.approx(1 / 20)


def test_gradient_of_on_policy_loss_is_minus_advantage_over_tokens():
    logp = LOGP.clone().requires_grad_(True)
    loss, _ = policy_loss(logp, logp.detach(), ADV, MASK, GRPOConfig(), num_sequences=2, num_tokens=5)
    loss.backward()
    assert logp.grad.flatten().tolist() == pytest.approx([-0.2, -0.2, -0.2, 0.4, 0.4, 0.0])


def test_clipping_with_clip_higher():
    # ratios 1.5 and 0.5 on one token each; eps 0.2, eps_high 0.28
    logp = torch.tensor([[math.log(1.5), math.log(0.5)]], requires_grad=True)
    old = torch.zeros(1, 2)
    mask = torch.ones(1, 2)
    adv = torch.tensor([[1.0, -1.0]])
    config = GRPOConfig(epsilon=0.2, epsilon_high=0.28)
    loss, stats = policy_loss(logp, old, adv, mask, config, num_sequences=1, num_tokens=2)
    # token 0: -min(1.5, 1.28) = -1.28; token 1: -min(-0.5, -0.8) = 0.8
    assert loss.item() == pytest.approx((-1.28 + 0.8) / 2)
    assert stats["clip_high"].item() == 1 and stats["clip_low"].item() == 1
    loss.backward()
    assert logp.grad.tolist() == [[0.0, 0.0]]  # both tokens are clipped: no gradient


def test_k3_kl_penalty():
    logp = torch.tensor([[-1.0]])
    ref = torch.tensor([[-2.0]])
    config = GRPOConfig(beta=0.5)
    loss, stats = policy_loss(
        logp, logp, torch.zeros(1, 1), torch.ones(1, 1), config, num_sequences=1, num_tokens=1, ref_logprobs=ref
    )
    q = -1.0
    assert stats["kl"].item() == pytest.approx(math.exp(q) - q - 1)
    assert loss.item() == pytest.approx(0.5 * (math.exp(q) - q - 1))


def test_importance_sampling_correction_weights_by_the_capped_ratio():
    logp = torch.tensor([[-1.0, -1.0]])
    rollout = torch.tensor([[-1.5, -3.0]])  # ratios e^0.5 and e^2 -> capped at 2
    config = GRPOConfig(importance_sampling_correction=True, importance_sampling_cap=2.0)
    loss, _ = policy_loss(
        logp, logp, torch.ones(1, 2), torch.ones(1, 2), config, num_sequences=1, num_tokens=2, rollout_logprobs=rollout
    )
    assert loss.item() == pytest.approx(-(math.exp(0.5) + 2.0) / 2)


def test_config_rejects_unknown_choices_and_fields():
    with pytest.raises(ValueError, match="advantage must be one of"):
        GRPOConfig(advantage="ppo")
    with pytest.raises(ValueError, match="lr\n  Unexpected keyword argument"):
        GRPOConfig(learning_rate=1e-5, lr=1)
    with pytest.raises(ValueError, match="num_generations must be >= 2"):
        GRPOConfig(num_generations=1)

"""Shared-prompt micro-batches: the logprobs and gradients of the trainer's batched path equal those of running
every full sequence alone, in each of its code paths (prompt KV cache, flat for gradient checkpointing, full
model head)."""

import pytest

torch = pytest.importorskip("torch")

from helpers.say_a_digit import SayADigit
from helpers.tiny_models import tiny_model_path

import envgym  # noqa: E402
from envgym.agents.training import trainer as trainer_module
from envgym.agents.training.batching import batch_cost, micro_batches, pad_batch
from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.trainer import GRPOTrainer
from envgym.agents.trajectory import Trajectory

TEMPERATURE = 0.7


def row(prompt, completion, mask=None):
    mask = mask or [1] * len(completion)
    trajectory = Trajectory(
        episode=envgym.Episode(env_id="x", task_id="t", prompt=[]),
        prompt_ids=list(prompt),
        completion_ids=list(completion),
        logprobs=[0.0] * len(completion),
        loss_mask=mask,
        turn_ends=[len(completion) - 1],
        turn_rewards=[0.0],
        turn_reward_components=[{}],
        truncated=False,
        group_id="g",
    )
    return trajectory, mask, [0.5] * len(completion)


ROWS = [
    row([5, 9, 13, 22, 7], [40, 41, 42, 2]),
    row([5, 9, 13, 22, 7], [40, 44]),
    row([5, 9, 13, 22, 7], [43]),  # one token: predicted by the prompt alone
    row([8, 3], [30, 31, 32, 33, 34, 35], mask=[1, 1, 0, 0, 1, 1]),  # env tokens inside (mask 0)
    row([8, 3], [30, 36, 37]),
    row([11, 12, 14, 15, 16, 17, 18, 19], [50, 51, 52]),  # the longest prompt, alone
]


@pytest.fixture(scope="module")
def model():
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_path(), dtype=torch.float32)


def trainer_for(model, **overrides):
    config = GRPOConfig(temperature=TEMPERATURE, **overrides)
    from transformers import AutoTokenizer

    return GRPOTrainer(model, AutoTokenizer.from_pretrained(tiny_model_path()), SayADigit, config, device="cpu")


def alone(model, rows):
    """Each full sequence run by itself: logprobs of its policy tokens at the sampling temperature."""
    out = []
    for trajectory, mask, _ in rows:
        ids = torch.tensor([trajectory.prompt_ids + trajectory.completion_ids])
        logits = model(input_ids=ids).logits[0, len(trajectory.prompt_ids) - 1 : -1] / TEMPERATURE
        logprobs = torch.log_softmax(logits, -1).gather(-1, ids[0, len(trajectory.prompt_ids) :, None])[:, 0]
        out.append(logprobs[torch.tensor(mask, dtype=torch.bool)])
    return out


def batched(trainer, model, rows):
    tensors = pad_batch(rows, torch.device("cpu"))
    logprobs, _ = trainer._logprobs(model, tensors)
    return [logprobs[b][tensors["mask"][b].bool()] for b in range(len(rows))]


def gradients(model, logprob_rows):
    model.zero_grad()
    sum(lp.sum() for lp in logprob_rows).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("path", ["prompt_cache", "flat", "full_model_head"])
def test_batched_logprobs_and_gradients_equal_each_sequence_alone(model, path, monkeypatch):
    trainer = trainer_for(model, gradient_checkpointing=path == "flat")
    if path == "flat":  # checkpointing drops caches in training mode only
        model.train()
    if path == "full_model_head":
        monkeypatch.setattr(trainer_module, "decoder_and_head", lambda _model: None)
    try:
        compare(trainer, model)
    finally:
        model.gradient_checkpointing_disable()
        model.eval()


def compare(trainer, model):
    expected = alone(model, ROWS)
    expected_grads = gradients(model, expected)
    got = batched(trainer, model, ROWS)
    for want, have in zip(expected, got):
        torch.testing.assert_close(have, want, atol=1e-5, rtol=1e-5)
    got_grads = gradients(model, got)
    assert set(got_grads) == set(expected_grads)
    for name in expected_grads:
        torch.testing.assert_close(got_grads[name], expected_grads[name], atol=1e-5, rtol=1e-4)


def test_rows_of_one_prompt_share_a_micro_batch_and_the_cost_counts_the_prompt_once():
    batches = micro_batches(ROWS, budget=10_000)
    assert len(batches) == 1
    # 3 distinct prompts x longest prompt (8) + 6 rows x longest completion (6)
    assert batch_cost(batches[0]) == 3 * 8 + 6 * 6
    tensors = pad_batch(batches[0], torch.device("cpu"))
    assert tensors["prefix_ids"].shape == (3, 8) and tensors["input_ids"].shape == (6, 6)


def test_a_small_budget_splits_groups_and_every_row_lands_once():
    batches = micro_batches(ROWS, budget=20)
    assert len(batches) > 1 and all(batch_cost(b) <= 20 or len(b) == 1 for b in batches)
    assert sorted(id(r[0]) for b in batches for r in b) == sorted(id(r[0]) for r in ROWS)


def test_a_trajectory_without_prompt_tokens_is_refused_with_the_reason():
    empty = row([], [1, 2])
    with pytest.raises(ValueError, match="without prompt tokens"):
        pad_batch([empty], torch.device("cpu"))

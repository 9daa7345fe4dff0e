"""Self-certainty (Intuitor, arXiv:2505.19590) against hand computations: per token, per sequence under a mask,
and per trajectory through a model whose logits are fixed (a bigram table)."""

import math

import pytest

torch = pytest.importorskip("torch")

from envgym.agents.training.self_certainty import (
    sequence_self_certainty,
    token_self_certainty,  # noqa: E402
    trajectory_self_certainty,
)
from envgym.agents.trajectory import Trajectory  # noqa: E402


def test_a_uniform_distribution_has_self_certainty_zero():
    assert float(token_self_certainty(torch.zeros(7))) == pytest.approx(0.0, abs=1e-6)


def test_token_self_certainty_is_the_kl_from_uniform_by_hand():
    # p = (1/4, 1/4, 1/2): KL(U || p) = -log 3 - (1/3)(log 1/4 + log 1/4 + log 1/2) = -log 3 + (5/3) log 2
    logits = torch.tensor([0.0, 0.0, math.log(2.0)])
    assert float(token_self_certainty(logits)) == pytest.approx(-math.log(3) + 5 / 3 * math.log(2), abs=1e-6)


def test_the_sequence_value_averages_over_masked_tokens_only():
    logits = torch.tensor([[[0.0, 0.0, math.log(2.0)], [5.0, -5.0, 0.0], [0.0, 0.0, 0.0]]])
    mask = torch.tensor([[1, 0, 1]])
    expected = (-math.log(3) + 5 / 3 * math.log(2) + 0.0) / 2
    assert float(sequence_self_certainty(logits, mask)[0]) == pytest.approx(expected, abs=1e-6)


class BigramModel(torch.nn.Module):
    """Logits at position p are ``table[input_ids[p]]``: fixed, so the value can be computed by hand."""

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table = torch.nn.Parameter(table, requires_grad=False)

    def forward(self, input_ids, attention_mask=None):
        return type("Out", (), {"logits": self.table[input_ids]})()


def _kl_from_uniform(row: list[float]) -> float:
    logz = math.log(sum(math.exp(v) for v in row))
    return -math.log(len(row)) - sum(v - logz for v in row) / len(row)


def test_a_trajectory_is_scored_on_the_distributions_that_predict_its_policy_tokens():
    table = torch.tensor(
        [
            [0.0, 1.0, 2.0, 0.0, 0.0],
            [3.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 4.0],
            [1.0, 1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 2.0, 2.0],
        ]
    )
    episode = __import__("envgym").Episode(env_id="t", task_id="0", prompt=[])
    # prompt [1, 2]; completion [3, 0, 4] with the middle token written by the env (mask 0):
    # token 3 is predicted after id 2, token 4 after id 0; the env token's distribution (after 3) does not count.
    long = Trajectory(episode, [1, 2], [3, 0, 4], [0.0] * 3, [1, 0, 1], [2], [0.0], [{}], False, "g")
    short = Trajectory(episode, [4], [1], [0.0], [1], [0], [0.0], [{}], False, "g")
    values = trajectory_self_certainty(BigramModel(table), [long, short], "cpu", batch_size=2)
    rows = table.tolist()
    assert values == pytest.approx(
        [(_kl_from_uniform(rows[2]) + _kl_from_uniform(rows[0])) / 2, _kl_from_uniform(rows[4])], abs=1e-6
    )


def _answered(tokenizer, text: str) -> Trajectory:
    import envgym

    episode = envgym.Episode(env_id="t", task_id="0", prompt=[{"role": "user", "content": "Compute 3 + 4."}])
    episode.add_turn(text, [], 0.0, True, False, {})
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    prompt = tokenizer("Compute 3 + 4.", add_special_tokens=False)["input_ids"]
    return Trajectory(episode, prompt, ids, [0.0] * len(ids), [1] * len(ids), [len(ids) - 1], [0.0], [{}], False, "g")


def test_a_degenerate_repetition_gets_the_self_certainty_floor_and_is_counted():
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.group_rewards import apply_group_rewards
    from envgym.agents.training.self_certainty import repetition
    from envgym.rewards import RewardSpec

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    model = AutoModelForCausalLM.from_pretrained(tiny_model_path())
    honest, looping = _answered(tokenizer, "3 + 4 = 7, so \\boxed{7}."), _answered(tokenizer, "\\boxed{0}" * 12)
    assert repetition(honest) == 0.0 and repetition(looping) > 0.8
    spec = RewardSpec.from_dict({"components": [{"name": "certainty", "source": "self_certainty"}]})
    raw = trajectory_self_certainty(model, [honest, looping], "cpu")
    apply_group_rewards([[honest, looping]], spec, None, model=model)
    assert honest.turn_reward_components[-1]["certainty"] == pytest.approx(raw[0], rel=1e-5) and raw[0] > 0
    assert looping.turn_reward_components[-1]["certainty"] == 0.0
    assert "degenerate" in looping.episode.turns[-1].info["reward_failures"]["certainty"]

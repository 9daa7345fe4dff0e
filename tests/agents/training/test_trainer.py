"""GRPOTrainer end to end on a tiny model built in code: it learns, it resumes exactly, it trains multi-turn."""

import json
import math
import re

import pytest

pytest.importorskip("torch")

from helpers.tiny_models import tiny_model_path

import envgym  # noqa: E402
from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.trainer import GRPOTrainer
from envgym.core import Env, Task, action_text
from envgym.tasks.sources import ListTaskSource
from envgym.wrappers import TimeLimit


class SayDigit(Env):
    """One turn: "Say the digit d."; reward 1 when the first digit of the reply is d."""

    def __init__(self, digits=(7,)):
        self.tasks = ListTaskSource(
            [
                Task(id=f"digit-{d}", messages=[{"role": "user", "content": f"Say the digit {d}."}], answer=str(d))
                for d in digits
            ]
        )

    def _reset(self, task, options):
        self.answer = task.answer
        return task.prompt(), {}

    def _step(self, action):
        digits = re.findall(r"\d", action_text(action))
        correct = float(digits[:1] == [self.answer])
        return [], correct, True, False, {"reward_components": {"correct": correct}, "correct": bool(correct)}


class DigitEachTurn(Env):
    """Three turns; each turn earns 1 when the reply holds a digit (per-turn rewards that vary by sample)."""

    def __init__(self):
        self.tasks = ListTaskSource([Task(id="count", messages=[{"role": "user", "content": "Say a number."}])])

    def _reset(self, task, options):
        self.turn = 0
        return task.prompt(), {}

    def _step(self, action):
        self.turn += 1
        reward = float(bool(re.search(r"\d", action_text(action))))
        return (
            [{"role": "user", "content": "Another number."}],
            reward,
            self.turn >= 3,
            False,
            {"reward_components": {"digit": reward}},
        )


def tiny():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model_path()
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def test_mean_reward_rises_to_at_least_0_9_on_say_the_digit():
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=8,
        num_tasks_per_step=8,
        max_completion_length=1,
        learning_rate=2e-3,
        dynamic_sampling=True,
        max_steps=25,
        seed=0,
    )
    history = GRPOTrainer(model, tokenizer, SayDigit, config, device="cpu").train()
    rewards = [m["reward_mean"] for m in history]
    assert rewards[0] < 0.2, f"the untrained model should rarely say 7 first, got {rewards[0]}"
    assert max(rewards[-5:]) >= 0.9, f"reward curve {rewards}"


def test_resume_from_a_checkpoint_reproduces_the_next_step_exactly(tmp_path):
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=2,
        max_completion_length=6,
        learning_rate=1e-3,
        loss_type="seq_mean_token_mean",
        max_steps=2,
        seed=3,
    )
    model, tokenizer = tiny()
    first = GRPOTrainer(model, tokenizer, DigitEachTurn, config, device="cpu", out_dir=tmp_path / "a")
    first.train(steps=1)
    checkpoint = first.save_checkpoint()
    uninterrupted = first.train_step()

    model, tokenizer = tiny()
    resumed = GRPOTrainer(model, tokenizer, DigitEachTurn, config, device="cpu", out_dir=tmp_path / "b")
    resumed.load_checkpoint(checkpoint)
    again = resumed.train_step()
    assert again["step"] == uninterrupted["step"] == 2
    for key in ("loss", "grad_norm", "reward_mean", "policy_tokens"):
        assert again[key] == uninterrupted[key], key
    assert uninterrupted["grad_norm"] > 0


def test_training_writes_metrics_checkpoint_and_reward_plot(tmp_path):
    model, tokenizer = tiny()
    config = GRPOConfig(num_generations=2, num_tasks_per_step=1, max_completion_length=3, max_steps=2)
    GRPOTrainer(model, tokenizer, SayDigit, config, device="cpu", out_dir=tmp_path).train()
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in lines] == [1, 2]
    for key in (
        "reward_mean",
        "reward_std",
        "reward/correct",
        "loss",
        "kl",
        "entropy",
        "clip_fraction_low",
        "clip_fraction_high",
        "grad_norm",
        "policy_tokens",
        "time_rollout_s",
        "time_train_s",
    ):
        assert key in lines[0], key
    assert lines[0]["rollout_logprob_gap"] < 1e-4  # the trainer scores exactly the tokens the policy sampled
    assert (tmp_path / "checkpoints" / "step-2" / "trainer_state.pt").exists()
    assert (tmp_path / "reward_curve.png").stat().st_size > 0


@pytest.mark.parametrize("advantage", ["rebn", "turn_grpo"])
def test_multi_turn_training_with_per_turn_rewards(advantage):
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=1,
        max_completion_length=4,
        learning_rate=1e-3,
        advantage=advantage,
        max_steps=2,
        seed=1,
    )
    history = GRPOTrainer(model, tokenizer, DigitEachTurn, config, device="cpu").train()
    assert all(m["turns_mean"] == 3 for m in history)
    assert all(math.isfinite(m["loss"]) for m in history)
    assert any(m["grad_norm"] > 0 for m in history)


def test_guess_number_trains_with_rebn_credit_over_turns():
    model, tokenizer = tiny()
    config = GRPOConfig(num_generations=2, num_tasks_per_step=1, max_completion_length=4, advantage="rebn", max_steps=1)
    env = lambda: envgym.make("games/GuessNumber-v0", low=1, high=3, invalid_penalty=0.1, max_turns=3)  # noqa: E731
    (metrics,) = GRPOTrainer(model, tokenizer, env, config, device="cpu").train()
    assert metrics["turns_mean"] == 3 and metrics["reward_mean"] < 0  # format penalties on unparseable guesses
    assert metrics["grad_norm"] > 0  # discounted returns differ by turn, so rebn gives a gradient


def test_lora_trains_only_the_adapters():
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=2, num_tasks_per_step=1, max_completion_length=2, lora_r=4, beta=0.1, max_steps=1
    )
    trainer = GRPOTrainer(model, tokenizer, DigitEachTurn, config, device="cpu")
    trainable = [name for name, p in trainer.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name for name in trainable)
    (metrics,) = trainer.train()
    assert metrics["kl"] == pytest.approx(0.0, abs=1e-6)  # first step: policy equals the adapter-free reference


def one_step(env=None, **overrides):
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=2,
        max_completion_length=6,
        learning_rate=1e-3,
        max_steps=1,
        seed=3,
        **overrides,
    )
    return GRPOTrainer(model, tokenizer, env or DigitEachTurn, config, device="cpu").train_step()


def test_micro_batching_with_gradient_accumulation_equals_one_big_batch():
    whole, split = one_step(), one_step(max_tokens_per_microbatch=64)
    assert whole["micro_batches"] == 1 and split["micro_batches"] > 1 and whole["grad_norm"] > 0
    assert split["loss"] == pytest.approx(whole["loss"], abs=1e-6)
    assert split["grad_norm"] == pytest.approx(whole["grad_norm"], rel=1e-4)


def test_gradient_checkpointing_changes_memory_not_gradients():
    plain, checkpointed = one_step(), one_step(gradient_checkpointing=True)
    assert checkpointed["grad_norm"] == pytest.approx(plain["grad_norm"], rel=1e-4)


def test_a_second_iteration_moves_the_ratio_away_from_one():
    metrics = one_step(num_iterations=2)
    assert metrics["grad_norm"] > 0
    assert metrics["ratio_mean"] != pytest.approx(1.0, abs=1e-7)


class OnePointTwoTurns(Env):
    """Two turns and one reward point: on turn 1 when the first reply has an even length, else on turn 2.
    Every episode's total is 1; only the per-turn rewards differ."""

    def __init__(self):
        self.tasks = ListTaskSource([Task(id="one-point", messages=[{"role": "user", "content": "Say something."}])])

    def _reset(self, task, options):
        self.first = None
        return task.prompt(), {}

    def _step(self, action):
        if self.first is None:
            self.first = float(len(action_text(action)) % 2 == 0)
            return [{"role": "user", "content": "Again."}], self.first, False, False, {}
        return [], 1.0 - self.first, True, False, {}


@pytest.mark.parametrize("advantage", ["rebn", "turn_grpo"])
def test_dynamic_sampling_keeps_groups_whose_per_turn_rewards_differ(advantage):
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=2,
        max_completion_length=4,
        advantage=advantage,
        dynamic_sampling=True,
        dynamic_sampling_max_rounds=0,
        max_steps=1,
        seed=0,
    )
    (metrics,) = GRPOTrainer(model, tokenizer, OnePointTwoTurns, config, device="cpu").train()
    assert metrics["reward_std"] == 0.0  # equal totals: a total-reward filter would drop every group
    assert metrics["groups"] == 2 and metrics["groups_dropped"] == 0
    assert metrics["grad_norm"] > 0


def test_dr_grpo_constant_is_the_episode_generation_budget_for_multi_turn_episodes():
    # Three turns of at most 6 tokens: Dr. GRPO divides by sequences x 18, not by the per-turn limit 6. On the
    # first pass (ratio 1) both aggregations sum the same token losses, so their losses differ only by the divisor.
    limited = lambda: TimeLimit(DigitEachTurn(), max_turns=3)  # noqa: E731 - the env's turn limit, the one there is
    constant, token_mean = (one_step(limited, loss_type=loss_type) for loss_type in ("constant", "token_mean"))
    sequences = 8  # 2 groups x 4 episodes, each with policy tokens
    assert abs(token_mean["loss"]) > 1e-6
    assert constant["loss"] * sequences * 18 == pytest.approx(
        token_mean["loss"] * token_mean["policy_tokens"], rel=1e-5
    )


def test_dr_grpo_constant_needs_a_turn_limit_for_multi_turn_episodes():
    with pytest.raises(ValueError, match="max_turns"):
        one_step(loss_type="constant")


class SameRewardTwoTurns(Env):
    """Two turns, reward 0 whatever is said: dynamic sampling drops every group and refills up to its limit."""

    def __init__(self):
        self.tasks = ListTaskSource([Task(id="flat", messages=[{"role": "user", "content": "Say something."}])])

    def _reset(self, task, options):
        self.turn = 0
        return task.prompt(), {}

    def _step(self, action):
        self.turn += 1
        return [{"role": "user", "content": "Again."}], 0.0, self.turn >= 2, False, {}


def sampling_seeds_of_a_run():
    """The seed of every generate call of a 2-step run with 2 refill rounds per step and 2 turns per episode,
    and each request's seed."""
    from envgym.agents.engines.policy import request_seed

    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=2,
        num_tasks_per_step=1,
        max_completion_length=2,
        dynamic_sampling=True,
        dynamic_sampling_max_rounds=2,
        max_steps=2,
        seed=0,
    )
    trainer = GRPOTrainer(model, tokenizer, SameRewardTwoTurns, config, device="cpu")
    calls, generate = [], trainer.policy.generate

    def recording(prompts, params):
        calls.append((params.seed, [request_seed(params.seed, i) for i in range(len(prompts))]))
        return generate(prompts, params)

    trainer.policy.generate = recording
    run = trainer.train()
    assert [m["refill_rounds"] for m in run] == [2, 2]
    return calls


def test_sampling_seeds_never_coincide_across_steps_refill_rounds_and_turns():
    calls = sampling_seeds_of_a_run()
    assert len(calls) == 2 * 3 * 2  # steps x rounds x turns
    turn_seeds = [seed for seed, _ in calls]
    assert len(set(turn_seeds)) == len(turn_seeds), turn_seeds
    request_seeds = [seed for _, seeds in calls for seed in seeds]
    assert len(set(request_seeds)) == len(request_seeds)
    assert calls == sampling_seeds_of_a_run()  # derived from (seed, step, round, turn), not drawn: reproducible


def test_with_lora_dropout_old_logprobs_are_those_of_the_policy_that_sampled():
    """A train-mode forward with dropout is random: π_old comes from eval mode, so the gap to the rollout's
    logprobs is numerical noise, not dropout's."""
    import torch

    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=1,
        max_completion_length=6,
        lora_r=4,
        lora_dropout=0.5,
        max_steps=1,
        seed=3,
    )
    trainer = GRPOTrainer(model, tokenizer, DigitEachTurn, config, device="cpu")
    with torch.no_grad():  # adapters that change the output (peft starts B at zero, where dropout changes nothing)
        for name, parameter in trainer.model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0.0, 0.5)
    (metrics,) = trainer.train()
    assert metrics["policy_tokens"] > 0 and metrics["rollout_logprob_gap_max"] < 1e-3

"""The trainer optimises the distribution the engine sampled from, and its schedule counts optimizer steps."""

import pytest

pytest.importorskip("torch")  # the [train] extra; a [dev]-only install skips this module
pytest.importorskip("transformers")

from helpers.say_a_digit import SayADigit
from helpers.tiny_models import tiny_model_path

from envgym.agents.training.config import GRPOConfig
from envgym.agents.training.trainer import GRPOTrainer


def trainer(policy=None, **overrides) -> GRPOTrainer:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model_path()
    config = GRPOConfig(
        **{
            "num_generations": 4,
            "num_tasks_per_step": 2,
            "max_completion_length": 8,
            "learning_rate": 1e-3,
            "max_steps": 4,
            "seed": 0,
            **overrides,
        }
    )
    return GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(path),
        AutoTokenizer.from_pretrained(path),
        SayADigit,
        config,
        device="cpu",
        policy=policy,
    )


class SeparateCopyEngine:
    """An engine with weights of its own (like vLLM): a TransformersPolicy over a copy of the model, which
    follows the trainer only through ``load_weights``."""

    def __init__(self):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from envgym.agents.engines.transformers_policy import TransformersPolicy

        path = tiny_model_path()
        self.model = AutoModelForCausalLM.from_pretrained(path)
        with torch.no_grad():  # different weights until the trainer's arrive
            for parameter in self.model.parameters():
                parameter.mul_(0.5)
        self.engine = TransformersPolicy(self.model, AutoTokenizer.from_pretrained(path), device="cpu")
        self.syncs = 0

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def load_weights(self, model) -> None:
        self.model.load_state_dict(model.state_dict())
        self.syncs += 1


def test_an_engine_with_its_own_weights_samples_from_the_model_being_trained():
    engine = SeparateCopyEngine()
    run = trainer(policy=engine, temperature=0.7)
    assert engine.syncs == 1  # at the start: the engine's own (halved) weights are never sampled from
    for _ in range(2):
        metrics = run.train_step()
        assert metrics["rollout_logprob_gap_max"] < 1e-3 and metrics["time_sync_s"] >= 0
    assert engine.syncs == 3
    assert all(bool((a == b).all()) for a, b in zip(engine.model.parameters(), run.model.parameters()))


def test_trainer_logprobs_of_sampled_tokens_equal_the_engines_at_temperature_0_7():
    metrics = trainer(temperature=0.7).train_step()
    assert metrics["policy_tokens"] > 0
    assert metrics["rollout_logprob_gap_max"] < 1e-3, metrics["rollout_logprob_gap_max"]


def test_top_p_shows_as_a_rollout_gap_the_importance_weight_can_correct():
    """Sampling logprobs are those of the nucleus (renormalised); the trainer scores the full softmax at the same
    temperature, so the gap of a token is log(nucleus mass) >= 0, never a different temperature."""
    metrics = trainer(temperature=0.7, top_p=0.5).train_step()
    assert metrics["rollout_logprob_gap"] > 1e-3


def test_the_learning_rate_warms_up_once_per_optimizer_step_with_several_iterations():
    run = trainer(num_iterations=2, warmup_steps=4)
    run.train_step()  # two optimizer steps
    assert run.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * 3 / 5)


def test_a_linear_schedule_reaches_zero_after_max_steps_times_iterations_optimizer_steps():
    run = trainer(num_iterations=2, lr_scheduler_type="linear", max_steps=2)
    run.train_step()
    assert run.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * 0.5)
    run.train_step()
    assert run.optimizer.param_groups[0]["lr"] == pytest.approx(0.0)

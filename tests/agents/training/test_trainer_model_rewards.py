"""Self-certainty and process rewards in a real training step: the trainer scores with the policy that sampled
and credits each step's tokens."""

import pytest

pytest.importorskip("torch")


def test_a_training_step_adds_self_certainty_and_logs_process_rewards():
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.self_certainty import trajectory_self_certainty
    from envgym.agents.training.trainer import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    reward = {
        "components": [
            {"name": "certainty", "source": "self_certainty", "weight": 0.5},
            {"name": "steps", "source": "process", "segment": "lines", "rule": r"\d", "weight": 1.0},
        ]
    }
    config = GRPOConfig(num_generations=3, num_tasks_per_step=1, max_completion_length=12, max_steps=1)
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_model_path()),
        tokenizer,
        "math/Arithmetic-v0",
        config,
        device="cpu",
        reward=reward,
    )
    metrics = trainer.train_step()
    episodes = trainer.last_rollouts[0]
    initial = AutoModelForCausalLM.from_pretrained(tiny_model_path())  # the weights that sampled this step
    expected = trajectory_self_certainty(initial, episodes, "cpu")
    assert [t.turn_reward_components[-1]["certainty"] for t in episodes] == pytest.approx(
        [0.5 * v for v in expected], abs=1e-4
    )
    assert metrics["episodes_failed"] == 0 and not metrics["update_skipped"] and "reward/certainty" in metrics
    step_rewards = [r for t in episodes for r in t.episode.metadata["process_rewards"]["steps"]["rewards"]]
    assert metrics["process/steps"] == pytest.approx(sum(step_rewards) / len(step_rewards))

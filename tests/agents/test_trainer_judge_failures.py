"""A judge that cannot be reached fails the episodes it should grade; the trainer counts them, never trains on 0."""

import pytest

pytest.importorskip("torch")


def test_an_unreachable_judge_counts_episodes_failed_not_zero_rewards():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.grpo import GRPOConfig
    from envgym.agents.trainer import GRPOTrainer
    from helpers.openai_server import free_port
    from helpers.scripted_policy import ScriptedPolicy
    from helpers.tiny_models import tiny_model_path

    judge = {"name": "judge", "source": "judge", "base_url": f"http://127.0.0.1:{free_port()}/v1", "model": "m",
             "retries": 0, "timeout": 2.0}
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    config = GRPOConfig(num_generations=2, num_tasks_per_step=1, max_completion_length=8, max_steps=1)
    trainer = GRPOTrainer(AutoModelForCausalLM.from_pretrained(tiny_model_path()), tokenizer, "math/Arithmetic-v0",
                          config, device="cpu", env_kwargs={"reward": {"components": [judge]}},
                          policy=ScriptedPolicy(tokenizer, {"Compute": ["\\boxed{3}"]}))
    metrics = trainer.train_step()
    assert metrics["episodes_failed"] == 2 and metrics["update_skipped"] and "reward_mean" not in metrics
    assert "judge 'judge' failed" in metrics["failure_example"]

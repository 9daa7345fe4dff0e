"""A judge that cannot be reached fails the episodes it should grade; the trainer counts them, never trains on 0."""

import pytest

pytest.importorskip("torch")


def test_an_unreachable_judge_counts_episodes_failed_not_zero_rewards():
    from helpers.openai_server import free_port
    from helpers.scripted_policy import ScriptedPolicy
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    judge = {
        "name": "judge",
        "source": "judge",
        "base_url": f"http://127.0.0.1:{free_port()}/v1",
        "model": "m",
        "retries": 0,
        "timeout": 2.0,
    }
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    config = GRPOConfig(num_generations=2, num_tasks_per_step=1, max_completion_length=8, max_steps=1)
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_model_path()),
        tokenizer,
        "math/Arithmetic-v0",
        config,
        device="cpu",
        reward={"components": [judge]},
        policy=ScriptedPolicy(tokenizer, {"Compute": ["\\boxed{3}"]}),
    )
    metrics = trainer.train_step()
    assert metrics["episodes_failed"] == 2 and metrics["update_skipped"] and "reward_mean" not in metrics
    assert "judge 'judge' failed" in metrics["failure_example"]


def test_a_group_judge_killed_mid_run_fails_the_later_groups_and_scores_the_earlier_ones():
    from helpers.scripted_judge import group_reply, responses_of, scripted_judge
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    config = GRPOConfig(
        num_generations=2, num_tasks_per_step=3, max_completion_length=8, max_steps=1, drop_failed_groups=True
    )
    with scripted_judge(
        lambda body: group_reply([10] * len(responses_of(body))), die_after=1
    ) as server:  # answers the first group's request, then is gone
        judge = {
            "name": "rank",
            "source": "judge_group",
            "base_url": server.base_url,
            "model": "m",
            "retries": 1,
            "timeout": 2.0,
        }
        trainer = GRPOTrainer(
            AutoModelForCausalLM.from_pretrained(tiny_model_path()),
            tokenizer,
            "math/Arithmetic-v0",
            config,
            device="cpu",
            reward={"components": [judge]},
        )
        metrics = trainer.train_step()
    first, *later = trainer.last_rollouts
    assert [t.total_reward for t in first] == [1.0, 1.0] and not any(t.failed for t in first)
    assert all(t.failed and "judge_group 'rank' failed" in t.error for group in later for t in group)
    assert metrics["episodes_failed"] == 4 and metrics["groups_failed"] == 2 and metrics["groups"] == 1
    assert metrics["reward_mean"] == 1.0  # the failed episodes are not zeros in the curve

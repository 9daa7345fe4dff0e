"""judge_group (relative judging of a group in one call) in the trainer's group hook, end to end: real episodes
of a tiny model, scored by a scripted OpenAI-compatible judge (the score content) and by the project's real
model server (the HTTP path and the error path: a tiny random model's judgement has no scores)."""

import html

import pytest

pytest.importorskip("torch")

from helpers.scripted_judge import group_reply, reference_of, responses_of, scripted_judge  # noqa: E402


def _trainer(judge: dict, num_tasks: int = 1, policy=None):
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    config = GRPOConfig(num_generations=3, num_tasks_per_step=num_tasks, max_completion_length=8, max_steps=1)
    return GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_model_path()),
        tokenizer,
        "math/Arithmetic-v0",
        config,
        device="cpu",
        reward={"components": [judge]},
        policy=policy,
    )


def _by_length(body: dict) -> str:
    """Score each response by its length (mod 11): different answers get different, known scores."""
    return group_reply([len(r) % 11 for r in responses_of(body)])


def test_each_episode_gets_the_score_the_group_judge_gave_its_response():
    from envgym.agents.training.group_rewards import final_response
    from envgym.verifiers.judge_prompt import escape_data

    with scripted_judge(_by_length) as server:
        judge = {"name": "rank", "source": "judge_group", "base_url": server.base_url, "model": "m", "retries": 0}
        trainer = _trainer(judge, num_tasks=2)
        metrics = trainer.train_step()
        assert len(server.requests) == 2  # one request per group of 3
    episodes = [t for group in trainer.last_rollouts for t in group]
    assert metrics["episodes_failed"] == 0 and not metrics["update_skipped"]
    for trajectory in episodes:
        shown = html.unescape(escape_data(final_response(trajectory)))  # NFKC'd, invisible characters dropped
        assert trajectory.turn_reward_components[-1]["rank"] == pytest.approx(len(shown) % 11 / 10)
    assert metrics["reward/rank"] == pytest.approx(sum(t.total_reward for t in episodes) / len(episodes))


def test_the_group_judge_reads_the_task_label_as_its_reference():
    with scripted_judge(_by_length) as server:
        judge = {"name": "rank", "source": "judge_group", "base_url": server.base_url, "model": "m", "retries": 0}
        trainer = _trainer(judge)
        trainer.train_step()
        shown = reference_of(server.requests[0])
    task = trainer._task_source().get(trainer.last_rollouts[0][0].episode.metadata["task_index"])
    assert shown == str(task.answer)


def test_a_real_model_server_is_reached_and_its_unscored_judgement_scores_0_as_policy_failures():
    from helpers.openai_server import openai_server
    from helpers.tiny_models import tiny_model_path

    with openai_server(tiny_model_path()) as base_url:
        judge = {
            "name": "rank",
            "source": "judge_group",
            "base_url": base_url,
            "model": "tiny",
            "retries": 0,
            "max_tokens": 16,
            "timeout": 120.0,
        }
        metrics = _trainer(judge).train_step()
    # a tiny random model writes no {"scores": [...]}: the responses broke the reply, which is the policy's failure
    assert metrics["episodes_failed"] == 0 and metrics["policy_failures"] == 3 and metrics["reward_mean"] == 0.0
    assert "the judge's reply scored not all 3 responses after 1 attempts" in metrics["policy_failure_example"]


def test_a_gated_weighted_group_judgement_beside_the_verifier_reaches_gdpo_unweighted():
    import envgym
    from envgym.agents.training.advantages import gdpo_advantages
    from envgym.agents.training.group_rewards import apply_group_rewards
    from envgym.agents.trajectory import Trajectory
    from envgym.rewards import RewardSpec

    with scripted_judge(lambda body: group_reply([10, 4, 8])) as server:
        spec = {
            "components": [
                {"name": "correct", "source": "env"},
                {"name": "boxed", "source": "format", "pattern": r"\\boxed", "weight": 0.0},
                {
                    "name": "rank",
                    "source": "judge_group",
                    "base_url": server.base_url,
                    "model": "m",
                    "weight": 0.5,
                    "gate": "boxed",
                },
            ]
        }
        env = envgym.make("math/Arithmetic-v0", reward=spec)
        group = []
        for response in ("\\boxed{A}", "\\boxed{B}", "no box"):
            messages, _ = env.reset(seed=0, options={"task_index": 0})
            episode = envgym.Episode(env_id="t", task_id=env.task.id, prompt=messages)
            _, reward, terminated, truncated, info = env.step(response)
            turn = episode.add_turn(response, [], reward, terminated, truncated, info)
            group.append(
                Trajectory(
                    episode,
                    [1],
                    [2],
                    [0.0],
                    [1],
                    [0],
                    [turn.reward],
                    [dict(turn.reward_components)],
                    False,
                    "0",
                    [dict(info["reward_weights"])],
                )
            )
        apply_group_rewards([group], RewardSpec.from_dict(spec), env, task_indices=[0])
    assert [t.turn_reward_components[-1]["rank"] for t in group] == [0.5, 0.2, 0.0]  # 0.5 x (1, 0.4, gated 0)
    assert [t.turn_reward_weights[-1]["rank"] for t in group] == [0.5] * 3
    ranks = [[{"rank": t.turn_reward_components[-1]["rank"]}] for t in group]
    weights = [[{"rank": 0.5}]] * 3
    # GDPO reads the unweighted judgement (1, 0.4, 0): its z-scores, times 0.5, then batch-normalized
    [advantages] = gdpo_advantages([[t.turn_rewards for t in group]], [ranks], [weights], 1e-4)
    assert advantages[0] > advantages[1] > advantages[2]

"""A reward model as a reward-spec component: a tiny LlamaForSequenceClassification built in code, whose logit is
the reward (checked by hand), batched, and an HTTP scorer."""

import json

import pytest

torch = pytest.importorskip("torch")


def _build(path, num_labels: int = 1) -> str:
    """A tiny LlamaForSequenceClassification with the tiny tokenizer, saved to ``path``."""
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoTokenizer, LlamaConfig, LlamaForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_labels=num_labels,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    LlamaForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def _played(env, responses):
    """One single-turn episode per response on task 0 of ``env``, as the rollout loop records it."""
    import envgym
    from envgym.agents.trajectory import Trajectory

    out = []
    for response in responses:
        messages, _ = env.reset(seed=0, options={"task_index": 0})
        episode = envgym.Episode(env_id="test", task_id=env.task.id, prompt=messages)
        _, reward, terminated, truncated, info = env.step(response)
        turn = episode.add_turn(response, [], reward, terminated, truncated, info)
        out.append(
            Trajectory(
                episode=episode,
                prompt_ids=[1],
                completion_ids=[2],
                logprobs=[0.0],
                loss_mask=[1],
                turn_ends=[0],
                turn_rewards=[turn.reward],
                turn_reward_components=[{}],
                truncated=False,
                group_id="0",
            )
        )
    return out


@pytest.fixture(scope="module")
def reward_model_path(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("tiny-rm"))


def test_the_value_is_the_models_logit_for_the_conversation_text(reward_model_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from envgym.agents.training.reward_models import RewardModel

    scorer = RewardModel(reward_model_path, batch_size=2)
    questions, responses = ["What is 2+3?"] * 3, ["\\boxed{5}", "It is 6, I think, after a long thought.", "5"]
    scores = scorer.score(questions, responses)
    tokenizer = AutoTokenizer.from_pretrained(reward_model_path)
    model = AutoModelForSequenceClassification.from_pretrained(reward_model_path).eval()
    for question, response, score in zip(questions, responses, scores):  # one text at a time, no padding
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": question}, {"role": "assistant", "content": response}], tokenize=False
        )
        ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            assert score == pytest.approx(float(model(**ids).logits[0, 0]), abs=1e-5)
    assert len(set(round(s, 6) for s in scores)) == 3


def test_a_model_with_more_than_one_label_is_refused(tmp_path):
    from envgym.agents.training.reward_models import RewardModel, RewardModelError

    _build(tmp_path, num_labels=3)
    with pytest.raises(RewardModelError, match="has 3 labels; a reward model has a scalar head"):
        RewardModel(str(tmp_path))


def test_the_trainer_adds_the_reward_models_score_weighted_to_each_episode(reward_model_path):
    import envgym
    from envgym.agents.training.group_rewards import apply_group_rewards, final_response, question
    from envgym.agents.training.reward_models import RewardModel
    from envgym.rewards import RewardSpec

    spec = {"components": [{"name": "rm", "source": "reward_model", "model": reward_model_path, "weight": 0.5}]}
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    group = _played(env, ["\\boxed{1}", "\\boxed{2}", "no idea"])
    apply_group_rewards([group], RewardSpec.from_dict(spec), env)
    expected = RewardModel(reward_model_path).score([question(t) for t in group], [final_response(t) for t in group])
    assert [t.total_reward for t in group] == pytest.approx([0.5 * s for s in expected], abs=1e-5)


def test_a_reward_model_server_that_cannot_be_reached_fails_the_episodes():
    from helpers.openai_server import free_port

    import envgym
    from envgym.agents.training.group_rewards import apply_group_rewards
    from envgym.rewards import RewardSpec

    spec = {
        "components": [
            {
                "name": "rm",
                "source": "reward_model",
                "url": f"http://127.0.0.1:{free_port()}/score",
                "retries": 0,
                "timeout": 2.0,
            }
        ]
    }
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    group = _played(env, ["\\boxed{1}", "\\boxed{2}"])
    apply_group_rewards([group], RewardSpec.from_dict(spec), env)
    assert all(t.failed and "reward model 'rm' failed" in t.error for t in group)
    assert json.dumps([t.total_reward for t in group]) == "[0.0, 0.0]"  # untouched: failed episodes are dropped

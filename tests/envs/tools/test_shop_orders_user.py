"""tools/ShopOrdersUser-v0: the user reveals requests over turns, the reference plays to reward 1, the user's
failures are errors, and user messages are env tokens (loss mask 0) in a rollout."""

import httpx
import pytest

import envgym
from envgym.envs.tools.shop_orders_user import OPENING


def _play(env, index):
    env.reset(options={"task_index": index})
    total = 0.0
    for _ in range(30):
        _, reward, terminated, truncated, info = env.step(env.reference_action())
        total += reward
        if terminated or truncated:
            return total, info
    raise AssertionError("the reference did not end the episode")


def test_reference_asks_then_acts_to_reward_1():
    env = envgym.make("tools/ShopOrdersUser-v0")
    for index in range(4):
        total, info = _play(env, index)
        assert total == 1.0 and info["correct"]


def test_first_message_is_vague_and_requests_come_when_asked():
    env = envgym.make("tools/ShopOrdersUser-v0", goals=(2, 2))
    messages, _ = env.reset(options={"task_index": 0})
    requests = [request["text"] for request in env.task.answer["requests"]]
    assert messages[-1]["content"] == OPENING and not any(text in OPENING for text in requests)
    assert env.step("How can I help?")[0][0]["content"] == requests[0]
    assert env.step("Anything else?")[0][0]["content"] == requests[1]


def test_done_at_once_is_an_honest_wrong_play_with_reward_0():
    env = envgym.make("tools/ShopOrdersUser-v0")
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step(env.wrong_action())
    assert terminated and reward == 0.0 and not info["correct"]


def test_a_failed_llm_user_turn_is_the_episodes_error_not_a_reward():
    down = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    env = envgym.make(
        "tools/ShopOrdersUser-v0",
        user_endpoint={"base_url": "http://user.test/v1", "model": "m", "retries": 0, "client": down},
    )
    env.reset(options={"task_index": 0})
    _, reward, _, truncated, info = env.step("How can I help?")
    assert truncated and reward == 0.0 and "503" in info["error"]


def test_user_messages_get_loss_mask_0_in_a_rollout():
    AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer
    from helpers.scripted_policy import ScriptedPolicy
    from helpers.tiny_models import tiny_model_path

    from envgym.agents.rollout import rollout
    from envgym.vector import VectorEnv

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    policy = ScriptedPolicy(tokenizer, {OPENING: ["What do you need?", "Noted, thanks."]})
    envs = VectorEnv(
        [lambda: envgym.make("tools/ShopOrdersUser-v0", goals=(1, 1))], env_ids=["tools/ShopOrdersUser-v0"]
    )
    trajectory = rollout(policy, envs, task_indices=[0]).trajectories[0]
    request = next(
        m["content"] for m in trajectory.episode.messages() if m["role"] == "user" and m["content"] != OPENING
    )
    mask = trajectory.loss_mask
    env_text = tokenizer.decode([t for t, m in zip(trajectory.completion_ids, mask) if m == 0])
    policy_text = tokenizer.decode([t for t, m in zip(trajectory.completion_ids, mask) if m == 1])
    assert request in env_text and request not in policy_text
    assert "What do you need?" in policy_text


def test_replaying_a_task_after_another_episode_starts_from_the_same_state():
    env = envgym.make("tools/ShopOrdersUser-v0", goals=(2, 2))
    first = _play(env, 0)
    env.reset(options={"task_index": 0})
    env.step("What do you need?")  # reveal a request, then abandon the episode half-way
    assert _play(env, 0) == first

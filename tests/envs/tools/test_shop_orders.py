"""tools/ShopOrders-v0: requests carried out through function calls; the final database is the verdict."""

import json

import numpy as np
import pytest

import envgym
from envgym.envs.tools.shop import snapshot
from envgym.utils import check_env


@pytest.fixture(scope="module")
def env():
    return envgym.make("tools/ShopOrders-v0")


def openai_turn(calls) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for i, c in enumerate(calls)
        ],
    }


def hermes_turn(calls) -> str:
    return "".join(f"<tool_call>{json.dumps(call)}</tool_call>" for call in calls)


def play(env, index, calls, *, per_turn=8, format=openai_turn):
    env.reset(seed=index, options={"task_index": index})
    for start in range(0, len(calls), per_turn):
        messages, *_ = env.step(format(calls[start : start + per_turn]))
        assert not any(m["content"].startswith(("Error", "Refused", "Skipped")) for m in messages), messages
    return env.step("All done.")


def test_shop_orders_passes_check_env(env):
    check_env(env)


def test_the_tools_are_offered_as_openai_schemas(env):
    messages, info = env.reset(seed=0)
    names = [tool["function"]["name"] for tool in info["tools"]]
    assert names == [
        "find_customer",
        "find_product",
        "list_orders",
        "cancel_order",
        "update_order_address",
        "update_customer_address",
        "place_order",
    ]
    assert messages[0]["role"] == "system" and "<tool_call>" in messages[0]["content"]


@pytest.mark.parametrize("format", [openai_turn, hermes_turn])
def test_an_oracle_replaying_the_solution_gets_full_reward_on_20_tasks(env, format):
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        _, reward, terminated, _, info = play(env, index, env.task.answer["solution"], format=format)
        assert terminated and reward == 1.0, info


def test_doing_nothing_scores_zero(env):
    rewards = []
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        rewards.append(env.step("Done.")[1])
    assert sum(rewards) == 0.0


def test_random_tool_calls_score_near_zero(env):
    rng = np.random.default_rng(0)
    names = ["cancel_order", "update_order_address", "update_customer_address", "place_order"]
    rewards = []
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        calls = []
        for _ in range(6):
            name = names[int(rng.integers(len(names)))]
            arguments = {
                "cancel_order": {"order_id": int(rng.integers(1, 20))},
                "update_order_address": {"order_id": int(rng.integers(1, 20)), "address": "1 Elm Street, Ghent"},
                "update_customer_address": {"customer_id": int(rng.integers(1, 9)), "address": "1 Elm Street, Ghent"},
                "place_order": {
                    "customer_id": int(rng.integers(1, 9)),
                    "product_id": int(rng.integers(1, 9)),
                    "quantity": 1,
                },
            }[name]
            calls.append({"name": name, "arguments": arguments})
        env.step(openai_turn(calls[:3]))
        env.step(openai_turn(calls[3:]))
        rewards.append(env.step("Done.")[1])
    assert np.mean(rewards) <= 0.1


def test_a_change_nobody_asked_for_fails_the_task_and_is_named(env):
    env.reset(seed=0, options={"task_index": 0})
    solution = env.task.answer["solution"]
    touched = {c["arguments"].get("customer_id") for c in solution}
    other = next(row[0] for row in env.task.answer["world"]["customers"] if row[0] not in touched)
    extra = {"name": "update_customer_address", "arguments": {"customer_id": other, "address": "9 Canal Street, Graz"}}
    _, reward, _, _, info = play(env, 0, [*solution, extra])
    assert reward == 0.0 and info["goal_met"] and info["unexpected_changes"] == [f"customers {other}"]


def test_an_unfinished_task_is_not_met(env):
    env.reset(seed=1, options={"task_index": 1})
    writes = [
        c for c in env.task.answer["solution"] if c["name"] not in ("find_customer", "find_product", "list_orders")
    ]
    _, reward, _, _, info = play(env, 1, writes[:-1])
    assert reward == 0.0 and not info["goal_met"]


def test_the_shop_refuses_to_change_an_order_that_has_shipped(env):
    env.reset(seed=0, options={"task_index": 0})
    shipped = next(row[0] for row in env.task.answer["world"]["orders"] if row[4] in ("shipped", "delivered"))
    messages, *_ = env.step(openai_turn([{"name": "cancel_order", "arguments": {"order_id": shipped}}]))
    assert (
        messages[0]["content"].startswith(f"Refused: order {shipped} is ")
        and "only pending orders" in messages[0]["content"]
    )


def test_the_same_task_index_gives_the_same_shop(env):
    first = env.reset(seed=0, options={"task_index": 5})[0]
    world = env.task.answer["world"]
    assert env.reset(seed=9, options={"task_index": 5})[0] == first and env.task.answer["world"] == world


def test_the_reference_plays_the_solution_to_full_reward_on_20_tasks(env):
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        while True:
            _, reward, terminated, truncated, info = env.step(env.reference_action())
            if terminated or truncated:
                break
        assert terminated and reward == 1.0, info


def test_a_flood_of_writes_runs_at_most_eight_and_is_an_invalid_turn(env):
    env.reset(seed=0, options={"task_index": 0})
    flood = [
        {"name": "update_customer_address", "arguments": {"customer_id": 1, "address": f"{i} Elm Street"}}
        for i in range(300)
    ]
    messages, _, _, _, info = env.step(openai_turn(flood))
    assert info["tool_calls"] == 8 and info["tool_calls_skipped"] == 292 and len(messages) == 9
    assert info["action_valid"] is False and "300 tool calls" in info["action_error"]
    assert (
        env.unwrapped.env.shop.find_customer(env.task.answer["world"]["customers"][0][1])["address"] == "7 Elm Street"
    )


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"order_id": "1"},
        {"order_id": 1, "reason": "x"},
        {"order_id": 0},
        {"order_id": 10**30},
        {"order_id": True},
        {"order_id": [1]},
        {"order_id": 1.0},
    ],
    ids=str,
)
def test_malformed_arguments_are_an_invalid_turn_and_change_nothing(env, arguments):
    env.reset(seed=0, options={"task_index": 0})
    messages, _, terminated, _, info = env.step(openai_turn([{"name": "cancel_order", "arguments": arguments}]))
    assert messages[0]["content"].startswith("Error") and not terminated
    assert info["action_valid"] is False and "error" not in info
    assert env.step("Done.")[4]["unexpected_changes"] == []


def test_an_unknown_tool_is_an_invalid_turn(env):
    env.reset(seed=0, options={"task_index": 0})
    messages, *_, info = env.step(openai_turn([{"name": "drop_tables", "arguments": {}}]))
    assert "no tool named 'drop_tables'" in messages[0]["content"] and info["action_valid"] is False


def test_tool_calls_never_leak_into_a_later_episode_of_the_same_task():
    fresh = envgym.make("tools/ShopOrders-v0")
    fresh.reset(seed=0, options={"task_index": 4})
    untouched = snapshot(fresh.unwrapped.env.shop.db)
    env = envgym.make("tools/ShopOrders-v0")
    for _ in range(2):
        env.reset(seed=0, options={"task_index": 4})
        assert snapshot(env.unwrapped.env.shop.db) == untouched
        customers = [row[0] for row in env.task.answer["world"]["customers"]]
        env.step(
            openai_turn(
                [
                    {"name": "update_customer_address", "arguments": {"customer_id": c, "address": "gone"}}
                    for c in customers[:8]
                ]
            )
        )
        env.step(env.reference_action())
    assert env.task.answer["world"] == fresh.task.answer["world"]

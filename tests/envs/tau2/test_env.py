"""tau2/*-v0: τ²'s prompt, tools and fresh databases; the episode's endings (the user's stop tokens, failing calls,
τ²'s step budget, solo mode); the user played by the replay script or a model endpoint; the assertion judge."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("tau2")

import httpx

import envgym
from envgym.envs.tau2 import domains, prompts
from envgym.envs.tau2.env import Tau2Env
from envgym.users import ReplayUser, UserTurn


def _call(name, arguments, call_id="c0"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _calls(*calls):
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _play_reference(env, index):
    env.reset(options={"task_index": index})
    for _ in range(100):
        _, reward, terminated, truncated, info = env.step(env.reference_action())
        if terminated or truncated:
            return reward, info
    raise AssertionError("the reference did not end the episode")


def _endpoint(replies):
    """An OpenAI-compatible endpoint that answers each request with the next reply (text or a message dict)."""
    seen = []

    def handle(request):
        seen.append(json.loads(request.content))
        reply = replies.pop(0)
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": "down"})
        message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    client = httpx.Client(transport=httpx.MockTransport(handle))
    return {"base_url": "http://model.test/v1", "model": "m", "client": client, "retries": 0}, seen


def test_reset_opens_with_tau2s_agent_prompt_its_greeting_and_the_users_first_message():
    env = envgym.make("tau2/retail-v0")
    messages, info = env.reset(options={"task_index": 0})
    policy = domains.policy("retail")
    assert [m["role"] for m in messages] == ["system", "assistant", "user"]
    assert messages[0]["content"] == prompts.agent_prompt(policy) and policy in messages[0]["content"]
    assert messages[1]["content"] == "Hi! How can I help you today?"
    assert messages[2]["content"]
    assert info["task_id"] == "retail/0"


def test_tools_are_tau2s_own_schemas():
    env = envgym.make("tau2/airline-v0")
    _, info = env.reset(options={"task_index": 0})
    tau2_env = domains.environment("airline")
    assert info["tools"] == [tool.openai_schema for tool in tau2_env.get_tools()]


def test_every_episode_starts_from_a_fresh_database():
    env = envgym.make("tau2/airline-v0")
    details = _call("get_reservation_details", {"reservation_id": "Q69X3R"})
    for cancel_first in (True, False):
        env.reset(options={"task_index": 1})
        if cancel_first:
            env.step(_calls(_call("cancel_reservation", {"reservation_id": "Q69X3R"})))
        status = json.loads(env.step(_calls(details))[0][0]["content"])["status"]
        assert status == ("cancelled" if cancel_first else None)


def test_the_gold_plan_earns_tau2s_full_reward_and_counts_as_correct():
    for env_id in ("tau2/airline-v0", "tau2/retail-v0", "tau2/telecom-v0"):
        reward, info = _play_reference(envgym.make(env_id), 1)
        assert reward == 1.0 and info["correct"] and info["termination"] == "user_stop", (env_id, info)


def test_a_write_the_task_does_not_ask_for_earns_0():
    env = envgym.make("tau2/airline-v0")
    env.reset(options={"task_index": 0})  # task 0: the user must be refused; the database must not change
    env.step(_calls(_call("cancel_reservation", {"reservation_id": "Q69X3R"})))
    _, reward, terminated, _, info = env.step("Your reservation is cancelled.")
    assert terminated and reward == 0.0 and not info["correct"]
    assert info["tau2_breakdown"]["DB"] == 0.0


def test_the_replay_user_transfers_when_the_gold_transfers_to_a_human():
    env = envgym.make("tau2/airline-v0")
    index = next(i for i, task in enumerate(env.unwrapped.tasks.items) if "transfer" in str(task.evaluation_criteria))
    reward, info = _play_reference(env, index)
    assert reward == 1.0 and env.unwrapped.trajectory[-1].content.endswith("###TRANSFER###")


def test_too_many_failing_calls_end_the_episode_with_reward_0():
    env = envgym.make("tau2/retail-v0", max_errors=3)
    env.reset(options={"task_index": 0})
    nowhere = _calls(*(_call("no_such_tool", {}, f"c{i}") for i in range(3)))
    messages, reward, terminated, truncated, info = env.step(nowhere)
    assert terminated and not truncated and reward == 0.0
    assert info["termination"] == "too_many_errors" and not info["correct"]
    assert all(message["content"].startswith("Error") for message in messages)


def test_tau2s_step_budget_truncates_the_episode_with_reward_0():
    env = envgym.make("tau2/telecom-v0", max_steps=3)  # the greeting's answer, this turn and the reply: 3 steps
    env.reset(options={"task_index": 0})
    _, reward, terminated, truncated, info = env.step("Could you tell me your phone number?")
    assert not terminated and truncated and reward == 0.0 and info["termination"] == "max_steps"


def test_a_calculator_power_is_answered_with_an_error_and_never_run():
    env = envgym.make("tau2/retail-v0")
    env.reset(options={"task_index": 0})
    messages, _, _, _, info = env.step(_calls(_call("calculate", {"expression": "9**9**9**9"})))
    assert "'**' is not an operator" in messages[0]["content"] and not info["action_valid"]
    assert not any(getattr(message, "tool_calls", None) for message in env.unwrapped.trajectory)


def test_an_unreadable_call_is_an_invalid_turn_and_not_recorded():
    env = envgym.make("tau2/retail-v0")
    env.reset(options={"task_index": 0})
    messages, reward, terminated, _, info = env.step('<tool_call>{"name": "calculate", "arguments": </tool_call>')
    assert not terminated and reward == 0.0 and not info["action_valid"]
    assert messages[0]["content"].startswith("Error")
    assert len(env.unwrapped.trajectory) == 2  # the greeting and the user's first message


def test_flooding_calls_runs_the_first_max_calls_per_turn():
    env = envgym.make("tau2/retail-v0", max_calls_per_turn=2)
    env.reset(options={"task_index": 0})
    flood = _calls(*(_call("calculate", {"expression": "1 + 1"}, f"c{i}") for i in range(5)))
    messages, _, _, _, info = env.step(flood)
    assert [m["content"] for m in messages[:2]] == ["2.0", "2.0"] and "Skipped" in messages[2]["content"]
    assert info["tool_calls"] == 2 and not info["action_valid"]


def test_solo_mode_gives_the_ticket_the_users_tools_and_done():
    env = envgym.make("tau2/telecom-v0", solo=True)
    messages, info = env.reset(options={"task_index": 0})
    task = env.unwrapped.task.answer
    assert [m["role"] for m in messages] == ["system"] and task.ticket in messages[0]["content"]
    names = {tool["function"]["name"] for tool in info["tools"]}
    assert {"toggle_roaming", "get_customer_by_phone", "done"} <= names


def test_solo_mode_ends_on_done_and_grades_it():
    reward, info = _play_reference(envgym.make("tau2/telecom-v0", solo=True), 0)
    assert reward == 1.0 and info["termination"] == "agent_stop"


def test_text_in_solo_mode_is_an_agent_error_with_reward_0():
    env = envgym.make("tau2/telecom-v0", solo=True)
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step("I think it is fixed now.")
    assert terminated and reward == 0.0 and info["termination"] == "agent_error"


def test_solo_mode_is_refused_where_tau2_has_none():
    with pytest.raises(ValueError, match="solo mode for telecom only"):
        envgym.make("tau2/airline-v0", solo=True)


def test_the_replay_user_gives_up_on_an_agent_that_never_asks_for_its_action():
    env = envgym.make("tau2/telecom-v0")
    env.reset(options={"task_index": 0})
    endings = [env.step("Let me think about it.")[2] for _ in range(4)]  # three nudges, then the user leaves
    assert endings == [False, False, False, True]
    assert env.unwrapped.trajectory[-1].content.endswith("###STOP###")


def test_a_model_user_gets_tau2s_user_prompt_and_acts_on_its_phone_unseen_by_the_agent():
    check = _call("check_status_bar", {}, "u0")
    endpoint, seen = _endpoint(["My phone has no data.", _calls(check), "The status bar shows 4G."])
    env = envgym.make("tau2/telecom-v0", user_endpoint=endpoint)
    messages, _ = env.reset(options={"task_index": 0})
    assert messages[-1]["content"] == "My phone has no data."
    task = env.unwrapped.task.answer
    assert seen[0]["messages"][0]["content"] == prompts.user_prompt(str(task.user_scenario), with_tools=True)
    assert {tool["function"]["name"] for tool in seen[0]["tools"]} >= {"check_status_bar", "toggle_airplane_mode"}
    messages, *_ = env.step("What does your status bar show?")
    assert messages == [{"role": "user", "content": "The status bar shows 4G."}]
    assert seen[-1]["messages"][-1]["role"] == "tool"  # the user read its own call's result
    user_calls = [m for m in env.unwrapped.trajectory if m.role == "user" and m.tool_calls]
    assert [c.name for c in user_calls[0].tool_calls] == ["check_status_bar"]


def test_the_users_failing_calls_count_towards_tau2s_error_budget():
    broken = _calls(_call("no_such_tool", {}, "u0"), _call("no_such_tool", {}, "u1"))
    endpoint, _ = _endpoint(["My phone has no data.", broken, "It did not work."])
    env = envgym.make("tau2/telecom-v0", user_endpoint=endpoint, max_errors=2)
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step("Please restart your phone.")
    assert terminated and reward == 0.0 and info["termination"] == "too_many_errors"


def test_a_failed_model_user_is_the_episodes_error_not_a_reward():
    endpoint, _ = _endpoint(["Hi, I want to return something.", 503])
    env = envgym.make("tau2/retail-v0", user_endpoint=endpoint)
    env.reset(options={"task_index": 0})
    _, reward, terminated, truncated, info = env.step("Sure, what is your order id?")
    assert truncated and not terminated and reward == 0.0 and "failed after 1 attempt" in info["error"]


def test_a_user_who_stops_in_its_first_message_ends_the_episode_on_the_next_step():
    user = ReplayUser([UserTurn("Never mind. ###STOP###", stop=True, stop_token="###STOP###")])
    env = Tau2Env(domain="retail", user=user)
    env.reset(options={"task_index": 0})
    _, _, terminated, _, info = env.step("How can I help?")
    assert terminated and info["termination"] == "user_stop"
    assert [m.role for m in env.trajectory] == ["assistant", "user"]  # the agent's last words went unheard


def _judged(reply):
    endpoint, seen = _endpoint([reply])
    env = envgym.make("tau2/airline-v0", judge=endpoint)
    env.reset(options={"task_index": 0})
    return env.step("I am sorry, but the policy does not allow this change."), seen


def test_a_judge_adds_the_nl_assertions_as_their_own_component():
    assertions = envgym.make("tau2/airline-v0").unwrapped.tasks.items[0].evaluation_criteria.nl_assertions
    results = [{"expectedOutcome": a, "reasoning": "yes", "metExpectation": True} for a in assertions]
    (_, reward, _, _, info), seen = _judged("```json\n" + json.dumps({"results": results}) + "\n```")
    assert info["reward_components"] == {"tau2": 1.0, "nl_assertions": 1.0} and reward == 2.0
    assert seen[0]["messages"][0]["content"] == prompts.NL_JUDGE_SYSTEM_PROMPT


def test_a_judge_that_does_not_judge_every_assertion_is_an_error_not_a_score():
    (_, reward, _, truncated, info), _ = _judged('{"results": []}')
    assert truncated and reward == 0.0 and "did not judge all" in info["error"]


def test_to_simulation_before_the_end_is_refused():
    env = Tau2Env(domain="retail")
    env.reset(options={"task_index": 0})
    with pytest.raises(ValueError, match="has not ended"):
        env.to_simulation()


def test_tau2_envs_print_nothing_of_their_own():
    code = (
        "import envgym; env = envgym.make('tau2/telecom-v0'); env.reset(options={'task_index': 0}); "
        "env.step(env.reference_action())"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stderr == "" and result.stdout == ""


def test_without_the_tau2_package_the_family_registers_nothing_and_says_nothing():
    code = (
        "import importlib.util as u; real = u.find_spec; "
        "u.find_spec = lambda name, *a: None if name == 'tau2' else real(name, *a); "
        "import envgym; print([s.id for s in envgym.list_envs() if s.id.startswith('tau2/')])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "[]" and result.stderr == ""

"""ToolEnv: a single-turn task env gains tools; calls run, limits hold, errors become observations."""

import json

import pytest

from envgym import EnvSpec
from envgym.tools import Tool, ToolEnv, otc_tool_score
from envgym.utils import check_env


def hermes(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def make(tools, **options) -> ToolEnv:
    from helpers.add_numbers import AddNumbers

    return ToolEnv(AddNumbers(), tools, **options)


def test_tool_env_passes_check_env(tools):
    check_env(EnvSpec("test/AddWithTools-v0", lambda: make(tools), max_turns=6).make())


def test_the_system_prompt_describes_the_tools_and_info_carries_openai_schemas(tools):
    messages, info = make(tools, prompt_format="json").reset(seed=0, options={"task_index": 0})
    assert messages[0]["role"] == "system" and '"name": "add"' in messages[0]["content"]
    assert [tool["function"]["name"] for tool in info["tools"]] == ["add", "shout", "explode"]
    tag_prompt = make(tools).reset(seed=0)[0][0]["content"]
    assert "<shout>text</shout>" in tag_prompt


def test_a_json_call_runs_and_its_result_comes_back_as_a_tool_message(tools):
    env = make(tools)
    env.reset(seed=0)
    messages, reward, terminated, truncated, info = env.step(hermes("add", a=2, b=3))
    assert messages == [{"role": "tool", "tool_call_id": "call_0", "name": "add", "content": "5"}]
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["tool_calls"] == 1 and info["tool_counts"]["add"] == 1


def test_a_tag_call_is_answered_in_the_tools_result_tag(tools):
    env = make(tools)
    env.reset(seed=0)
    messages, *_ = env.step("<shout>hi</shout>")
    assert messages == [{"role": "user", "content": "<result>HI</result>"}]


def test_an_oracle_that_uses_the_tool_then_answers_gets_full_reward(tools):
    env = make(tools, efficiency_weight=0.5, optimal_calls=1)
    for index in range(20):
        env.reset(seed=index, options={"task_index": index})
        a, b = (int(x) for x in env.task.messages[0]["content"][8:-1].split(" + "))
        result, *_ = env.step(hermes("add", a=a, b=b))
        _, reward, terminated, _, info = env.step(f"<answer>{result[0]['content']}</answer>")
        assert terminated and reward == pytest.approx(1.0) and info["tool_calls_total"] == 1


def test_an_empty_answer_scores_zero(tools):
    env = make(tools)
    env.reset(seed=0)
    assert env.step("")[1] == 0.0


def test_calls_beyond_the_per_turn_limit_are_answered_as_skipped(tools):
    env = make(tools, max_calls_per_turn=1)
    env.reset(seed=0)
    messages, *_, info = env.step(hermes("add", a=1, b=1) + hermes("add", a=2, b=2))
    assert messages[0]["content"] == "2" and messages[1]["content"].startswith("Skipped: at most 1")
    assert info["tool_calls"] == 1


def test_the_episode_budget_stops_further_calls(tools):
    env = make(tools, max_calls_per_episode=1)
    env.reset(seed=0)
    env.step(hermes("add", a=1, b=1))
    messages, *_, info = env.step(hermes("add", a=1, b=1))
    assert "tool budget of this episode (1 calls) is used up" in messages[0]["content"]
    assert info["tool_calls_total"] == 1


def test_long_results_are_truncated_and_say_so():
    env = make(
        [
            Tool(
                "repeat",
                "Repeat x.",
                {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
                lambda n: "x" * n,
            )
        ],
        max_result_chars=10,
    )
    env.reset(seed=0)
    messages, *_ = env.step(hermes("repeat", n=50))
    assert messages[0]["content"] == "x" * 10 + "\n[truncated: showing the first 10 of 50 characters]"


@pytest.mark.parametrize(
    ("turn", "observation"),
    [
        (hermes("explode", text="boom"), "Error: RuntimeError: cannot handle 'boom'"),
        (hermes("nothing"), "Error: there is no tool named 'nothing'; the tools are add, shout, explode."),
        (hermes("add", a="one", b=2), "Error: ToolArgumentError: add: argument 'a' must be integer"),
        ("<tool_call>{not json}</tool_call>", "Error: the text inside <tool_call> is not valid JSON"),
    ],
)
def test_tool_errors_become_observations_and_are_counted(tools, turn, observation):
    env = make(tools)
    env.reset(seed=0)
    messages, reward, terminated, _, info = env.step(turn)
    assert messages[0]["content"].startswith(observation)
    assert not terminated and info["tool_errors"] == 1 and info["action_valid"] is False


def test_openai_calls_are_answered_with_their_ids(tools):
    env = make(tools, max_calls_per_turn=2)
    env.reset(seed=0)
    action = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
            {"id": "c2", "type": "function", "function": {"name": "shout", "arguments": '{"text": "ok"}'}},
        ],
    }
    messages, *_ = env.step(action)
    assert [(m["tool_call_id"], m["content"]) for m in messages] == [("c1", "3"), ("c2", "OK")]


def test_call_cost_is_a_named_reward_component(tools):
    env = make(tools, call_cost=0.1)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(hermes("add", a=1, b=1))
    assert reward == pytest.approx(-0.1) and info["reward_components"] == {"tool_cost": pytest.approx(-0.1)}


def test_otc_rewards_a_correct_answer_with_the_optimal_number_of_calls_most():
    assert otc_tool_score(1, 1) == pytest.approx(1.0)
    assert otc_tool_score(0, 1) == 0.0
    assert 1.0 > otc_tool_score(2, 1) > otc_tool_score(4, 1) > 0
    assert otc_tool_score(0, 0) == 1.0 and otc_tool_score(3, 0) < otc_tool_score(1, 0) < 1.0


def test_extra_calls_cost_efficiency_reward_but_only_when_correct(tools):
    env = make(tools, efficiency_weight=0.5, optimal_calls=1)
    env.reset(seed=0, options={"task_index": 0})
    a, b = (int(x) for x in env.task.messages[0]["content"][8:-1].split(" + "))
    for _ in range(3):
        env.step(hermes("add", a=a, b=b))
    _, reward, _, _, info = env.step(f"<answer>{a + b}</answer>")
    assert info["reward_components"]["tool_efficiency"] == pytest.approx(0.5 * (otc_tool_score(3, 1) - 1))
    assert 0.5 < reward < 1.0
    env.reset(seed=0, options={"task_index": 0})
    _, reward, _, _, info = env.step("<answer>0</answer>")
    assert reward == 0.0


def test_a_flood_of_calls_runs_only_the_per_turn_limit_and_is_an_invalid_turn(tools):
    env = make(tools, max_calls_per_turn=8)
    env.reset(seed=0)
    messages, reward, terminated, _, info = env.step(hermes("add", a=1, b=1) * 300)
    assert len(messages) == 9 and [m["content"] for m in messages[:8]] == ["2"] * 8
    assert messages[8]["content"].startswith("Skipped: at most 8 tool call(s) per turn are run; 292 more were not")
    assert info["tool_calls"] == 8 and info["tool_calls_skipped"] == 292 and info["tool_calls_total"] == 8
    assert info["action_valid"] is False and "300 tool calls in one turn" in info["action_error"]
    assert not terminated and "error" not in info


def test_calls_past_the_episode_budget_are_an_invalid_turn(tools):
    env = make(tools, max_calls_per_episode=1)
    env.reset(seed=0)
    assert env.step(hermes("add", a=1, b=1))[4]["action_valid"] is True
    info = env.step(hermes("add", a=1, b=1))[4]
    assert info["action_valid"] is False and "budget" in info["action_error"]


@pytest.mark.parametrize(
    "arguments",
    [
        '{"a": 1}',
        '{"a": 1, "b": 2, "c": 3}',
        '{"a": "1", "b": 2}',
        '{"a": 1.5, "b": 2}',
        '{"a": NaN, "b": 2}',
        '{"a": 1e999, "b": 2}',
        '{"a": true, "b": 2}',
        "[1, 2]",
        '"a=1"',
        '{"a": ' + "9" * 5000 + ', "b": 2}',
        '{"a": ' + "[" * 40_000 + "]" * 40_000 + ', "b": 2}',
    ],
    ids=lambda text: text[:20],
)
def test_malformed_arguments_are_an_invalid_turn_never_an_exception(tools, arguments):
    env = make(tools)
    env.reset(seed=0)
    messages, _, terminated, _, info = env.step(f'<tool_call>{{"name": "add", "arguments": {arguments}}}</tool_call>')
    assert messages[0]["content"].startswith("Error") and not terminated
    assert info["action_valid"] is False and info["action_error"] and "error" not in info


def test_an_unknown_tool_with_a_huge_name_gets_a_bounded_error(tools):
    env = make(tools, max_result_chars=100)
    env.reset(seed=0)
    messages, *_, info = env.step(hermes("x" * 50_000))
    assert len(messages[0]["content"]) < 200 and info["action_valid"] is False


def test_the_reference_and_wrong_actions_are_the_wrapped_envs():
    from helpers.add_numbers import AddNumbers

    class AddNumbersWithReference(AddNumbers):
        def reference_action(self):
            return f"<answer>{self.task.answer}</answer>"

        def wrong_action(self):
            return f"<answer>{self.task.answer + 1}</answer>"

    env = ToolEnv(AddNumbersWithReference(), [Tool.from_function(lambda text: text, name="echo")])
    env.reset(seed=0, options={"task_index": 3})
    assert env.reference_action() == f"<answer>{env.task.answer}</answer>"
    assert env.step(env.wrong_action())[1] == 0.0
    env.reset(seed=0, options={"task_index": 3})
    assert env.step(env.reference_action())[1] == 1.0


def test_call_formats_choose_what_is_read_as_a_call(tools):
    pythonic = make(tools, call_formats=["hermes", "pythonic"])
    pythonic.reset(seed=0)
    assert pythonic.step("[add(a=2, b=3)]")[0] == [
        {"role": "tool", "tool_call_id": "call_0", "name": "add", "content": "5"}
    ]
    plain = make(tools)
    plain.reset(seed=0)
    assert plain.step("[add(a=2, b=3)]")[2]  # not a call by default: the turn is the final answer
    with pytest.raises(ValueError, match="unknown tool-call formats"):
        make(tools, call_formats=["xml"])

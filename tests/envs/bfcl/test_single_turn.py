"""bfcl/* single-turn envs: graded per BFCL's rules, with the reason and the expected calls in info."""

import json

import pytest

import envgym
from envgym.envs.bfcl import env_id
from envgym.envs.bfcl.data import SINGLE_TURN


def make(category, **kwargs):
    return envgym.make(env_id(category), allow_unsafe=True, **kwargs)  # the hallucination categories are fenced


def play(env, action, index=0):
    env.reset(options={"task_index": index})
    return env.step(action)


@pytest.mark.parametrize("category", SINGLE_TURN)
@pytest.mark.parametrize("prompt_format", ["bfcl", None])
def test_the_reference_answer_earns_1_on_the_first_tasks_of_every_category(category, prompt_format):
    env = make(category, prompt_format=prompt_format)
    for index in range(5):
        env.reset(options={"task_index": index})
        action = env.unwrapped.reference_action()
        _, reward, terminated, _, info = env.step(action)
        assert (reward, terminated, info["correct"]) == (1.0, True, True), info["call_failure_reason"]


def test_simple_python_pays_the_gold_call_written_as_a_python_list():
    _, reward, _, _, info = play(make("simple_python"), "[calculate_triangle_area(base=10, height=5)]")
    assert reward == 1.0 and info["calls"] == [
        {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
    ]


def test_a_bare_call_without_brackets_or_in_backticks_is_read_as_bfcl_reads_it():
    assert play(make("simple_python"), "calculate_triangle_area(base=10, height=5)")[1] == 1.0
    assert play(make("simple_python"), "```\n[calculate_triangle_area(base=10, height=5)]\n```")[1] == 1.0


def test_a_json_tool_call_is_read_too():
    action = '<tool_call>{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}</tool_call>'
    assert play(make("simple_python"), action)[1] == 1.0


def test_a_wrong_value_scores_0_with_its_reason_and_the_expected_call():
    _, reward, _, _, info = play(make("simple_python"), "[calculate_triangle_area(base=10, height=6)]")
    assert reward == 0.0 and info["call_failure"] == "wrong_value"
    assert "'height' is 6; expected one of [5]" in info["call_failure_reason"]
    assert info["expected_calls"] == [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]


def test_the_expected_calls_stay_hidden_until_the_answer_is_graded():
    env = make("simple_python")
    messages, info = env.reset(options={"task_index": 0})
    assert set(info) == {"tools", "category", "task_id"}
    assert "answer" not in env.unwrapped.task.metadata and "gold" not in env.unwrapped.task.metadata
    assert all("ground_truth" not in str(message["content"]) for message in messages)


def test_a_dotted_function_name_is_called_as_written():
    assert play(make("simple_python"), "[math.factorial(number=5)]", index=1)[1] == 1.0


def test_two_calls_where_one_is_expected_score_0_as_extra_call():
    action = "[calculate_triangle_area(base=10, height=5), calculate_triangle_area(base=10, height=5)]"
    assert play(make("simple_python"), action)[4]["call_failure"] == "extra_call"


def test_parallel_calls_may_come_in_any_order():
    env = make("parallel", prompt_format=None)
    env.reset(options={"task_index": 0})
    action = env.unwrapped.reference_action()
    assert len(action["tool_calls"]) > 1
    action["tool_calls"].reverse()
    assert env.step(action)[1] == 1.0


def test_irrelevance_pays_a_refusal_and_not_a_call():
    env = make("irrelevance")
    assert play(env, "None of these functions can compute a triangle's area.")[1] == 1.0
    env.reset(options={"task_index": 0})
    _, reward, _, _, info = env.step(env.unwrapped.wrong_action())
    assert reward == 0.0 and info["call_failure"] == "unexpected_call" and info["expected_calls"] == []


def test_relevance_pays_any_call_and_not_a_refusal():
    env = make("live_relevance")
    env.reset(options={"task_index": 0})
    assert env.step(env.unwrapped.reference_action())[1] == 1.0
    assert play(env, "I can't help with that.")[4]["call_failure"] == "no_call"


def test_java_arguments_are_java_source_text():
    env = make("simple_java", prompt_format=None)
    messages, info = env.reset(options={"task_index": 1})
    assert all(
        spec["type"] == "string"
        for tool in info["tools"]
        for spec in tool["function"]["parameters"]["properties"].values()
    )
    action = env.unwrapped.reference_action()
    assert env.step(action)[1] == 1.0


def test_a_java_argument_that_is_not_source_text_is_a_wrong_type():
    env = make("simple_java", prompt_format=None)
    env.reset(options={"task_index": 1})
    action = env.unwrapped.reference_action()
    arguments = json.loads(action["tool_calls"][0]["function"]["arguments"])
    arguments["useShortName"] = True  # a JSON boolean, not the Java text "true"
    action["tool_calls"][0]["function"]["arguments"] = json.dumps(arguments)
    assert env.step(action)[4]["call_failure"] == "wrong_type"


def test_native_mode_sends_no_function_prompt_and_gives_openai_tools():
    messages, info = make("simple_python", prompt_format=None).reset(options={"task_index": 1})
    assert [m["role"] for m in messages] == ["user"]
    assert info["tools"][0]["function"]["name"] == "math.factorial"
    assert info["tools"][0]["function"]["parameters"]["type"] == "object"


def test_the_bfcl_prompt_lists_the_functions_as_bfcl_does():
    messages, _ = make("simple_python").reset(options={"task_index": 1})
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith(
        "You are an expert in composing functions."
    )
    assert '"name": "math.factorial"' in messages[0]["content"] and "Python 3 syntax" in messages[0]["content"]


def test_an_unreadable_call_scores_0_and_is_an_invalid_action():
    _, reward, _, _, info = play(make("simple_python"), "[calculate_triangle_area(base=10, height=five)]")
    assert reward == 0.0 and info["call_failure"] == "malformed_call" and info["action_valid"] is False


def test_the_reference_is_none_where_no_call_can_match_the_gold():
    env = make("live_simple")
    ids = [env.unwrapped.tasks.get(i).id for i in range(len(env.unwrapped.tasks))]
    env.reset(options={"task_index": ids.index("live_simple_106-63-0")})  # a required parameter allowed only []
    assert env.unwrapped.reference_action() is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"category": "multi_turn_base"}, "unknown single-turn BFCL category 'multi_turn_base'"),
        ({"prompt_format": "json"}, "prompt_format must be 'bfcl' or None, got 'json'"),
    ],
)
def test_bad_kwargs_are_refused_naming_what_is_accepted(kwargs, message):
    from envgym.envs.bfcl.single_turn import BFCLSingleTurn

    with pytest.raises(ValueError, match=message):
        BFCLSingleTurn(**kwargs)


def test_the_answer_maj_at_k_votes_on_is_the_calls_made_in_any_order_and_no_call_is_one():
    env = make("parallel", prompt_format=None)
    env.reset(options={"task_index": 0})
    action = env.unwrapped.reference_action()
    forward = env.step(action)[4]["answer"]
    env.reset(options={"task_index": 0})
    action["tool_calls"].reverse()
    assert env.step(action)[4]["answer"] == forward
    assert sorted(call["name"] for call in json.loads(forward)) == sorted(
        c["function"]["name"] for c in action["tool_calls"]
    )
    irrelevance = make("irrelevance")
    assert play(irrelevance, "None of these functions can compute a triangle's area.")[4]["answer"] == "[]"

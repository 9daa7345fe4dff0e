"""parse_turn: tag calls, Hermes/Qwen <tool_call> JSON, Llama 3 JSON, Mistral [TOOL_CALLS], pythonic calls, OpenAI
tool_calls, and the final <answer>."""

import pytest

from envgym.tools import parse_turn
from envgym.tools.parsing import CALL_FORMATS


def test_tag_calls_fill_the_tools_text_argument():
    parsed = parse_turn(
        "<think>hmm</think><search> capital of Peru </search>", ["search"], tag_arguments={"search": "query"}
    )
    assert [(c.name, c.arguments, c.format) for c in parsed.calls] == [("search", {"query": "capital of Peru"}, "tag")]
    assert parsed.answer is None


def test_unknown_tags_are_plain_text():
    assert parse_turn("<search>x</search>", ["python"]).calls == []


def test_hermes_json_calls_are_parsed_in_order_with_tags():
    text = '<python>print(1)</python> then <tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>'
    parsed = parse_turn(text, ["python"], tag_arguments={"python": "code"})
    assert [(c.name, c.arguments, c.id) for c in parsed.calls] == [
        ("python", {"code": "print(1)"}, "call_0"),
        ("search", {"query": "q"}, "call_1"),
    ]


def test_openai_tool_calls_keep_their_ids_and_decode_string_arguments():
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "abc", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
            {"id": "def", "type": "function", "function": {"name": "add", "arguments": {"a": 3, "b": 4}}},
        ],
    }
    parsed = parse_turn(message)
    assert [(c.id, c.arguments, c.format) for c in parsed.calls] == [
        ("abc", {"a": 1, "b": 2}, "openai"),
        ("def", {"a": 3, "b": 4}, "openai"),
    ]


def test_malformed_calls_are_kept_with_an_error_to_report():
    parsed = parse_turn('<tool_call>{"name": "add", "arguments": {"a": 1</tool_call>')
    assert parsed.calls[0].error.startswith("the text inside <tool_call> is not valid JSON")
    message = {"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "add", "arguments": "{oops"}}]}
    assert "not valid JSON" in parse_turn(message).calls[0].error


def test_an_answer_before_any_call_makes_the_turn_final():
    parsed = parse_turn("<answer>42</answer> <search>more</search>", ["search"])
    assert parsed.answer == "42" and parsed.answer_first
    assert not parse_turn("<search>more</search><answer>42</answer>", ["search"]).answer_first


def test_structured_tool_calls_win_over_the_same_calls_left_in_the_content():
    message = {
        "role": "assistant",
        "content": '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>',
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}],
    }
    assert [(c.id, c.format) for c in parse_turn(message).calls] == [("x", "openai")]


def test_nested_tags_give_the_innermost_body_so_unclosed_floods_are_read_in_one_pass():
    parsed = parse_turn("<answer>" * 1000 + "<answer>7</answer>" + "<search>" * 1000 + "<search>q</search>", ["search"])
    assert parsed.answer == "7" and [call.arguments for call in parsed.calls] == [{"input": "q"}]
    assert parse_turn('<tool_call><tool_call>{"name": "search", "arguments": {}}</tool_call>').calls[0].name == "search"


def calls_of(text, **kwargs):
    return [(call.name, call.arguments, call.format, call.error) for call in parse_turn(text, **kwargs).calls]


def test_llama_json_is_a_call_when_it_is_the_whole_message():
    assert calls_of('{"name": "get_weather", "parameters": {"city": "SF"}}') == [
        ("get_weather", {"city": "SF"}, "llama", None)
    ]


def test_llama_calls_after_the_python_tag_may_be_several_separated_by_semicolons():
    text = '<|python_tag|>{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {}}<|eom_id|>'
    assert calls_of(text) == [("a", {"x": 1}, "llama", None), ("b", {}, "llama", None)]


def test_a_json_answer_that_is_not_call_shaped_stays_an_answer():
    assert parse_turn('{"name": "Ada", "born": 1815}').calls == []
    assert parse_turn('The call was {"name": "a", "parameters": {}}').calls == []


def test_malformed_llama_json_is_a_call_with_an_error():
    (call,) = parse_turn('<|python_tag|>{"name": "a", "parameters": {"x": 1}').calls
    assert call.format == "llama" and "not valid JSON" in call.error


def test_mistral_v3_list_keeps_the_call_ids():
    text = 'Sure.[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}, "id": "abc123def"}, {"name": "b", "arguments": {}, "id": "xyz987uvw"}]'  # noqa: E501 -- data, kept whole
    assert [(c.name, c.arguments, c.id, c.format) for c in parse_turn(text).calls] == [
        ("a", {"x": 1}, "abc123def", "mistral"),
        ("b", {}, "xyz987uvw", "mistral"),
    ]


def test_mistral_name_args_calls_are_read_one_per_marker():
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]search[ARGS]{"q": "x"}</s>'
    assert calls_of(text) == [
        ("get_weather", {"city": "Paris"}, "mistral", None),
        ("search", {"q": "x"}, "mistral", None),
    ]


def test_malformed_mistral_calls_are_kept_with_an_error():
    for text in (
        "[TOOL_CALLS] [{oops",
        "[TOOL_CALLS]get_weather{}",
        '[TOOL_CALLS]get_weather[ARGS]["SF"]',
        "[TOOL_CALLS] []",
    ):
        (call,) = parse_turn(text).calls
        assert call.format == "mistral" and call.error, text


def test_pythonic_calls_read_literal_keyword_arguments():
    text = '[get_weather(city="SF", days=[1, 2]), search(q="x", exact=True, limit=None)]'
    assert calls_of(text, formats=["pythonic"]) == [
        ("get_weather", {"city": "SF", "days": [1, 2]}, "pythonic", None),
        ("search", {"q": "x", "exact": True, "limit": None}, "pythonic", None),
    ]


def test_pythonic_calls_are_not_read_unless_asked_for():
    assert parse_turn('[get_weather(city="SF")]').calls == []


def test_pythonic_arguments_are_never_evaluated(tmp_path):
    marker = tmp_path / "ran"
    text = f'[write(path=open({str(marker)!r}, "w").write("x"))]'
    (call,) = parse_turn(text, formats=["pythonic"]).calls
    assert "not a JSON-like literal" in call.error and not marker.exists()


def test_malformed_pythonic_calls_are_kept_with_an_error():
    for text in (
        '[get_weather("SF")]',
        "[get_weather(city=SF)]",
        '[get_weather(city="SF"',
        "[f(**kw)]",
        "[f(x={1, 2})]",
        "[f(x=1), 2]",
        "[f(x=float('nan'))]",
    ):
        calls = parse_turn(text, formats=["pythonic"]).calls
        assert calls and all(call.format == "pythonic" for call in calls) and any(call.error for call in calls), text


def test_formats_select_what_is_read_and_unknown_names_are_refused():
    text = '<tool_call>{"name": "a", "arguments": {}}</tool_call>[TOOL_CALLS]b[ARGS]{}'
    assert [c.name for c in parse_turn(text, formats=["mistral"]).calls] == ["b"]
    assert [c.name for c in parse_turn(text).calls] == ["a", "b"]
    with pytest.raises(ValueError, match="accepted: tag, hermes, llama, mistral, pythonic"):
        parse_turn(text, formats=["harmony"])


def test_floods_of_every_format_are_read_without_raising():
    floods = [
        "[TOOL_CALLS][" * 10_000,
        "[TOOL_CALLS]" + "[" * 100_000,
        "<|python_tag|>" + "[" * 100_000,
        '{"name": ' + "[" * 100_000,
        "[f(" * 30_000 + "]",
        "[f(x=" + "[" * 100_000 + ")]",
        '<|python_tag|>{"name": "a", "parameters": {"x": ' + "9" * 100_000 + "}}",
    ]
    for text in floods:
        calls = parse_turn(text, formats=CALL_FORMATS).calls
        assert all(call.error for call in calls), text[:40]


DEEP_ARGUMENTS = '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_openai_arguments_nested_too_deep_are_an_unreadable_call_not_an_exception():
    action = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": DEEP_ARGUMENTS}}],
    }
    (call,) = parse_turn(action).calls
    assert call.name == "f" and call.error.startswith("arguments are not valid JSON")


def test_hermes_arguments_nested_too_deep_are_an_unreadable_call_not_an_exception():
    (call,) = parse_turn('<tool_call>{"name": "f", "arguments": ' + DEEP_ARGUMENTS + "}</tool_call>").calls
    assert call.error is not None and "RecursionError" in call.error

"""parse_turn: tag calls, Hermes/Qwen <tool_call> JSON, OpenAI tool_calls, and the final <answer>."""

from envgym.tools import parse_turn


def test_tag_calls_fill_the_tools_text_argument():
    parsed = parse_turn("<think>hmm</think><search> capital of Peru </search>", ["search"], tag_arguments={"search": "query"})
    assert [(c.name, c.arguments, c.format) for c in parsed.calls] == [("search", {"query": "capital of Peru"}, "tag")]
    assert parsed.answer is None


def test_unknown_tags_are_plain_text():
    assert parse_turn("<search>x</search>", ["python"]).calls == []


def test_hermes_json_calls_are_parsed_in_order_with_tags():
    text = '<python>print(1)</python> then <tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>'
    parsed = parse_turn(text, ["python"], tag_arguments={"python": "code"})
    assert [(c.name, c.arguments, c.id) for c in parsed.calls] == [
        ("python", {"code": "print(1)"}, "call_0"), ("search", {"query": "q"}, "call_1")]


def test_openai_tool_calls_keep_their_ids_and_decode_string_arguments():
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "abc", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
        {"id": "def", "type": "function", "function": {"name": "add", "arguments": {"a": 3, "b": 4}}},
    ]}
    parsed = parse_turn(message)
    assert [(c.id, c.arguments, c.format) for c in parsed.calls] == [("abc", {"a": 1, "b": 2}, "openai"), ("def", {"a": 3, "b": 4}, "openai")]


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
    message = {"role": "assistant", "content": '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>',
               "tool_calls": [{"id": "x", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]}
    assert [(c.id, c.format) for c in parse_turn(message).calls] == [("x", "openai")]


def test_nested_tags_give_the_innermost_body_so_unclosed_floods_are_read_in_one_pass():
    parsed = parse_turn("<answer>" * 1000 + "<answer>7</answer>" + "<search>" * 1000 + "<search>q</search>", ["search"])
    assert parsed.answer == "7" and [call.arguments for call in parsed.calls] == [{"input": "q"}]
    assert parse_turn('<tool_call><tool_call>{"name": "search", "arguments": {}}</tool_call>').calls[0].name == "search"

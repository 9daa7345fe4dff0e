"""Tool: schemas from functions, argument checking that explains itself, sync and async callables."""

import asyncio

import pytest

from envgym.tools import Tool, ToolArgumentError


def lookup(name: str, limit: int = 3) -> list:
    """Find things by name.

    More detail the model does not need."""
    return [name] * limit


def test_from_function_builds_the_json_schema_from_type_hints_and_docstring():
    tool = Tool.from_function(lookup)
    assert tool.openai_schema() == {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Find things by name.",
            "parameters": {"type": "object", "properties": {"name": {"type": "string"}, "limit": {"type": "integer"}},
                           "required": ["name"]},
        },
    }


def test_the_only_required_argument_is_what_a_tag_call_fills():
    assert Tool.from_function(lookup).tag_argument == "name"


def test_call_returns_text_and_json_encodes_other_results():
    assert Tool.from_function(lookup).call({"name": "x", "limit": 2}) == '["x", "x"]'


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required argument(s) name"),
        ({"name": 3}, "argument 'name' must be string"),
        ({"name": "x", "limit": True}, "argument 'limit' must be integer"),
        ({"name": "x", "colour": "red"}, "unknown argument(s) colour"),
        ("name=x", "arguments must be a JSON object"),
    ],
)
def test_bad_arguments_raise_an_error_that_says_what_is_expected(arguments, message):
    with pytest.raises(ToolArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Tool.from_function(lookup).call(arguments)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_number_that_is_not_finite_is_refused(value):
    tool = Tool("scale", "Scale.", {"type": "object", "properties": {"x": {"type": "number"}}}, lambda x: x * 2)
    with pytest.raises(ToolArgumentError, match="'x' must be a finite number"):
        tool.call({"x": value})


def test_a_huge_integer_of_the_wrong_type_gets_a_bounded_message():
    with pytest.raises(ToolArgumentError, match="'name' must be string, got int an integer of about 5000 digits"):
        Tool.from_function(lookup).call({"name": 10**5000})


def test_enum_and_bounds_are_checked():
    tool = Tool("pick", "Pick one.", {"type": "object", "properties": {
        "colour": {"type": "string", "enum": ["red", "blue"]}, "n": {"type": "integer", "minimum": 1}}}, lambda **kw: "ok")
    with pytest.raises(ToolArgumentError, match="must be one of"):
        tool.call({"colour": "green"})
    with pytest.raises(ToolArgumentError, match="must be >= 1"):
        tool.call({"n": 0})


def test_async_tools_work_from_sync_and_async_code():
    async def slow_echo(text: str) -> str:
        await asyncio.sleep(0)
        return text

    tool = Tool.from_function(slow_echo)
    assert tool.call({"text": "hi"}) == "hi"
    assert asyncio.run(tool.acall({"text": "there"})) == "there"


def test_a_schema_that_is_not_an_object_is_rejected():
    with pytest.raises(ValueError, match='"type": "object"'):
        Tool("bad", "Bad.", {"type": "string"}, lambda: None)

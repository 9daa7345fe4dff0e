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
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["name"],
            },
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
    tool = Tool(
        "pick",
        "Pick one.",
        {
            "type": "object",
            "properties": {
                "colour": {"type": "string", "enum": ["red", "blue"]},
                "n": {"type": "integer", "minimum": 1},
            },
        },
        lambda **kw: "ok",
    )
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


def test_a_dotted_name_is_accepted():
    tool = Tool("math.factorial", "n!", {"type": "object", "properties": {"n": {"type": "integer"}}}, lambda n: n)
    assert tool.openai_schema()["function"]["name"] == "math.factorial"


@pytest.mark.parametrize("name", ["", "math.", ".factorial", "a..b", "a b", "a/b"])
def test_a_name_with_empty_parts_or_other_characters_is_refused(name):
    with pytest.raises(ValueError, match="in parts joined by '.'"):
        Tool(name, "x", {"type": "object", "properties": {}}, lambda: None)


_NESTED = {
    "type": "object",
    "properties": {
        "filter": {
            "type": "object",
            "properties": {"year": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["year"],
        },
        "points": {
            "type": "array",
            "items": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
        },
    },
}


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"filter": {"year": "2020"}}, r"argument 'filter' key 'year' must be integer, got str"),
        ({"filter": {}}, r"argument 'filter' missing required key\(s\) year"),
        ({"filter": {"year": 2020, "colour": "red"}}, r"argument 'filter' unknown key\(s\) colour"),
        ({"filter": {"year": 2020, "tags": ["a", 3]}}, r"argument 'filter' key 'tags'\[1\] must be string"),
        ({"points": [{"x": 1.5}, {}]}, r"argument 'points'\[1\] missing required key\(s\) x"),
    ],
)
def test_nested_arguments_are_checked_at_every_depth(arguments, message):
    tool = Tool("query", "q", _NESTED, lambda **kw: "ok")
    with pytest.raises(ToolArgumentError, match=message):
        tool.call(arguments)


def test_well_formed_nested_arguments_pass():
    tool = Tool("query", "q", _NESTED, lambda **kw: "ok")
    assert tool.call({"filter": {"year": 2020, "tags": ["a"]}, "points": [{"x": 1}, {"x": 2.5}]}) == "ok"


def test_enum_is_compared_exactly_by_default_and_case_insensitively_on_request():
    schema = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["Celsius", "Fahrenheit"]}}}
    with pytest.raises(ToolArgumentError, match="must be one of"):
        Tool("convert", "c", schema, lambda **kw: "ok").call({"unit": "celsius"})
    assert Tool("convert", "c", schema, lambda **kw: "ok", enum_match="casefold").call({"unit": "celsius"}) == "ok"


def test_an_unknown_enum_match_is_refused():
    with pytest.raises(ValueError, match="enum_match must be one of exact, casefold"):
        Tool("convert", "c", {"type": "object", "properties": {}}, lambda: None, enum_match="fuzzy")

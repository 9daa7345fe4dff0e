"""Function definitions in OpenAI, MCP and BFCL's dialect become one FunctionSchema with a JSON Schema."""

import pytest

from envgym.verifiers.calls import bfcl_to_json_schema, function_schema

_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_an_openai_tools_entry_is_read():
    schema = function_schema(
        {"type": "function", "function": {"name": "weather", "description": "W.", "parameters": _PARAMETERS}}
    )
    assert (schema.name, schema.description, schema.parameters) == ("weather", "W.", _PARAMETERS)


def test_an_mcp_tool_definition_is_read_from_its_input_schema():
    schema = function_schema({"name": "weather", "description": "W.", "inputSchema": _PARAMETERS})
    assert schema.parameters == _PARAMETERS and schema.required == ["city"]


def test_the_schema_round_trips_to_an_openai_tools_entry():
    definition = {"type": "function", "function": {"name": "weather", "description": "W.", "parameters": _PARAMETERS}}
    assert function_schema(definition).openai() == definition


def test_bfcl_dialect_is_detected_by_its_dict_type_and_converted():
    schema = function_schema(
        {
            "name": "math.hypot",
            "description": "Norm.",
            "parameters": {
                "type": "dict",
                "properties": {"x": {"type": "float"}, "point": {"type": "tuple", "items": {"type": "integer"}}},
                "required": ["x"],
            },
        }
    )
    assert schema.name == "math.hypot"
    assert schema.parameters == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "point": {"type": "array", "items": {"type": "integer"}}},
        "required": ["x"],
    }


@pytest.mark.parametrize(
    "bfcl_type, json_type",
    [
        ("dict", "object"),
        ("float", "number"),
        ("double", "number"),
        ("tuple", "array"),
        ("ArrayList", "array"),
        ("any", "string"),
        ("long", "integer"),
        ("Boolean", "boolean"),
        ("HashMap", "object"),
        ("String", "string"),
        ("", "string"),
    ],
)
def test_bfcl_type_names_map_to_json_schema_types(bfcl_type, json_type):
    assert bfcl_to_json_schema({"type": bfcl_type}) == {"type": json_type}


def test_bfcl_nested_objects_and_items_are_converted_recursively():
    converted = bfcl_to_json_schema(
        {"type": "array", "items": {"type": "dict", "properties": {"w": {"type": "float", "enum": [1.5]}}}}
    )
    assert converted == {
        "type": "array",
        "items": {"type": "object", "properties": {"w": {"type": "number", "enum": [1.5]}}},
    }


def test_a_definition_without_a_name_is_refused():
    with pytest.raises(ValueError, match="needs a non-empty string 'name'"):
        function_schema({"description": "W.", "parameters": _PARAMETERS})


def test_an_unknown_dialect_is_refused():
    with pytest.raises(ValueError, match="unknown function dialect 'gemini'; accepted: openai, mcp, bfcl"):
        function_schema({"name": "w"}, dialect="gemini")


def test_parameters_that_are_not_an_object_are_refused():
    with pytest.raises(ValueError, match="parameters must have type object"):
        function_schema({"name": "w", "parameters": {"type": "string"}})

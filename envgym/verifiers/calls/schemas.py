"""Function definitions in the dialects users have, converted to one shape: a name, a description and a JSON
Schema of the arguments.

Dialects read by :func:`function_schema`:

- OpenAI ``tools`` entries: ``{"type": "function", "function": {"name", "description", "parameters"}}``, or the
  bare ``{"name", "description", "parameters"}`` inside them;
- MCP tool definitions: ``{"name", "description", "inputSchema"}``;
- BFCL's dialect (the Berkeley Function-Calling Leaderboard's data): JSON-Schema-like, with its own type names:
  ``dict`` -> ``object``, ``float``/``double`` -> ``number``, ``tuple``/``list``/``ArrayList``/``Array`` ->
  ``array``, ``any`` -> ``string`` (BFCL shows ``any`` to models as a string, and its checker wants one), Java and
  JavaScript names (``long``, ``Boolean``, ``HashMap``, ``String``, ...), and names it does not know as ``string``
  (BFCL's own conversion does the same). Detected by ``"type": "dict"`` at the top
  of the parameters, or forced with ``dialect="bfcl"``.

Names may be dotted (``math.factorial``), as BFCL's are.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

DIALECTS = ("openai", "mcp", "bfcl")

# BFCL's type names as JSON Schema types: the mapping BFCL itself applies before showing functions to models
# (bfcl_eval.constants.type_mappings.GORILLA_TO_OPENAPI), plus the two names its Java/JS data also uses.
BFCL_TYPES: dict[str, str] = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Set": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
    "Boolean": "boolean",
}
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


@dataclasses.dataclass(frozen=True)
class FunctionSchema:
    """A function the model may call: ``parameters`` is a JSON Schema object (``"type": "object"``)."""

    name: str
    description: str
    parameters: dict[str, Any]

    def openai(self) -> dict[str, Any]:
        """The function as an OpenAI ``tools`` entry (what chat templates render)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @property
    def properties(self) -> dict[str, Any]:
        return self.parameters.get("properties") or {}

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required") or [])


def function_schema(definition: Mapping[str, Any], *, dialect: str | None = None) -> FunctionSchema:
    """``definition`` (OpenAI, MCP or BFCL; ``dialect=None`` detects which) as a :class:`FunctionSchema`."""
    if not isinstance(definition, Mapping):
        raise TypeError(f"a function definition must be a mapping, got {type(definition).__name__}")
    if dialect is not None and dialect not in DIALECTS:
        raise ValueError(f"unknown function dialect {dialect!r}; accepted: {', '.join(DIALECTS)}")
    if definition.get("type") == "function" and isinstance(definition.get("function"), Mapping):
        definition = definition["function"]
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"a function definition needs a non-empty string 'name', got {name!r}")
    if "inputSchema" in definition and dialect in (None, "mcp"):
        parameters = definition["inputSchema"]
    else:
        parameters = definition.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, Mapping):
        raise ValueError(f"function {name!r}: parameters must be a JSON object, got {type(parameters).__name__}")
    if dialect == "bfcl" or (dialect is None and _looks_bfcl(parameters)):
        parameters = bfcl_to_json_schema(parameters)
    else:
        parameters = copy.deepcopy(dict(parameters))
        parameters.setdefault("type", "object")
    if parameters.get("type") != "object":
        raise ValueError(f"function {name!r}: parameters must have type object, got {parameters.get('type')!r}")
    return FunctionSchema(name=name, description=str(definition.get("description") or ""), parameters=parameters)


def bfcl_to_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL-dialect schema (any level) as JSON Schema: type names mapped, ``properties`` and ``items``
    converted recursively, everything else (description, enum, default, required) kept."""
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            converted["type"] = _json_type(value)
        elif key == "properties" and isinstance(value, Mapping):
            converted["properties"] = {
                name: bfcl_to_json_schema(spec) if isinstance(spec, Mapping) else spec for name, spec in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            converted["items"] = bfcl_to_json_schema(value)
        else:
            converted[key] = copy.deepcopy(value)
    return converted


def _json_type(bfcl_type: Any) -> Any:
    if isinstance(bfcl_type, list):
        return [_json_type(item) for item in bfcl_type]
    if bfcl_type in _JSON_TYPES:
        return bfcl_type
    # BFCL shows a type name it does not know (a few entries have "") as a string, and so do we
    return BFCL_TYPES.get(bfcl_type, "string")


def _looks_bfcl(parameters: Mapping[str, Any]) -> bool:
    """BFCL's parameters say ``"type": "dict"``; JSON Schema's never do."""
    return parameters.get("type") == "dict"

"""Tool-call strategies: floods, unknown tools, unreadable calls, fuzzed arguments, stalling with calls, and the
right call with wrong ones beside it.

Tools are read from the schemas the env gives (``info["tools"]``: OpenAI, MCP or BFCL-style dicts) and from the
prompt (JSON signatures, tool tags), so an env that lists its tools only as native schemas is attacked as hard as
one that describes them in text. Fuzzed arguments follow each tool's JSON schema: wrong types, nulls, huge and
special values, deep nesting, unknown keys, code in every string.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from envgym.audit.battery import ATTACK, LISTING_TAGS, PREFERRED_TAGS, TAG, Strategy, constant, openai_calls
from envgym.core import Action

FLOOD = 50  # tool calls in one message
TOOL_NAME = re.compile(r'"name"\s*:\s*"([A-Za-z_][\w.-]{0,60})"')
HUGE_STRING = 20_000  # characters in one fuzzed argument (several fit under the 100 KB action cap)
DEEP = 5_000  # levels of a nested JSON array in one argument string
CODE_ARGUMENT = "__import__('pathlib').Path('{path}').touch()"
FUZZED_TOOLS, THOROUGH_FUZZED_TOOLS = 1, 3


def tool_names(text: str) -> list[str]:
    """Tool names the prompt declares: JSON function signatures, and tags that are not answer formats."""
    names = list(dict.fromkeys(TOOL_NAME.findall(text)))
    names += [
        name
        for name in dict.fromkeys(TAG.findall(text))
        if f"</{name}>" in text and name not in LISTING_TAGS and name not in PREFERRED_TAGS and name not in names
    ]
    return names


def schema_tools(tools: list[Any]) -> dict[str, dict[str, Any]]:
    """``{name: JSON schema of the arguments}`` from native schemas (OpenAI ``{"type": "function", "function":
    {...}}``, MCP ``{"name", "inputSchema"}``, or ``{"name", "parameters"}``); entries without a name are skipped."""
    found = {}
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        name = function.get("name")
        schema = function.get("parameters") or function.get("inputSchema") or {}
        if isinstance(name, str) and name:
            found[name] = dict(schema) if isinstance(schema, Mapping) else {}
    return found


def plausible(schema: Any) -> Any:
    """A well-typed, harmless value for ``schema`` (what a stalling policy sends)."""
    if not isinstance(schema, Mapping):
        return "1"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or kind == "dict" or "properties" in schema:
        return {name: plausible(sub) for name, sub in (schema.get("properties") or {}).items()}
    return {"integer": 1, "number": 1, "float": 1, "boolean": True, "array": [], "list": []}.get(kind, "1")


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return dict(properties) if isinstance(properties, Mapping) and properties else {"value": {"type": "string"}}


def _kind(schema: Any) -> str:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    return str(kind[0] if isinstance(kind, list) and kind else kind or "string")


def fuzzed_arguments(schema: Mapping[str, Any], marker: str) -> dict[str, str]:
    """``{variant: arguments as a JSON string}``: every property of ``schema`` given a value no honest call sends.

    ``marker`` is the file a ``code`` variant's strings create if anything runs them."""
    properties = _properties(schema)

    def each(value_of: Any) -> str:
        return json.dumps({name: value_of(_kind(sub)) for name, sub in properties.items()})

    wrong_type = {"string": 12345, "integer": "12", "number": "1.5", "boolean": "maybe", "array": {"a": 1}}
    huge = {"string": "9" * HUGE_STRING, "integer": 10**400, "number": 1e308, "boolean": 2, "array": [0] * 2000}
    special = {"string": "-1", "integer": -(2**63), "number": math.nan, "boolean": None, "array": [None]}
    code = CODE_ARGUMENT.format(path=marker)
    valid = plausible({"properties": properties})
    return {
        "wrong-types": each(lambda kind: wrong_type.get(kind, [1])),
        "nulls": each(lambda kind: None),
        "huge": each(lambda kind: huge.get(kind, "9" * HUGE_STRING)),
        "special": each(lambda kind: special.get(kind, math.inf)),
        "unicode": each(lambda kind: "\u202e\x00\u0661\u0662\U0001d7d8\ufeff" if kind == "string" else "\u0662"),
        "deep": "{" + ", ".join(f'"{name}": ' + "[" * DEEP + "]" * DEEP for name in properties) + "}",
        "extra-keys": json.dumps({**valid, "audit_extra": 1, "__class__": "x"}),
        "code": each(lambda kind: code),
    }


def tool_strategies(text: str, tools: list[Any], marker_prefix: str, thorough: bool = False) -> list[Strategy]:
    """Floods of calls in one message (tags, Hermes JSON, OpenAI dicts), unknown tools, unreadable calls, fuzzed
    arguments for each schema, and stalling with a well-formed call every turn."""
    schemas = schema_tools(tools)
    names = list(dict.fromkeys([*schemas, *tool_names(text)])) or ["search"]
    tool = names[0]
    strategies = [
        Strategy(f"flood:tag:{name}", ATTACK, constant(f"<{name}>1</{name}>" * FLOOD))
        for name in names[:2]
        if f"</{name}>" in text
    ]
    strategies += [
        Strategy(f"flood:hermes:{tool}", ATTACK, constant("".join(hermes(tool, {}) for _ in range(FLOOD)))),
        Strategy(f"flood:openai:{tool}", ATTACK, constant(openai_calls([(tool, "{}")] * FLOOD))),
        Strategy("tool:unknown:hermes", ATTACK, constant(hermes("audit_unknown_tool", {"x": 1}))),
        Strategy("tool:unknown:openai", ATTACK, constant(openai_calls([("audit_unknown_tool", "{}")]))),
        Strategy("tool:bad-json:hermes", ATTACK, constant("<tool_call>{not json</tool_call>")),
        Strategy("tool:bad-json:openai", ATTACK, constant(openai_calls([(tool, "{not json")]))),
        Strategy("tool:arguments-list:openai", ATTACK, constant(openai_calls([(tool, "[1, 2]")]))),
        Strategy(
            f"stall:calls:{tool}",
            ATTACK,
            constant(openai_calls([(tool, json.dumps(plausible(schemas.get(tool, {}))))])),
        ),
    ]
    if f"</{tool}>" in text:
        strategies.append(Strategy(f"stall:tag:{tool}", ATTACK, constant(f"<{tool}>1 + 1</{tool}>")))
    fuzzed = names[: THOROUGH_FUZZED_TOOLS if thorough else FUZZED_TOOLS]
    flood = []
    for name in fuzzed:
        marker = f"{marker_prefix}-fuzz-{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
        variants = fuzzed_arguments(schemas.get(name, {}), marker)
        flood += [(name, arguments) for variant, arguments in variants.items() if variant != "code"]
        strategies += [
            Strategy(
                f"fuzz:{variant}:{name}",
                ATTACK,
                constant(openai_calls([(name, arguments)])),
                marker=marker if variant == "code" else None,
            )
            for variant, arguments in variants.items()
        ]
    strategies.append(Strategy("fuzz:flood", ATTACK, constant(openai_calls(flood))))
    return strategies


def hermes(name: str, arguments: Any) -> str:
    """One call in the Hermes/Qwen text form ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``."""
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def calls_of(action: Action | None) -> list[tuple[str, Any]]:
    """The ``(name, arguments)`` of every call an action makes (OpenAI ``tool_calls``, else Hermes tags)."""
    if isinstance(action, Mapping) and action.get("tool_calls"):
        calls = []
        for call in action["tool_calls"]:
            function = call.get("function", call) if isinstance(call, Mapping) else {}
            calls.append((str(function.get("name")), function.get("arguments")))
        return calls
    text = action if isinstance(action, str) else ""
    calls = []
    for body in re.findall(r"<tool_call>(.{0,20000}?)</tool_call>", text, re.DOTALL):
        try:
            call = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(call, Mapping) and isinstance(call.get("name"), str):
            calls.append((call["name"], call.get("arguments")))
    return calls


def wrong_variants(name: str, arguments: Any) -> list[tuple[str, str]]:
    """Calls that differ from a right one: each argument changed (numbers +1, strings altered, booleans negated)
    one at a time, and every argument dropped."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return [(name, "{}")]
    if not isinstance(arguments, Mapping) or not arguments:
        return [(name, json.dumps({"audit_extra": 1}))]
    variants = [(name, "{}")]
    for key, value in arguments.items():
        variants.append((name, json.dumps({**arguments, key: _changed(value)})))
    return variants


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x" if value else "x"
    if isinstance(value, list):
        return [*value, value[-1]] if value else [0]
    if isinstance(value, Mapping):
        return {**value, "audit_extra": 1}
    return "x"


def with_wrong_calls(right: Action) -> Action | None:
    """The right call(s) of ``right`` followed by wrong variants of each (as OpenAI ``tool_calls``): an env that
    pays when any call is right pays this too. None when ``right`` makes no call."""
    calls = calls_of(right)
    if not calls:
        return None
    wrong = [variant for name, arguments in calls for variant in wrong_variants(name, arguments)]
    right_calls = [
        (name, arguments if isinstance(arguments, str) else json.dumps(arguments)) for name, arguments in calls
    ]
    return openai_calls(right_calls + wrong)

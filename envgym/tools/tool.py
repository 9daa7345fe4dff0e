"""Tool: a name, a JSON schema for its arguments, and a sync or async callable.

The schema is what the model sees (rendered into the system prompt, or passed to a chat template as OpenAI
``tools``); the same schema checks the arguments before the callable runs, so a malformed call becomes an
observation that teaches the format instead of an exception inside the tool.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}
_PYTHON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
# Letters, digits, '_' and '-', in dot-separated parts: BFCL's and many APIs' names are dotted (`math.factorial`).
_NAME = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")
ENUM_MATCHES = ("exact", "casefold")


class ToolArgumentError(ValueError):
    """A call's arguments do not match the tool's schema."""


class ToolUnavailable(RuntimeError):
    """The tool's infrastructure failed (a sandbox or server down), not the agent's call. ToolEnv lets it
    propagate instead of showing it to the agent, so a broken machine never becomes a reward of 0."""


@dataclasses.dataclass
class Tool:
    """A callable the agent may use.

    name: what the model calls (``search``; for tag calls also the tag, ``<search>...</search>``).
    description: one or two sentences the model reads to decide when to call it.
    parameters: JSON schema of the arguments, ``{"type": "object", "properties": ..., "required": [...]}``.
    function: called with the arguments as keywords; may be ``async def``. Its return value is turned into
        text (strings as they are, anything else as JSON).
    tag_argument: the argument that the text between ``<name>`` and ``</name>`` fills in tag calls
        (default: the only required argument). ``None`` when the tool has no single text argument.
    result_tag: tag calls get their result wrapped in ``<result_tag>...</result_tag>`` (Search-R1 uses
        ``information``); function calls get the bare result in a ``tool`` message.
    enum_match: how a string argument is compared with an ``enum``: ``"exact"``, or ``"casefold"`` (BFCL's
        checker compares strings case-insensitively, so ``"celsius"`` is the enum's ``"Celsius"``).

    Arguments are validated at every depth: ``properties``, ``required`` and ``additionalProperties`` of nested
    objects, ``items`` of arrays, types, ``enum`` and bounds.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    tag_argument: str | None = None
    result_tag: str = "result"
    enum_match: str = "exact"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(
                f"a tool name must be letters, digits, '_' or '-', in parts joined by '.', got {self.name!r}"
            )
        if self.enum_match not in ENUM_MATCHES:
            raise ValueError(f"enum_match must be one of {', '.join(ENUM_MATCHES)}, got {self.enum_match!r}")
        if self.parameters.get("type") != "object":
            raise ValueError(
                f'tool {self.name!r}: parameters must be a JSON schema with "type": "object", got {self.parameters!r}'
            )
        if not callable(self.function):
            raise TypeError(f"tool {self.name!r}: function must be callable, got {type(self.function).__name__}")
        if self.tag_argument is None:
            required = self.parameters.get("required", [])
            if len(required) == 1:
                self.tag_argument = required[0]
        if self.tag_argument is not None and self.tag_argument not in self.parameters.get("properties", {}):
            raise ValueError(f"tool {self.name!r}: tag_argument {self.tag_argument!r} is not one of its parameters")

    @classmethod
    def from_function(
        cls, function: Callable[..., Any], *, name: str | None = None, description: str | None = None, **options: Any
    ) -> Tool:
        """A tool whose schema comes from ``function``'s signature (str/int/float/bool/list/dict hints) and whose
        description is the first paragraph of its docstring."""
        signature = inspect.signature(function)
        hints = _type_hints(function)
        properties: dict[str, Any] = {}
        required = []
        for parameter in signature.parameters.values():
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                continue
            hint = hints.get(parameter.name, str)
            if hint not in _PYTHON_TYPES:
                raise TypeError(
                    f"{function.__name__}: parameter {parameter.name!r} has type {hint!r}; tools accept "
                    f"{', '.join(t.__name__ for t in _PYTHON_TYPES)}"
                )
            properties[parameter.name] = {"type": _PYTHON_TYPES[hint]}
            if parameter.default is parameter.empty:
                required.append(parameter.name)
        doc = inspect.getdoc(function) or ""
        return cls(
            name=name or function.__name__,
            description=description if description is not None else doc.split("\n\n")[0].replace("\n", " "),
            parameters={"type": "object", "properties": properties, "required": required},
            function=function,
            **options,
        )

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI ``tools`` entry (what chat templates with tool support render)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, arguments: Any) -> dict[str, Any]:
        """The arguments if they match the schema; raises :class:`ToolArgumentError` saying what is wrong."""
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError(f"{self.name}: arguments must be a JSON object, got {type(arguments).__name__}")
        _check_object(
            f"{self.name}:", "argument", arguments, self.parameters, self.enum_match, signature=self._signature()
        )
        return dict(arguments)

    async def acall(self, arguments: Mapping[str, Any]) -> str:
        """Validate and run the tool (awaiting it if async, in a worker thread if sync); returns its text."""
        arguments = self.validate(arguments)
        if inspect.iscoroutinefunction(self.function):
            result = await self.function(**arguments)
        else:
            result = await asyncio.to_thread(self.function, **arguments)
        return result_text(result)

    def call(self, arguments: Mapping[str, Any]) -> str:
        """Validate and run the tool synchronously; returns its text."""
        arguments = self.validate(arguments)
        result = self.function(**arguments)
        if inspect.isawaitable(result):
            result = _run_coroutine(result)
        return result_text(result)

    def _signature(self) -> str:
        properties = self.parameters.get("properties", {})
        return "{" + ", ".join(f'"{key}": {spec.get("type", "any")}' for key, spec in properties.items()) + "}"


def result_text(result: Any) -> str:
    """What the model reads back from a tool's return value."""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)


def render_tools_prompt(
    tools: Sequence[Tool], *, tags: bool, answer_format: str | None = "<answer>...</answer>"
) -> str:
    """Describe ``tools`` for the system prompt: tag syntax (``<search>query</search>``) when ``tags`` (for
    the tools with one text argument), else, and for the rest, the Hermes/Qwen JSON format
    (``<tool_call>{"name": ..., "arguments": ...}</tool_call>``); then how to give the final answer."""
    tagged = [tool for tool in tools if tags and tool.tag_argument is not None]
    rest = [tool for tool in tools if tool not in tagged]
    sections = []
    if tagged:
        lines = ["You can use these tools by writing a tag; the result comes back in the next message."]
        lines += [f"- <{tool.name}>{tool.tag_argument}</{tool.name}>: {tool.description}" for tool in tagged]
        sections.append("\n".join(lines))
    if rest:
        schemas = "\n".join(json.dumps(tool.openai_schema(), ensure_ascii=False) for tool in rest)
        sections.append(
            "You may call one or more functions. The function signatures are:\n<tools>\n" + schemas + "\n</tools>\n"
            "For each call, write a JSON object with the function name and arguments inside "
            "<tool_call></tool_call> tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        )
    if answer_format:
        sections.append(f"When you are done, give the final answer as {answer_format}.")
    return "\n\n".join(sections)


def _check_object(
    where: str, noun: str, value: Mapping[str, Any], schema: Mapping[str, Any], enum_match: str, signature: str = ""
) -> None:
    """Required, unknown (when the schema lists properties or forbids others) and each property's value."""
    properties = schema.get("properties") or {}
    expected = f"; expected {signature}" if signature else ""
    missing = [key for key in schema.get("required", []) if key not in value]
    if missing:
        raise ToolArgumentError(f"{where} missing required {noun}(s) {', '.join(missing)}{expected}")
    if schema.get("additionalProperties") is False or properties:
        unknown = [key for key in value if key not in properties]
        if unknown and schema.get("additionalProperties") is not True:
            raise ToolArgumentError(f"{where} unknown {noun}(s) {', '.join(map(str, unknown))}{expected}")
    for key, item in value.items():
        _check_value(f"{where} {noun} {key!r}", item, properties.get(key, {}), enum_match)


def _check_value(where: str, value: Any, schema: Mapping[str, Any], enum_match: str = "exact") -> None:
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        types = tuple(t for name in names for t in _JSON_TYPES.get(name, (object,)))
        is_bool = isinstance(value, bool)
        ok = isinstance(value, types) and not (is_bool and "boolean" not in names)
        if not ok:
            raise ToolArgumentError(f"{where} must be {' or '.join(names)}, got {type(value).__name__} {_show(value)}")
    if "enum" in schema and not _in_enum(value, schema["enum"], enum_match):
        raise ToolArgumentError(f"{where} must be one of {schema['enum']}, got {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):  # Python's json reads NaN/Infinity; JSON has none
        raise ToolArgumentError(f"{where} must be a finite number, got {value}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolArgumentError(f"{where} must be >= {schema['minimum']}, got {_show(value)}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolArgumentError(f"{where} must be <= {schema['maximum']}, got {_show(value)}")
    if isinstance(value, (list, tuple)) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _check_value(f"{where}[{i}]", item, schema["items"], enum_match)
    if isinstance(value, Mapping) and (schema.get("properties") or schema.get("required")):
        _check_object(where, "key", value, schema, enum_match)


def _in_enum(value: Any, options: Sequence[Any], enum_match: str) -> bool:
    if value in options:
        return True
    if enum_match == "casefold" and isinstance(value, str):
        folded = value.casefold()
        return any(isinstance(option, str) and option.casefold() == folded for option in options)
    return False


def _show(value: Any, limit: int = 80) -> str:
    """A bounded echo of an argument; ints too long for ``repr`` (Python refuses over 4,300 digits) say so."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4000:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    return f"{value!r:.{limit}}"


def _type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    import typing

    try:
        return typing.get_type_hints(function)
    except Exception:  # unresolvable forward references: fall back to str arguments
        return {}


def _run_coroutine(awaitable: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    raise RuntimeError(
        "an async tool was called synchronously inside a running event loop; use `await tool.acall(...)`"
    )


async def _await(awaitable: Any) -> Any:
    return await awaitable

"""Finding tool calls and the final answer in an assistant turn.

The call formats of the major open model families are read (``formats=`` picks them; names in
:data:`CALL_FORMATS`):

- ``tag``: ``<search>query</search>``, ``<python>code</python>`` (any registered tool name is a tag; envgym's
  own prompts);
- ``hermes`` (Hermes, Qwen2.5/3, SmolLM3): ``<tool_call>{"name": "search", "arguments": {...}}</tool_call>``;
- ``llama`` (Llama 3.1-3.3): the whole message is ``{"name": ..., "parameters": {...}}`` (several separated by
  ``;``), optionally after ``<|python_tag|>``;
- ``mistral``: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}]`` (v3) or ``[TOOL_CALLS]name[ARGS]{...}``
  (tokenizer v11+);
- ``pythonic`` (Llama 3.2/4, ToolACE): the whole message is ``[get_weather(city="SF"), search(q="x")]``. It is
  read with :mod:`ast` and never evaluated: each keyword value must be a literal (``ast.literal_eval``).
- OpenAI: an assistant message dict with ``tool_calls: [{"id", "type": "function", "function": {"name",
  "arguments": "<json string>"}}]`` is always read (from those calls alone).

Every format but ``pythonic`` is tried by default (:data:`DEFAULT_FORMATS`): their markers or shapes do not
occur in plain answers, while a list of calls is valid Python that a code task may take as its answer. Text
formats are found in the order they appear in the turn, except that ``llama`` and ``pythonic`` claim the
whole message. The final answer is ``<answer>...</answer>``. A call that cannot be read (bad JSON, no name, a
non-literal argument) is kept as a :class:`ToolCall` with ``error`` set, so the env can answer it with an
observation that explains the format; reading never raises on a policy's text.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Collection
from typing import Any

from envgym.core import Action, action_text

# A body holds no other opening or closing tag of its kind: linear time on floods of unclosed tags (a lazy .*?
# rescans the rest of the text from every opening tag: 12 s for 100 KB), and nested tags give the innermost body.
ANSWER = re.compile(r"<answer>((?:(?!</?answer>).)*)</answer>", re.DOTALL)
HERMES = re.compile(r"<tool_call>((?:(?!</?tool_call>).)*)</tool_call>", re.DOTALL)
CALL_FORMATS = ("tag", "hermes", "llama", "mistral", "pythonic")
DEFAULT_FORMATS = ("tag", "hermes", "llama", "mistral")
LLAMA_TAG = "<|python_tag|>"
MISTRAL_TAG = "[TOOL_CALLS]"
MISTRAL_ARGS = "[ARGS]"
# Special tokens that may close a turn when the policy's text is decoded with them (Llama's end of message/turn,
# Mistral's end of sequence, Llama 4's end of a pythonic block).
_TURN_ENDS = ("<|eom_id|>", "<|eot_id|>", "</s>", "<|python_end|>")
_LLAMA_START = re.compile(r'\{\s*"name"\s*:')
_PYTHONIC_START = re.compile(r"\[\s*[A-Za-z_][\w.]*\s*\(")
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")


@dataclasses.dataclass
class ToolCall:
    """One call found in a turn. ``format`` is one of :data:`CALL_FORMATS` or ``openai``; ``id`` links the
    result message to the call (OpenAI and Mistral ids are kept, others are numbered ``call_<turn-position>``).

    A turn with OpenAI ``tool_calls`` is read from those alone (servers may leave the calls' text in
    ``content`` too, and a call must not run twice)."""

    name: str
    arguments: dict[str, Any]
    id: str
    format: str
    error: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The call as an entry of an assistant message's ``tool_calls``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }


@dataclasses.dataclass
class ParsedTurn:
    """What a turn asks for: tool calls in order, and the final answer (``None`` if none was given)."""

    calls: list[ToolCall]
    answer: str | None
    answer_first: bool
    """Whether ``<answer>`` came before every tool call (the turn is final, the calls are ignored)."""


def parse_turn(
    action: Action,
    tag_tools: Collection[str] = (),
    *,
    tag_arguments: dict[str, str] | None = None,
    formats: Collection[str] | None = None,
) -> ParsedTurn:
    """Find the tool calls and final answer in ``action``.

    ``tag_tools`` are the tool names accepted as tags; ``tag_arguments`` maps each to the argument that the
    tag's text fills (default ``"input"``). ``formats``: the text formats to read (default
    :data:`DEFAULT_FORMATS`); an unknown name raises ``ValueError``.
    """
    formats = check_formats(formats)
    text = action_text(action)
    answer_match = ANSWER.search(text)
    answer = answer_match.group(1).strip() if answer_match else None
    if isinstance(action, dict) and action.get("tool_calls"):
        # A server that parsed the calls may also leave their text in `content`; the structured calls win.
        calls = [_parse_openai(call, position) for position, call in enumerate(action["tool_calls"])]
        return ParsedTurn(calls=calls, answer=answer, answer_first=False)
    found = _find_calls(text, formats, tag_tools, tag_arguments or {})
    found.sort(key=lambda item: item[0])
    calls = [call for _, call in found]
    for position, call in enumerate(calls):  # ids follow the order of the calls in the text
        call.id = call.id or f"call_{position}"
    first_call = min((start for start, _ in found), default=None)
    answer_first = answer_match is not None and (first_call is None or answer_match.start() < first_call)
    return ParsedTurn(calls=calls, answer=answer, answer_first=answer_first)


def check_formats(formats: Collection[str] | None) -> tuple[str, ...]:
    """``formats`` as a tuple (``None``: :data:`DEFAULT_FORMATS`), or a ``ValueError`` naming the accepted ones."""
    if formats is None:
        return DEFAULT_FORMATS
    if isinstance(formats, str):
        formats = (formats,)
    unknown = [name for name in formats if name not in CALL_FORMATS]
    if unknown:
        raise ValueError(f"unknown tool-call formats {unknown}; accepted: {', '.join(CALL_FORMATS)}")
    return tuple(formats)


def _find_calls(
    text: str, formats: tuple[str, ...], tag_tools: Collection[str], tag_arguments: dict[str, str]
) -> list[tuple[int, ToolCall]]:
    """Every call in ``text`` with the position where it starts."""
    start = len(text) - len(text.lstrip())
    for name, reader in (("llama", _llama_calls), ("pythonic", _pythonic_calls)):
        whole = reader(text.strip()) if name in formats else None
        if whole is not None:  # the whole message is this format's calls: no other format is looked for in it
            return [(start, call) for call in whole]
    found: list[tuple[int, ToolCall]] = []
    if "hermes" in formats:
        for match in HERMES.finditer(text):
            found.append((match.start(), _json_call(match.group(1), "hermes", "inside <tool_call>")))
    if "tag" in formats and tag_tools:
        names = "|".join(re.escape(name) for name in tag_tools)
        for match in re.finditer(rf"<({names})>((?:(?!</?\1>).)*)</\1>", text, re.DOTALL):
            name = match.group(1)
            argument = tag_arguments.get(name, "input")
            found.append((match.start(), ToolCall(name, {argument: match.group(2).strip()}, "", "tag")))
    if "mistral" in formats:
        found.extend(_mistral_calls(text))
    return found


def _parse_openai(call: Any, position: int) -> ToolCall:
    call_id = f"call_{position}"
    if not isinstance(call, dict):
        return ToolCall(
            "", {}, call_id, "openai", error=f"a tool_calls entry must be an object, got {type(call).__name__}"
        )
    call_id = str(call.get("id") or call_id)
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return ToolCall(
            "",
            {},
            call_id,
            "openai",
            error='a tool_calls entry needs "function": {"name": str, "arguments": JSON string or object}',
        )
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError) as error:  # bad JSON, an int too long, nesting too deep
            return ToolCall(
                function["name"], {}, call_id, "openai", error=f"arguments are not valid JSON: {str(error)[:200]}"
            )
    if not isinstance(arguments, dict):
        return ToolCall(
            function["name"],
            {},
            call_id,
            "openai",
            error=f"arguments must be a JSON object, got {type(arguments).__name__}",
        )
    return ToolCall(function["name"], arguments, call_id, "openai")


def _json_call(body: str, format: str, where: str) -> ToolCall:
    """A call from JSON text ``body`` (``where`` says where the text was, for the error message)."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, an int too long to convert, nesting too deep
        reason = f"{type(error).__name__}: {str(error)[:200]}"
        return ToolCall(
            "",
            {},
            "",
            format,
            error=f'the text {where} is not valid JSON ({reason}); write {{"name": ..., "arguments": {{...}}}}',
        )
    return _call_from_payload(payload, format, where)


def _call_from_payload(payload: Any, format: str, where: str) -> ToolCall:
    """A call from a decoded JSON value: ``{"name": str, "arguments" (or "parameters"): object}``."""
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return ToolCall(
            "",
            {},
            "",
            format,
            error=f'a call {where} needs a JSON object with a "name" string and an "arguments" object',
        )
    arguments = payload.get("arguments", payload.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            pass
    if not isinstance(arguments, dict):
        return ToolCall(
            payload["name"], {}, "", format, error=f'"arguments" must be a JSON object, got {type(arguments).__name__}'
        )
    call_id = payload.get("id") if format == "mistral" and isinstance(payload.get("id"), str) else ""
    return ToolCall(payload["name"], arguments, call_id, format)


def _strip_turn_end(body: str) -> str:
    for end in _TURN_ENDS:
        body = body.removesuffix(end).rstrip()
    return body


def _json_values(body: str) -> tuple[list[Any], str | None]:
    """The JSON values in ``body``, separated by whitespace or ``;``, and the error that stopped the reading.
    Each value is decoded once from where the last one ended: linear time."""
    decoder, values, position = json.JSONDecoder(), [], 0
    while True:
        while position < len(body) and body[position] in " \t\r\n;":
            position += 1
        if position == len(body):
            return values, None
        try:
            value, position = decoder.raw_decode(body, position)
        except (ValueError, RecursionError) as error:  # bad JSON, an int too long, nesting too deep
            return values, f"{type(error).__name__}: {str(error)[:200]}"
        values.append(value)


def _llama_calls(text: str) -> list[ToolCall] | None:
    """Llama 3.x JSON calls, or ``None`` when ``text`` is not one: without ``<|python_tag|>`` only a message
    made of call objects (``"name"`` and ``"parameters"``) is a call, so a JSON answer stays an answer."""
    marked = text.startswith(LLAMA_TAG)
    body = _strip_turn_end(text[len(LLAMA_TAG) :].strip() if marked else text)
    if not marked and not _LLAMA_START.match(body):
        return None
    values, error = _json_values(body)
    where = "after <|python_tag|>" if marked else "of a JSON function call"
    if error is not None:
        return [
            ToolCall(
                "",
                {},
                "",
                "llama",
                error=f'the text {where} is not valid JSON ({error}); write {{"name": ..., "parameters": {{...}}}}',
            )
        ]
    if not marked and not all(
        isinstance(v, dict) and "name" in v and set(v) <= {"name", "parameters", "arguments", "type"} for v in values
    ):
        return None
    return [_call_from_payload(value, "llama", where) for value in values] or None


def _mistral_calls(text: str) -> list[tuple[int, ToolCall]]:
    """Mistral calls: each ``[TOOL_CALLS]`` marker opens a body that runs to the next one (linear time)."""
    starts, position = [], text.find(MISTRAL_TAG)
    while position != -1:
        starts.append(position)
        position = text.find(MISTRAL_TAG, position + len(MISTRAL_TAG))
    found = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        body = _strip_turn_end(text[start + len(MISTRAL_TAG) : end].strip())
        found.extend((start, call) for call in _mistral_body(body))
    return found


def _mistral_body(body: str) -> list[ToolCall]:
    where = "after [TOOL_CALLS]"
    if body.startswith("["):  # v3: a JSON list of {"name", "arguments", "id"}
        try:
            payload, _ = json.JSONDecoder().raw_decode(body)
        except (ValueError, RecursionError) as error:
            return [
                ToolCall(
                    "",
                    {},
                    "",
                    "mistral",
                    error=f"the text {where} is not a valid JSON list ({str(error)[:200]}); "
                    'write [TOOL_CALLS][{"name": ..., "arguments": {...}}]',
                )
            ]
        if not isinstance(payload, list) or not payload:
            return [ToolCall("", {}, "", "mistral", error=f"the list {where} holds no call")]
        return [_call_from_payload(item, "mistral", where) for item in payload]
    name, separator, arguments = body.partition(MISTRAL_ARGS)
    name = name.strip()
    if not separator or not _NAME.fullmatch(name):
        return [
            ToolCall(
                "",
                {},
                "",
                "mistral",
                error=f"write [TOOL_CALLS]name[ARGS]{{json arguments}} or "
                f'[TOOL_CALLS][{{"name": ..., "arguments": {{...}}}}] (got {body[:80]!r})',
            )
        ]
    values, error = _json_values(arguments)
    if error is not None or len(values) != 1 or not isinstance(values[0], dict):
        reason = error or f"{len(values)} JSON values"
        return [
            ToolCall(name, {}, "", "mistral", error=f"the arguments after [ARGS] must be one JSON object ({reason})")
        ]
    return [ToolCall(name, values[0], "", "mistral")]


def _pythonic_calls(text: str) -> list[ToolCall] | None:
    """Pythonic calls, or ``None`` when ``text`` is not a list that starts with a call. Parsed with ``ast``;
    nothing is evaluated: each argument is read with ``ast.literal_eval``."""
    body = _strip_turn_end(text.removeprefix("<|python_start|>").strip())
    if not _PYTHONIC_START.match(body):
        return None
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:  # nesting beyond the parser's limits
        reason = getattr(error, "msg", None) or type(error).__name__
        return [
            ToolCall(
                "",
                {},
                "",
                "pythonic",
                error=f"the calls are not a Python list of calls ({reason}); write [name(argument=literal, ...), ...]",
            )
        ]
    if not isinstance(tree.body, ast.List):
        return [
            ToolCall("", {}, "", "pythonic", error="write the calls as one Python list: [name(argument=literal, ...)]")
        ]
    return [_pythonic_call(element) for element in tree.body.elts]


def _pythonic_call(node: ast.expr) -> ToolCall:
    name = _dotted_name(node.func) if isinstance(node, ast.Call) else None
    if name is None:
        return ToolCall(
            "", {}, "", "pythonic", error="each list item must be a call of a tool by name: name(argument=literal)"
        )
    if node.args or any(keyword.arg is None for keyword in node.keywords):
        return ToolCall(
            name,
            {},
            "",
            "pythonic",
            error="pass every argument by keyword (name(argument=literal)), not by position or **",
        )
    arguments = {}
    for keyword in node.keywords:
        try:
            value = ast.literal_eval(keyword.value)
            json.dumps(value, allow_nan=False)  # what a tool receives must be JSON, as in every other format
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return ToolCall(
                name,
                {},
                "",
                "pythonic",
                error=f"argument {keyword.arg!r} is not a JSON-like literal "
                "(a string, number, bool, None, list or dict)",
            )
        arguments[keyword.arg] = list(value) if isinstance(value, tuple) else value
    return ToolCall(name, arguments, "", "pythonic")


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        parent = _dotted_name(node.value)
        return None if parent is None else f"{parent}.{node.attr}"
    return None

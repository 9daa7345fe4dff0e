"""Finding tool calls and the final answer in an assistant turn.

Three call formats are read, in the order they appear in the turn:

- tags: ``<search>query</search>``, ``<python>code</python>`` (any registered tool name is a tag);
- Hermes/Qwen JSON: ``<tool_call>{"name": "search", "arguments": {"query": "..."}}</tool_call>``;
- OpenAI: an assistant message dict with ``tool_calls: [{"id", "type": "function", "function": {"name",
  "arguments": "<json string>"}}]``.

The final answer is ``<answer>...</answer>``. A call that cannot be read (bad JSON, no name) is kept as a
:class:`ToolCall` with ``error`` set, so the env can answer it with an observation that explains the format.
"""

from __future__ import annotations

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


@dataclasses.dataclass
class ToolCall:
    """One call found in a turn. ``format`` is ``tag``, ``hermes`` or ``openai``; ``id`` links the result
    message to the call (OpenAI ids are kept, others are numbered ``call_<turn-position>``).

    A turn with OpenAI ``tool_calls`` is read from those alone (servers may leave the calls' text in
    ``content`` too, and a call must not run twice)."""

    name: str
    arguments: dict[str, Any]
    id: str
    format: str
    error: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The call as an entry of an assistant message's ``tool_calls``."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)}}


@dataclasses.dataclass
class ParsedTurn:
    """What a turn asks for: tool calls in order, and the final answer (``None`` if none was given)."""

    calls: list[ToolCall]
    answer: str | None
    answer_first: bool
    """Whether ``<answer>`` came before every tool call (the turn is final, the calls are ignored)."""


def parse_turn(action: Action, tag_tools: Collection[str] = (), *, tag_arguments: dict[str, str] | None = None) -> ParsedTurn:
    """Find the tool calls and final answer in ``action``.

    ``tag_tools`` are the tool names accepted as tags; ``tag_arguments`` maps each to the argument that the
    tag's text fills (default ``"input"``).
    """
    text = action_text(action)
    found: list[tuple[int, ToolCall]] = []
    if isinstance(action, dict) and action.get("tool_calls"):
        # A server that parsed the calls may also leave their text in `content`; the structured calls win.
        calls = [_parse_openai(call, position) for position, call in enumerate(action["tool_calls"])]
        answer_match = ANSWER.search(text)
        return ParsedTurn(calls=calls, answer=answer_match.group(1).strip() if answer_match else None, answer_first=False)
    for match in HERMES.finditer(text):
        found.append((match.start(), _parse_json_call(match.group(1), "", "hermes")))
    if tag_tools:
        names = "|".join(re.escape(name) for name in tag_tools)
        for match in re.finditer(rf"<({names})>((?:(?!</?\1>).)*)</\1>", text, re.DOTALL):
            name = match.group(1)
            argument = (tag_arguments or {}).get(name, "input")
            found.append((match.start(), ToolCall(name, {argument: match.group(2).strip()}, "", "tag")))
    found.sort(key=lambda item: item[0])
    calls = [call for _, call in found]
    for position, call in enumerate(calls):  # ids follow the order of the calls in the text
        call.id = f"call_{position}"
    answer_match = ANSWER.search(text)
    answer = answer_match.group(1).strip() if answer_match else None
    first_call = min((start for start, _ in found), default=None)
    answer_first = answer_match is not None and (first_call is None or answer_match.start() < first_call)
    return ParsedTurn(calls=calls, answer=answer, answer_first=answer_first)


def _parse_openai(call: Any, position: int) -> ToolCall:
    call_id = f"call_{position}"
    if not isinstance(call, dict):
        return ToolCall("", {}, call_id, "openai", error=f"a tool_calls entry must be an object, got {type(call).__name__}")
    call_id = str(call.get("id") or call_id)
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return ToolCall("", {}, call_id, "openai",
                        error='a tool_calls entry needs "function": {"name": str, "arguments": JSON string or object}')
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as error:
            return ToolCall(function["name"], {}, call_id, "openai", error=f"arguments are not valid JSON: {error}")
    if not isinstance(arguments, dict):
        return ToolCall(function["name"], {}, call_id, "openai", error=f"arguments must be a JSON object, got {type(arguments).__name__}")
    return ToolCall(function["name"], arguments, call_id, "openai")


def _parse_json_call(body: str, call_id: str, format: str) -> ToolCall:
    try:
        payload = json.loads(body)
    except json.JSONDecodeError as error:
        return ToolCall("", {}, call_id, format,
                        error=f'the text inside <tool_call> is not valid JSON ({error}); write {{"name": ..., "arguments": {{...}}}}')
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return ToolCall("", {}, call_id, format, error='a <tool_call> needs a JSON object with a "name" string and an "arguments" object')
    arguments = payload.get("arguments", payload.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            pass
    if not isinstance(arguments, dict):
        return ToolCall(payload["name"], {}, call_id, format, error=f'"arguments" must be a JSON object, got {type(arguments).__name__}')
    return ToolCall(payload["name"], arguments, call_id, format)

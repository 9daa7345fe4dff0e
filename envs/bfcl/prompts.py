"""What the model reads and how its answer is read: BFCL's default system prompt and call decoding.

``prompt_format="bfcl"``: BFCL's default system prompt for prompting (non-function-calling) models, built from
its own templates (``bfcl_eval.constants.default_prompts``, plain text, classic style, functions as indented
JSON, calls as a Python list ``[func(a=1), other(b="x")]``), exactly as BFCL's ``formulate_system_prompt`` builds
it with its default configuration. ``prompt_format=None``: no such prompt; the tools are in ``info["tools"]`` as
OpenAI schemas for the agent's chat template (dotted names kept).

Answers are read the way BFCL reads a prompting model's text (strip backticks, newlines and spaces, add the list
brackets if missing, parse as Python: a bare ``func(a=1)`` is a call too), and failing that in every other
format envgym reads (Hermes ``<tool_call>``, Llama JSON, Mistral, OpenAI ``tool_calls``).
"""

from __future__ import annotations

import json
import keyword
from typing import Any

from envgym.core import Action, Message, action_text
from envgym.tools import ToolCall, parse_turn
from envgym.tools.parsing import DEFAULT_FORMATS
from envgym.verifiers.calls import function_schema

PROMPT_FORMATS = ("bfcl", None)


def system_prompt(functions: list[dict[str, Any]]) -> str:
    """BFCL's default system prompt (``DEFAULT_SYSTEM_PROMPT_FORMAT``) for these function docs."""
    from bfcl_eval.constants.default_prompts import (
        OUTPUT_FORMAT_MAPPING,
        PARAM_TYPE_MAPPING,
        PROMPT_STYLE_TEMPLATES,
        PROMPT_TEMPLATE_MAPPING,
    )

    style = PROMPT_STYLE_TEMPLATES["classic"]
    return PROMPT_TEMPLATE_MAPPING["plaintext"].format(
        persona=style["persona"],
        task=style["task"],
        tool_call_format=style["tool_call_no_tag"].format(
            output_format=OUTPUT_FORMAT_MAPPING["python"], param_types=PARAM_TYPE_MAPPING["python"]
        ),
        multiturn_behavior=style["multiturn_behavior"],
        available_tools=style["available_tools"].format(format="json", functions=json.dumps(functions, indent=4)),
    )


def added_functions_message(functions: list[dict[str, Any]], prompt_format: str | None) -> str:
    """The user message of a ``miss_func`` turn where the held-out functions arrive (BFCL's wording)."""
    from bfcl_eval.constants.default_prompts import (
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING,
    )

    if prompt_format == "bfcl":
        return DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(functions=functions)
    return DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC


def first_messages(
    question: list[Message], functions: list[dict[str, Any]], prompt_format: str | None
) -> list[Message]:
    """The opening messages: with the BFCL prompt, it goes first (before a system message the entry has)."""
    messages = [dict(message) for message in question]
    if prompt_format != "bfcl":
        return messages
    prompt = system_prompt(functions)
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = prompt + "\n\n" + str(messages[0].get("content") or "")
        return messages
    return [{"role": "system", "content": prompt}, *messages]


def openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function docs as OpenAI ``tools`` entries (BFCL's types as JSON Schema)."""
    return [function_schema(doc, dialect="bfcl").openai() for doc in functions]


def read_calls(action: Action) -> list[ToolCall]:
    """The calls of an answer (see the module docstring); an empty list when it holds none."""
    if isinstance(action, dict) and action.get("tool_calls"):
        return parse_turn(action, formats=DEFAULT_FORMATS).calls
    text = action_text(action).strip("`\n ")
    bracketed = text if text.startswith("[") else "[" + text
    bracketed = bracketed if bracketed.endswith("]") else bracketed + "]"
    python_list = parse_turn(bracketed, formats=("pythonic",)).calls
    if python_list and not any(call.error for call in python_list):
        return python_list
    other = parse_turn(action, formats=DEFAULT_FORMATS).calls
    return other or [call for call in python_list if text.startswith("[")]


def calls_action(calls: list[tuple[str, dict[str, Any]]], prompt_format: str | None) -> Action:
    """``calls`` written as the prompt asks: a Python list with the BFCL prompt, OpenAI ``tool_calls`` without.
    An argument named like a Python keyword (``from=``: some JavaScript functions have one) cannot be written in
    the Python form, so such calls go out as ``tool_calls`` either way."""
    if prompt_format == "bfcl" and all(_python_writable(arguments) for _, arguments in calls):
        return "[" + ", ".join(f"{name}({_python_arguments(arguments)})" for name, arguments in calls) + "]"
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(calls)
        ],
    }


def _python_writable(arguments: dict[str, Any]) -> bool:
    return all(key.isidentifier() and not keyword.iskeyword(key) for key in arguments)


def _python_arguments(arguments: dict[str, Any]) -> str:
    """``key=literal, ...``: every value is JSON data, so ``repr`` is a Python literal that reads back."""
    return ", ".join(f"{key}={value!r}" for key, value in arguments.items())

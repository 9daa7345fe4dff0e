"""The pieces every strategy module shares: what a strategy is, the answer formats a prompt asks for, and the
constant policy most strategies play."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from envgym.core import Action, Message

GUESS = "guess"
ATTACK = "attack"
TAG = re.compile(r"<([A-Za-z_][\w-]{0,30})>")
# Tags a prompt shows that are not answer formats (tool listings, reasoning), and answer tags, likeliest first.
LISTING_TAGS = {"tools", "tool_call", "tool_response", "tool_result", "think"}
PREFERRED_TAGS = ("answer", "guess", "move", "pull", "final")


@dataclasses.dataclass(frozen=True)
class Format:
    """One way the prompt asks for an answer: ``wrap(answer) -> text``."""

    name: str
    wrap: Callable[[str], str]


@dataclasses.dataclass(frozen=True)
class Strategy:
    """A policy the audit plays to the end of an episode.

    ``answer``: the text inside the format (compared with the reference answer, so a guess that *is* the gold
    answer is not counted against the env). ``like``: names of guesses this strategy is no better than.
    ``marker``: the file that exists only if the strategy's text was executed on this machine.
    """

    name: str
    kind: str
    act: Callable[[list[Message]], Action | None]
    answer: str | None = None
    like: tuple[str, ...] = ()
    marker: str | None = None


def constant(action: Action) -> Callable[[list[Message]], Action]:
    """A policy that gives ``action`` every turn."""
    return lambda history: action


def openai_calls(calls: list[tuple[str, Any]]) -> Action:
    """An assistant message with OpenAI ``tool_calls``: ``(name, arguments)`` pairs, arguments as given (a JSON
    string, or anything else to see how the env copes)."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in enumerate(calls)
        ],
    }

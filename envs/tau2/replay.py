"""Replaying a plan of τ² actions: the agent's next reference action and the replay user's script.

A :class:`Plan` is an ordered list of τ² actions, each made by the agent (``assistant``) or by the user on their
own device (telecom), plus what the agent must tell the user. A task's gold plan is its evaluation criteria; a
test changes a plan (a wrong argument, a missing action, an extra write) and plays it the same way.

Played with a :class:`~envgym.users.ReplayUser` whose script is :meth:`Plan.user_script`: the agent runs its
actions as tool calls and asks for each user action by naming it (``Please do this on your phone:
toggle_airplane_mode().``); the user runs an action only when the agent's message names it and no other user
tool (as τ²'s user guidelines say, one action at a time), answers ``Done.``, and ends the conversation once its
script is out. Solo (telecom), the agent runs every action itself and ends with the ``done`` tool.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from tau2.data_model.message import AssistantMessage, UserMessage
from tau2.data_model.message import Message as Tau2Message
from tau2.data_model.tasks import Action as Tau2Action
from tau2.data_model.tasks import StructuredUserInstructions
from tau2.data_model.tasks import Task as Tau2Task
from tau2.user.base import STOP, TRANSFER

from envgym.tools import ToolCall
from envgym.users import UserTurn

TRANSFER_TOOL = "transfer_to_human_agents"


@dataclasses.dataclass(frozen=True)
class Plan:
    """The actions to make, in order, and the information the agent must tell the user."""

    actions: tuple[Tau2Action, ...]
    communicate: tuple[str, ...] = ()
    opening: str = "Hi, I need some help."

    @classmethod
    def of(cls, task: Tau2Task) -> Plan:
        """The task's gold plan: its evaluation criteria's actions and information to communicate."""
        criteria = task.evaluation_criteria
        actions = tuple(criteria.actions or []) if criteria is not None else ()
        communicate = tuple(criteria.communicate_info or []) if criteria is not None else ()
        return cls(actions, communicate, opening(task))

    def progress(self, trajectory: Sequence[Tau2Message]) -> int:
        """How many of the plan's actions the trajectory has made, in order (name and arguments, whoever made
        them: a solo agent makes the user's actions too)."""
        done = 0
        for message in trajectory:
            if not isinstance(message, (AssistantMessage, UserMessage)) or not message.tool_calls:
                continue
            for call in message.tool_calls:
                if done < len(self.actions) and _same(self.actions[done], call.name, call.arguments):
                    done += 1
        return done

    def next_action(self, done: int, *, solo: bool, max_calls: int) -> str | dict[str, Any]:
        """The agent's turn after ``done`` actions: the next run of its own actions as OpenAI tool calls, a
        message asking the user for the next user action, or the closing turn (the information to communicate,
        or solo the ``done`` tool)."""
        if done < len(self.actions):
            if not solo and self.actions[done].requestor == "user":
                return ask(self.actions[done])
            batch = []
            for action in self.actions[done:]:
                if len(batch) == max_calls or (not solo and action.requestor == "user"):
                    break
                batch.append(action)
            calls = [ToolCall(a.name, dict(a.arguments), f"ref_{done + i}", "openai") for i, a in enumerate(batch)]
            return {"role": "assistant", "content": None, "tool_calls": [call.to_openai() for call in calls]}
        if solo:
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [ToolCall("done", {}, "ref_done", "openai").to_openai()],
            }
        told = f" For your records: {'; '.join(self.communicate)}." if self.communicate else ""
        return f"Everything you asked for is taken care of.{told}"

    def user_script(self) -> tuple[UserTurn, ...]:
        """The replay user's turns: the opening, each user action followed by ``Done.``, then the stop token
        (``###TRANSFER###`` when the plan transfers to a human agent)."""
        script = [UserTurn(self.opening)]
        for number, action in enumerate(a for a in self.actions if a.requestor == "user"):
            call = ToolCall(action.name, dict(action.arguments), f"user_{number}", "openai")
            script += [UserTurn(tool_calls=(call,)), UserTurn("Done.")]
        token = TRANSFER if any(action.name == TRANSFER_TOOL for action in self.actions) else STOP
        return (*script, UserTurn(token, stop=True, stop_token=token))


def opening(task: Tau2Task) -> str:
    """The replay user's first message: the scenario's reason for calling and what the user knows."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, StructuredUserInstructions):
        return " ".join(part.strip() for part in (instructions.reason_for_call, instructions.known_info) if part)
    return str(instructions)


def ask(action: Tau2Action) -> str:
    """The agent's request for one user action, naming it as τ²'s ground-truth agent does."""
    return f"Please do this on your phone: {action.get_func_format()}."


def asks_for(user_tools: Sequence[str]) -> Callable[[str, UserTurn], bool]:
    """The replay user's test of whether the agent's message asks for ``turn``'s action: it names that tool and
    no other user tool (a message naming several, like a pasted manual, gets the user's nudge instead)."""
    patterns = {name: re.compile(rf"\b{re.escape(name)}\b") for name in user_tools}

    def asks(agent_text: str, turn: UserTurn) -> bool:
        named = {name for name, pattern in patterns.items() if pattern.search(agent_text)}
        return named == {turn.tool_calls[0].name}

    return asks


def _same(action: Tau2Action, name: str, arguments: dict[str, Any]) -> bool:
    return action.name == name and action.arguments == arguments

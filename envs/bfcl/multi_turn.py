"""BFCL's multi-turn categories on BFCL's own backends, checked after each turn as BFCL checks.

A task is a conversation of user turns. In each turn the policy makes steps: a step with calls runs them on the
episode's backends (:class:`~envgym.envs.bfcl.backends.Backends`) and gets one ``tool`` message per call; a step
without a call ends the turn. At most 20 steps with calls per turn (BFCL's ``MAXIMUM_STEP_LIMIT``); past that the
episode fails, as BFCL force-terminates it. At the end of each turn the turn's gold calls run on a second set of
backends (the ground truth, from the same initial state) and, where the turn has gold calls, BFCL's checks decide:

1. the turn made at least one call (``no_call``);
2. every public attribute of every backend equals the ground truth's (``state_mismatch``);
3. each result of the turn's gold calls is among the results of every call the policy made so far, counted with
   multiplicity (``result_missing``).

A failed check ends the episode with reward 0 (``info["call_failure"]``, ``info["call_failure_reason"]``,
``info["failed_turn"]``); passing every turn gives reward 1 on the last. A turn whose gold is empty (the request
cannot be done yet: a missing parameter or function) is not checked, but its calls still change the state that
later turns are checked on. In ``miss_func`` the held-out functions arrive at their turn with BFCL's message, and
``info["tools"]`` on that step lists the functions now offered. ``info["expected_calls"]`` (on the last step)
holds the gold calls of every turn, as BFCL writes them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task
from envgym.envs.bfcl import data
from envgym.envs.bfcl.backends import Backends
from envgym.envs.bfcl.prompts import (
    PROMPT_FORMATS,
    added_functions_message,
    calls_action,
    first_messages,
    openai_tools,
    read_calls,
)
from envgym.tasks import ProceduralTaskSource
from envgym.tools import ToolCall

STEP_LIMIT = 20


class BFCLMultiTurn(Env):
    """One BFCL multi-turn category (:data:`envgym.envs.bfcl.data.MULTI_TURN`); ``prompt_format`` as in
    :class:`~envgym.envs.bfcl.single_turn.BFCLSingleTurn`."""

    description = "A BFCL multi-turn category on BFCL's backends; reward 1 when every turn passes BFCL's checks."

    def __init__(self, category: str = "multi_turn_base", prompt_format: str | None = "bfcl"):
        if category not in data.MULTI_TURN:
            raise ValueError(f"unknown multi-turn BFCL category {category!r}; accepted: {', '.join(data.MULTI_TURN)}")
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format must be 'bfcl' or None, got {prompt_format!r}")
        self.category = category
        self.prompt_format = prompt_format
        self.long_context = "long_context" in category
        self._golds = data.gold_entries(category)
        self._entries = data.shared_entries(category)
        self.tasks = ProceduralTaskSource(lambda rng, index: self._build_task(index), size=len(self._entries))

    def _build_task(self, index: int) -> Task:
        entry = self._entries[index]
        return Task(
            id=entry["id"],
            messages=first_messages(entry["question"][0], entry["function"], self.prompt_format),
            answer={"gold": self._golds[entry["id"]], "entry": entry},
            metadata={"category": self.category, "source": "bfcl-eval", "turns": len(entry["question"])},
        )

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        assert task is not None
        entry = task.answer["entry"]
        self._entry, self._gold = entry, task.answer["gold"]
        config, classes = entry.get("initial_config", {}), entry["involved_classes"]
        self._backends = Backends(config, classes, long_context=self.long_context)
        self._ground_truth = Backends(config, classes, long_context=self.long_context)
        self._functions = list(entry["function"])
        self._turn, self._steps, self._turn_calls = 0, 0, 0
        self._results: list[str] = []
        return task.prompt(), {"tools": openai_tools(self._functions), "category": self.category, "turn": 0}

    def _step(self, action: Action) -> StepResult:
        calls = read_calls(action)
        readable = [call for call in calls if not call.error]
        if readable:
            return self._call_step(calls)
        return self._end_turn()

    def _call_step(self, calls: list[ToolCall]) -> StepResult:
        self._steps += 1
        if self._steps > STEP_LIMIT:
            return self._fail("step_limit", f"more than {STEP_LIMIT} steps with calls in turn {self._turn}")
        messages: list[Message] = []
        errors = []
        for call in calls:
            if call.error:
                text = f"Error: {call.error}"
                errors.append(call.error)
            else:
                text = self._backends.run(call.name, call.arguments)
                self._results.append(text)
                self._turn_calls += 1
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text})
        info = self._info()
        info["tool_calls"] = len(calls) - len(errors)
        if errors:
            info.update(action_valid=False, action_error=errors[0])
        return messages, 0.0, False, False, info

    def _end_turn(self) -> StepResult:
        gold_calls = self._gold[self._turn]
        gold_results = [self._ground_truth.run_source(call) for call in gold_calls]
        if gold_calls:
            if self._turn_calls == 0:
                return self._fail("no_call", f"turn {self._turn} made no call; expected {', '.join(gold_calls)}")
            differences = self._backends.differences(self._ground_truth)
            if differences:
                return self._fail("state_mismatch", f"after turn {self._turn}: {_describe(differences)}")
            missing = _missing(gold_results, self._results)
            if missing:
                return self._fail(
                    "result_missing",
                    f"after turn {self._turn}, no call of the policy returned {_short(missing[0])}",
                )
        self._turn += 1
        self._steps, self._turn_calls = 0, 0
        if self._turn == len(self._gold):
            info = self._info(final=True)
            info.update(correct=True, reward_components={"correct": 1.0}, call_failure=None, call_failure_reason=None)
            return [], 1.0, True, False, info
        return self._next_turn_messages()

    def _next_turn_messages(self) -> StepResult:
        messages = [dict(message) for message in self._entry["question"][self._turn]]
        added = self._entry.get("missed_function", {}).get(str(self._turn))
        info = self._info()
        if added is not None:
            self._functions.extend(added)
            messages = [{"role": "user", "content": added_functions_message(added, self.prompt_format)}]
            info["tools"] = openai_tools(self._functions)
        return messages, 0.0, False, False, info

    def _fail(self, kind: str, reason: str) -> StepResult:
        info = self._info(final=True)
        info.update(
            correct=False,
            reward_components={"correct": 0.0},
            call_failure=kind,
            call_failure_reason=f"{kind}: {reason}",
            failed_turn=self._turn,
        )
        return [], 0.0, True, False, info

    def _info(self, *, final: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {"category": self.category, "turn": self._turn}
        if final:
            info["expected_calls"] = self._gold
        return info

    def reference_action(self) -> Action | None:
        """The turn's gold calls in one step, then a step without calls that ends the turn."""
        if self.task is None or self._turn >= len(self._gold):
            return None
        gold_calls = self._gold[self._turn]
        if not gold_calls:
            return "I need more information to do that."
        if self._turn_calls:
            return "Done."
        return self._as_action([self._ground_truth.parse_source(call) for call in gold_calls])

    def wrong_action(self) -> Action | None:
        """Honest but wrong: end the turn without doing anything."""
        return "I cannot do that."

    def _as_action(self, calls: list[tuple[str, dict[str, Any]]]) -> Action:
        return calls_action(calls, self.prompt_format)


def _missing(expected: list[str], given: list[str]) -> list[str]:
    """The expected results not found among the given ones, counted with multiplicity (BFCL's response check)."""
    available = Counter(given)
    missing = []
    for result in expected:
        if available[result] > 0:
            available[result] -= 1
        else:
            missing.append(result)
    return missing


def _describe(differences: dict[str, dict[str, Any]]) -> str:
    parts = []
    for class_name, attributes in differences.items():
        for attribute, values in attributes.items():
            parts.append(
                f"{class_name}.{attribute} is {_short(values['model'])}, expected {_short(values['ground_truth'])}"
            )
    return "; ".join(parts[:3]) + (f" (and {len(parts) - 3} more)" if len(parts) > 3 else "")


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""BFCL's single-turn categories: one question, one answer of zero or more function calls, graded as BFCL does.

Reward (one step): 1 when the calls match the gold per BFCL's rules (:mod:`envgym.envs.bfcl.grading`), else 0.
``info`` on the step: ``correct``, ``reward_components`` (``{"correct": 0|1}``), ``call_failure`` (a kind of
:data:`envgym.verifiers.calls.FAILURE_KINDS`, or ``None``), ``call_failure_reason`` (a sentence), ``calls`` (what
was read: ``[{"name", "arguments"}]``), ``tool_calls`` (how many), ``expected_calls`` (BFCL's gold: ``[{name:
{parameter: [allowed values]}}]``; ``[]`` for irrelevance, ``None`` for relevance, where any call is right) and
``category``. The gold stays in ``task.answer`` (hidden) until the answer is graded.
"""

from __future__ import annotations

import json
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task
from envgym.envs.bfcl import data
from envgym.envs.bfcl.grading import grade_calls
from envgym.envs.bfcl.prompts import PROMPT_FORMATS, calls_action, first_messages, openai_tools, read_calls
from envgym.envs.bfcl.source_text import source_text
from envgym.tasks import ProceduralTaskSource
from envgym.tools import ToolCall
from envgym.verifiers.calls import GoldCall, function_schema


class BFCLSingleTurn(Env):
    """One BFCL single-turn category (``category``, see :data:`envgym.envs.bfcl.data.SINGLE_TURN`).

    prompt_format: ``"bfcl"`` (BFCL's system prompt listing the functions, calls written as a Python list) or
        ``None`` (no prompt: the agent gives ``info["tools"]`` to its chat template). Either way every call format
        is read and ``info["tools"]`` holds the functions as OpenAI schemas.
    """

    description = "A BFCL single-turn function-calling category; reward 1 when the calls match BFCL's gold."

    def __init__(self, category: str = "simple_python", prompt_format: str | None = "bfcl"):
        if category not in data.SINGLE_TURN:
            raise ValueError(f"unknown single-turn BFCL category {category!r}; accepted: {', '.join(data.SINGLE_TURN)}")
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(f"prompt_format must be 'bfcl' or None, got {prompt_format!r}")
        self.category = category
        self.prompt_format = prompt_format
        self._golds = data.gold_entries(category)
        self._shown = data.shared_entries(category)
        self._checked = data.shared_entries(category, language_hints=False)
        # Tasks are built when asked for: live_multiple has 1,053, each with its own prompt and tools.
        self.tasks = ProceduralTaskSource(lambda rng, index: self._build_task(index), size=len(self._shown))

    def _build_task(self, index: int) -> Task:
        entry = self._shown[index]
        return Task(
            id=entry["id"],
            messages=first_messages(entry["question"][0], entry["function"], self.prompt_format),
            answer={"gold": self._golds.get(entry["id"]), "functions": self._checked[index]["function"]},
            metadata={"category": self.category, "source": "bfcl-eval", "tools": openai_tools(entry["function"])},
        )

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        assert task is not None
        return task.prompt(), {"tools": task.metadata["tools"], "category": self.category}

    def _step(self, action: Action) -> StepResult:
        task = self.task
        assert task is not None
        calls = read_calls(action)
        result = grade_calls(self.category, task.answer["functions"], task.answer["gold"], calls)
        reward = 1.0 if result.ok else 0.0
        info: dict[str, Any] = {
            "correct": result.ok,
            "reward_components": {"correct": reward},
            "call_failure": None if result.ok else result.failure.kind,
            "call_failure_reason": result.reason,
            "calls": [{"name": call.name, "arguments": call.arguments} for call in calls if not call.error],
            "answer": answer_of(calls),
            "tool_calls": sum(1 for call in calls if not call.error),
            "expected_calls": self._expected(),
            "category": self.category,
        }
        if any(call.error for call in calls):
            info["action_valid"] = False
            info["action_error"] = next(call.error for call in calls if call.error)
        return [], reward, True, False, info

    def _expected(self) -> list[dict[str, Any]] | None:
        if "irrelevance" in self.category:
            return []
        gold = self.task.answer["gold"]  # type: ignore[union-attr]
        return None if gold is None else gold

    def reference_action(self) -> Action | None:
        """The gold calls (each parameter's first allowed value, optional ones left out), written as the prompt
        asks: a Python list with the BFCL prompt, OpenAI ``tool_calls`` without; no call for irrelevance."""
        if self.task is None:
            return None
        if "irrelevance" in self.category:
            return "None of the functions can be used for this request."
        functions = self.task.answer["functions"]
        gold = self.task.answer["gold"]
        if gold is None:  # relevance: any call of an offered function
            return self._as_action([(functions[0]["name"], _some_arguments(functions[0]))])
        calls = [_gold_call(entry, functions, self.category) for entry in gold]
        # A few golds no call can match (a required parameter only allowed to be absent, a parameter the schema does
        # not have; docs/bfcl.md lists them): the env knows no honest answer there.
        if not grade_calls(self.category, functions, gold, [ToolCall(n, a, "", "openai") for n, a in calls]).ok:
            return None
        return self._as_action(calls)

    def wrong_action(self) -> Action | None:
        """Honest but wrong: no call where calls are expected; for irrelevance, a call of the first function."""
        if self.task is None:
            return None
        functions = self.task.answer["functions"]
        if "irrelevance" in self.category and functions:
            return self._as_action([(functions[0]["name"], _some_arguments(functions[0]))])
        return "I cannot answer this with the functions I have."

    def _as_action(self, calls: list[tuple[str, dict[str, Any]]]) -> Action:
        return calls_action(calls, self.prompt_format)


def _gold_call(entry: dict[str, Any], functions: list[dict[str, Any]], category: str) -> tuple[str, dict[str, Any]]:
    gold = GoldCall.from_bfcl(entry)
    doc = next(doc for doc in functions if doc["name"] == gold.name)
    arguments = gold.example_arguments(function_schema(doc, dialect="bfcl"))
    syntax = data.language(category)
    if syntax != "python":
        properties = doc["parameters"]["properties"]
        arguments = {key: source_text(value, properties[key], syntax) for key, value in arguments.items()}
    return gold.name, arguments


def _some_arguments(doc: dict[str, Any]) -> dict[str, Any]:
    return {key: "x" for key in doc["parameters"].get("required", [])}


def answer_of(calls: list[Any]) -> str:
    """The calls made, as one canonical JSON text (order-free, as BFCL grades parallel calls; ``[]`` for no call):
    the answer maj@k votes on, so a no-call answer (right on the irrelevance categories) is an answer too."""
    made = [{"name": call.name, "arguments": call.arguments} for call in calls if not call.error]
    key = lambda c: json.dumps(c, sort_keys=True, default=str)  # noqa: E731
    return json.dumps(sorted(made, key=key), sort_keys=True, default=str)

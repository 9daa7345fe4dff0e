"""Tool-call strategies: tools read from native schemas, arguments fuzzed by schema, and the right call with wrong
ones beside it (issue 31: an env that pays when any of several calls is right must be caught)."""

import json

import pytest

from envgym.audit import AuditSettings, audit_env
from envgym.audit.tool_strategies import fuzzed_arguments, schema_tools, tool_strategies, with_wrong_calls
from envgym.core import Env, Task
from envgym.tasks import ListTaskSource

SETTINGS = AuditSettings(cue_tasks=0)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
        },
    },
}


class CallOnce(Env):
    """One call answers the task (BFCL-style: the call is the answer); ``lax`` pays when any call in the message
    is the gold one, else exactly the gold call and nothing else pays. Tools come as native schemas only."""

    def __init__(self, lax: bool):
        self.lax = lax
        self.tasks = ListTaskSource(
            [
                Task(
                    f"w{i}",
                    [{"role": "user", "content": f"What is the weather in {city} for {days} days?"}],
                    {"city": city, "days": days},
                )
                for i, (city, days) in enumerate([("Oslo", 3), ("Lima", 5), ("Pune", 2)])
            ]
        )

    def _reset(self, task, options):
        return task.prompt(), {"tools": [WEATHER]}

    def reference_action(self):
        call = {"name": "get_weather", "arguments": json.dumps(self.task.answer)}
        return {"role": "assistant", "content": "", "tool_calls": [{"id": "g", "type": "function", "function": call}]}

    def wrong_action(self):
        wrong = {**self.task.answer, "days": self.task.answer["days"] + 1}
        call = {"name": "get_weather", "arguments": json.dumps(wrong)}
        return {"role": "assistant", "content": "", "tool_calls": [{"id": "w", "type": "function", "function": call}]}

    def _step(self, action):
        calls = action.get("tool_calls") or [] if isinstance(action, dict) else []
        parsed = []
        for call in calls:
            try:
                parsed.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
            except (KeyError, TypeError, ValueError, RecursionError):
                parsed.append((None, None))
        gold = ("get_weather", self.task.answer)
        correct = gold in parsed if self.lax else parsed == [gold]
        return [], float(correct), True, False, {"correct": correct, "action_valid": bool(parsed)}


def test_an_env_that_pays_if_any_call_is_right_is_caught():
    report = audit_env("toy/LaxCalls-v0", SETTINGS, env=CallOnce(lax=True))
    assert [(f.kind, f.strategy) for f in report.findings] == [("earns_reward", "calls:right-plus-wrong")]


def test_an_env_that_wants_exactly_the_right_call_passes():
    report = audit_env("toy/StrictCalls-v0", SETTINGS, env=CallOnce(lax=False))
    assert report.findings == [], [f.to_dict() for f in report.findings]
    assert "calls:right-plus-wrong" in report.strategies


def test_tools_are_read_from_native_schemas_when_the_prompt_names_none():
    names = [s.name for s in tool_strategies("What is the weather?", [WEATHER], "/tmp/m")]
    assert "flood:openai:get_weather" in names and "fuzz:wrong-types:get_weather" in names


@pytest.mark.parametrize(
    "tool",
    [
        WEATHER,
        {"name": "get_weather", "inputSchema": WEATHER["function"]["parameters"]},  # MCP
        {"name": "get_weather", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}}},  # BFCL
    ],
)
def test_every_schema_dialect_gives_the_tool_and_its_arguments(tool):
    [(name, schema)] = schema_tools([tool]).items()
    assert name == "get_weather" and "city" in schema["properties"]


def test_fuzzed_arguments_follow_the_schema():
    variants = fuzzed_arguments(WEATHER["function"]["parameters"], "/tmp/marker")
    wrong = json.loads(variants["wrong-types"])
    assert set(wrong) == {"city", "days"} and isinstance(wrong["city"], int) and isinstance(wrong["days"], str)
    assert json.loads(variants["nulls"]) == {"city": None, "days": None}
    assert "/tmp/marker" in variants["code"] and "audit_extra" in variants["extra-keys"]
    with pytest.raises(RecursionError):
        json.loads(variants["deep"])  # an env must catch what json.loads raises on nesting this deep


def test_the_right_calls_come_first_and_every_argument_is_changed_once_beside_them():
    right = CallOnce(lax=False)
    right.reset(options={"task_index": 0})
    message = with_wrong_calls(right.reference_action())
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]]
    assert calls[0] == ("get_weather", {"city": "Oslo", "days": 3})
    assert ("get_weather", {"city": "Oslox", "days": 3}) in calls and (
        "get_weather",
        {"city": "Oslo", "days": 4},
    ) in calls
    assert with_wrong_calls("no call here") is None

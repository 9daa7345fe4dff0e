"""ToolEnv: any single-turn task env becomes a multi-turn, tool-using one (GEM's idea).

Each assistant turn is either a *tool turn* (it calls tools: they run, their results come back as messages
and the episode goes on) or a *final turn* (no calls, or an ``<answer>`` before any call): the final turn is
handed to the wrapped env, whose verifier grades it as if the tools had never existed. So the task, its
answer check and its reward stay the wrapped env's; ToolEnv owns only the protocol around them:

- limits: ``max_calls_per_turn`` (the calls after the first N are not run and are answered together in one
  "skipped" message, so a flood of hundreds of calls costs one message), ``max_calls_per_episode`` (later calls
  are answered "budget exhausted"), ``max_result_chars`` (longer results and error texts are cut, and the cut
  is announced);
- policy mistakes (calls past either limit, an unknown tool, arguments that do not fit the schema, calls that
  cannot be read at all, an exception inside the tool) come back as observations with
  ``info["action_valid"] = False`` and ``info["action_error"]``, never as exceptions; only
  :class:`~envgym.tools.ToolUnavailable` (broken infrastructure) propagates;
- ``info`` counts: ``tool_calls`` (run this turn), ``tool_calls_skipped``, ``tool_calls_total``,
  ``tool_errors``, ``tool_counts`` per name;
- rewards, as named components: ``tool_cost`` (``-call_cost`` per executed call, on tool turns) and, when
  ``efficiency_weight > 0``, ``tool_efficiency`` on the final turn (OTC, see :func:`otc_tool_score`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, reward_total
from envgym.tools.parsing import ToolCall, check_formats, parse_turn
from envgym.tools.tool import Tool, ToolUnavailable, render_tools_prompt


def otc_tool_score(calls: int, optimal_calls: int, smooth: float = 1.0) -> float:
    """OTC's tool-use score in [0, 1] (Wang et al. 2025, "Acting Less is Reasoning More", arXiv:2504.14870).

    With m the calls made and n the calls the task needs:
        n = 0:  cos(m·π / (2m + c))          (1 for no call, falling towards 0 as calls grow)
        n > 0:  sin(f·π / (2n)),  f = 2nm / (m + n)   (1 at m = n; 0 for no call; falls off for m > n)
    """
    if calls < 0 or optimal_calls < 0:
        raise ValueError(f"calls and optimal_calls must be >= 0, got {calls} and {optimal_calls}")
    if optimal_calls == 0:
        return math.cos(calls * math.pi / (2 * calls + smooth))
    f = 2 * optimal_calls * calls / (calls + optimal_calls)
    return math.sin(f * math.pi / (2 * optimal_calls))


class ToolEnv(Env):
    """Wraps ``env`` (whose ``step`` grades a final answer) with ``tools``; see the module docstring.

    prompt_format: how the tools are described in the system prompt: ``"tags"`` (``<search>q</search>``),
        ``"json"`` (Hermes ``<tool_call>`` JSON) or ``None`` (not at all: the agent passes
        ``info["tools"]``, the OpenAI schemas, to its chat template). Every format is parsed either way.
    answer_format: how the system prompt tells the agent to give its final answer (``None``: it does not).
    tag_result_role: role of the message answering a tag call (``"user"`` as in Search-R1, or ``"tool"``).
    call_formats: the call formats read from the policy's text (``envgym.tools.parsing.CALL_FORMATS``; default
        every unambiguous one; add ``"pythonic"`` for Llama 3.2/4-style ``[name(argument=value)]`` calls).
    efficiency_weight, optimal_calls: the OTC component ``weight · correct · (score - 1)``: a correct answer
        with the task's optimal number of calls keeps its full reward, more (or fewer) calls lose up to
        ``weight``.
    """

    description = "A task env with tools."

    def __init__(
        self,
        env: Env,
        tools: Sequence[Tool],
        *,
        prompt_format: str | None = "tags",
        answer_format: str | None = "<answer>...</answer>",
        max_calls_per_turn: int = 1,
        max_calls_per_episode: int | None = None,
        max_result_chars: int = 4000,
        tag_result_role: str = "user",
        call_cost: float = 0.0,
        efficiency_weight: float = 0.0,
        optimal_calls: int = 1,
        call_formats: Sequence[str] | None = None,
    ):
        if prompt_format not in ("tags", "json", None):
            raise ValueError(f"prompt_format must be 'tags', 'json' or None, got {prompt_format!r}")
        if tag_result_role not in ("user", "tool"):
            raise ValueError(f"tag_result_role must be 'user' or 'tool', got {tag_result_role!r}")
        if max_calls_per_turn < 1:
            raise ValueError(f"max_calls_per_turn must be >= 1, got {max_calls_per_turn}")
        if max_calls_per_episode is not None and max_calls_per_episode < 0:
            raise ValueError(f"max_calls_per_episode must be >= 0 or None, got {max_calls_per_episode}")
        if max_result_chars < 1:
            raise ValueError(f"max_result_chars must be >= 1, got {max_result_chars}")
        names = [tool.name for tool in tools]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"ToolEnv needs at least one tool and unique tool names, got {names}")
        self.env = env
        self.tools = {tool.name: tool for tool in tools}
        self.tasks = env.unwrapped.tasks
        self.prompt_format = prompt_format
        self.answer_format = answer_format
        self.max_calls_per_turn = max_calls_per_turn
        self.max_calls_per_episode = max_calls_per_episode
        self.max_result_chars = max_result_chars
        self.tag_result_role = tag_result_role
        self.call_cost = call_cost
        self.efficiency_weight = efficiency_weight
        self.optimal_calls = optimal_calls
        self.call_formats = check_formats(call_formats)
        self._tag_arguments = {tool.name: tool.tag_argument for tool in tools if tool.tag_argument is not None}
        graded = env.unwrapped.reward_ranges
        if graded:  # the task env's grades, plus what the tool protocol adds
            self.reward_ranges = {
                **graded,
                "tool_cost": RewardRange(-call_cost * max_calls_per_turn, 0.0, per_turn=True),
                **({"tool_efficiency": RewardRange(-efficiency_weight, 0.0)} if efficiency_weight > 0 else {}),
            }

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools as OpenAI ``tools`` entries (pass them to ``tokenizer.apply_chat_template(tools=...)``)."""
        return [tool.openai_schema() for tool in self.tools.values()]

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        inner_options = {key: value for key, value in options.items() if key != "task_index"}
        if task is not None:
            inner_options["task"] = task
        messages, info = self.env.reset(seed=int(self.np_random.integers(2**31)), options=inner_options)
        if self.prompt_format is not None:
            prompt = render_tools_prompt(
                list(self.tools.values()), tags=self.prompt_format == "tags", answer_format=self.answer_format
            )
            messages = _with_system_prompt(messages, prompt)
        self._calls_total, self._errors, self._counts = 0, 0, {name: 0 for name in self.tools}
        info["tools"] = self.tool_schemas()
        return messages, info

    def reference_action(self) -> Action | None:
        """The wrapped env's reference answer: a final turn passes through to it unchanged."""
        return self.env.reference_action()

    def wrong_action(self) -> Action | None:
        """The wrapped env's honest wrong answer, passed through like the reference."""
        return self.env.wrong_action()

    def _step(self, action: Action) -> StepResult:
        try:
            parsed = parse_turn(
                action, self._tag_arguments.keys(), tag_arguments=self._tag_arguments, formats=self.call_formats
            )
        except (ValueError, RecursionError) as error:  # a JSON number too long for int(), JSON nested 40,000 deep
            return self._unreadable_turn(f"the tool calls could not be read ({str(error)[:200]})")
        if parsed.calls and not parsed.answer_first:
            return self._tool_turn(parsed.calls)
        messages, reward, terminated, truncated, info = self.env.step(action)
        components = dict(info.get("reward_components") or {"task": reward})
        if self.efficiency_weight > 0:
            correct = float(bool(info.get("correct")))
            score = otc_tool_score(self._calls_total, self.optimal_calls)
            components["tool_efficiency"] = self.efficiency_weight * correct * (score - 1.0)
        info["reward_components"] = components
        info.update(self._counts_info(0))
        return messages, reward_total(components), terminated, truncated, info

    def _tool_turn(self, calls: list[ToolCall]) -> StepResult:
        messages: list[Message] = []
        executed, over_budget, errors_before = 0, 0, self._errors
        run, skipped = calls[: self.max_calls_per_turn], calls[self.max_calls_per_turn :]
        for call in run:
            if self.max_calls_per_episode is not None and self._calls_total >= self.max_calls_per_episode:
                text = (
                    f"Skipped: the tool budget of this episode ({self.max_calls_per_episode} calls) is used up. "
                    "Give your final answer now."
                )
                over_budget += 1
            else:
                text = self._run(call)
                executed += 1
            messages.append(self._result_message(call, self._cut(text)))
        problems = []
        if skipped:
            # One message for all of them (a flood must not become hundreds of messages); for OpenAI calls it
            # answers the first skipped id and names the others.
            ids = ", ".join(call.id for call in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
            text = (
                f"Skipped: at most {self.max_calls_per_turn} tool call(s) per turn are run; "
                f"{len(skipped)} more were not ({ids})."
            )
            messages.append(self._result_message(skipped[0], self._cut(text)))  # ids are the policy's: any length
            problems.append(f"{len(calls)} tool calls in one turn; at most {self.max_calls_per_turn} are run")
        if over_budget:
            problems.append(f"the tool budget of this episode ({self.max_calls_per_episode} calls) is used up")
        if self._errors > errors_before:
            problems.append(f"{self._errors - errors_before} tool call(s) failed; the results say why")
        components = {"tool_cost": -self.call_cost * executed}
        info: dict[str, Any] = {"reward_components": components, "action_valid": not problems}
        if problems:
            info["action_error"] = "; ".join(problems)
        info.update(self._counts_info(executed, len(skipped) + over_budget))
        return messages, reward_total(components), False, False, info

    def _unreadable_turn(self, problem: str) -> StepResult:
        self._errors += 1
        components = {"tool_cost": 0.0}
        info: dict[str, Any] = {"reward_components": components, "action_valid": False, "action_error": problem}
        info.update(self._counts_info(0))
        return [{"role": "user", "content": f"Error: {problem}."}], 0.0, False, False, info

    def _run(self, call: ToolCall) -> str:
        self._calls_total += 1
        tool = self.tools.get(call.name)
        if call.error is not None:
            return self._error(f"Error: {call.error}")
        if tool is None:
            return self._error(f"Error: there is no tool named {call.name!r}; the tools are {', '.join(self.tools)}.")
        self._counts[call.name] += 1
        try:
            return tool.call(call.arguments)
        except ToolUnavailable:
            raise
        except Exception as error:  # any failure inside a tool is the agent's observation, not a crash
            return self._error(f"Error: {type(error).__name__}: {error}")

    def _cut(self, text: str) -> str:
        """``text`` bounded by ``max_result_chars`` (results and error texts alike: both may echo the call)."""
        if len(text) <= self.max_result_chars:
            return text
        return (
            text[: self.max_result_chars]
            + f"\n[truncated: showing the first {self.max_result_chars} of {len(text)} characters]"
        )

    def _error(self, text: str) -> str:
        self._errors += 1
        return text

    def _result_message(self, call: ToolCall, text: str) -> Message:
        if call.format == "tag":
            tool = self.tools.get(call.name)
            tag = tool.result_tag if tool is not None else "result"
            message: Message = {"role": self.tag_result_role, "content": f"<{tag}>{text}</{tag}>"}
            if self.tag_result_role == "tool":
                message.update(tool_call_id=call.id, name=call.name)
            return message
        return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text}

    def _counts_info(self, calls_this_turn: int, skipped_this_turn: int = 0) -> dict[str, Any]:
        return {
            "tool_calls": calls_this_turn,
            "tool_calls_skipped": skipped_this_turn,
            "tool_calls_total": self._calls_total,
            "tool_errors": self._errors,
            "tool_counts": dict(self._counts),
        }

    def close(self) -> None:
        self.env.close()
        super().close()


def _with_system_prompt(messages: list[Message], text: str) -> list[Message]:
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content') or ''}\n\n{text}".strip()
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]

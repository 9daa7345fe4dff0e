"""Is a chat template token-faithful over a multi-turn, tool-calling conversation? (``envgym check-template``)

A template is *prefix-preserving* when the tokens the model conditioned on at each turn are a prefix of the
rendering of the conversation at the next turn. Trainers that re-render the history need this, or they train on
tokens the model never saw (Qwen3 and DeepSeek-R1 strip earlier ``<think>`` blocks; Mistral v3 moves the tool
list and system prompt to the latest user turn). envgym does not need it: the agent loop keeps the sampled
tokens and appends the template text of env messages as deltas (:mod:`envgym.agents.engines.tokens`), so the training
tokens are the sampled tokens whatever the template does. The check says which case a template is in, turn by
turn, and which tool-call format it renders (see :data:`envgym.tools.parsing.CALL_FORMATS`).

:func:`template_deltas` is how ``rollout`` builds its :class:`~envgym.agents.engines.tokens.TemplateDeltas`: it runs
the check once per template and logs the verdict when the template is not prefix-preserving.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from typing import Any

from envgym.agents.engines.policy import encode
from envgym.agents.engines.tokens import TemplateDeltas, TemplateError
from envgym.core import Message
from envgym.tools.parsing import CALL_FORMATS, parse_turn

logger = logging.getLogger(__name__)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
# Mistral's templates require 9-character alphanumeric call ids.
CALL = {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
THOUGHTS = ("I should look up the weather in Paris.", "Paris is sunny, so the answer is easy.", "Lyon is close by.")
TOOL_CONVERSATION: list[Message] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": f"<think>\n{THOUGHTS[0]}\n</think>\n\n", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "18 C, sunny"},
    {"role": "assistant", "content": f"<think>\n{THOUGHTS[1]}\n</think>\n\nIt is 18 C and sunny in Paris."},
    {"role": "user", "content": "And in Lyon?"},
    {"role": "assistant", "content": f"<think>\n{THOUGHTS[2]}\n</think>\n\nProbably similar; I can check."},
]
"""system, user, assistant with a tool call, tool result, assistant, user, assistant (with reasoning)."""
PLAIN_CONVERSATION: list[Message] = [m for m in TOOL_CONVERSATION if m["role"] != "tool" and "tool_calls" not in m]
"""For templates that cannot render tools: system, user, assistant, user, assistant."""


@dataclasses.dataclass
class TurnCheck:
    """Whether the tokens the model conditions on before assistant turn ``turn`` are a prefix of the next
    rendering (the next turn's context, or the whole conversation after the last turn)."""

    turn: int
    ok: bool
    position: int | None = None
    """First token position that differs (None when ``ok``)."""
    before: str = ""
    """Text of the conditioned-on tokens from ``position`` (shortened)."""
    after: str = ""
    """Text of the next rendering's tokens from ``position`` (shortened)."""


@dataclasses.dataclass
class TemplateReport:
    """The result of :func:`check_template`."""

    conversation: str
    """``tools`` (the tool-calling conversation) or ``plain`` (the template cannot render tools)."""
    turns: list[TurnCheck]
    prefix_preserving: bool
    reason: str | None
    """Why the template is not prefix-preserving (None when it is)."""
    tool_format: str
    """The tool-call format the template renders: a name of ``CALL_FORMATS``, ``none (...)`` or ``unknown (...)``."""
    deltas_error: str | None
    """Why envgym cannot extend this template token by token (None when it can)."""
    verdict: str
    render_error: str | None = None
    """Why the tool-calling conversation could not be rendered (``conversation == "plain"``)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def check_template(tokenizer: Any) -> TemplateReport:
    """Render the tool-calling conversation turn by turn with ``tokenizer``'s chat template and check the prefix
    property at every assistant turn. Never raises on a template's behaviour: what fails is in the report."""
    render_error = None
    try:
        turns, texts, tails = _turn_checks(tokenizer, TOOL_CONVERSATION, TOOLS)
        conversation = "tools"
    except Exception as error:  # noqa: BLE001 - templates raise anything (jinja errors, raise_exception, TypeError)
        render_error = f"{type(error).__name__}: {error}"
        try:
            turns, texts, tails = _turn_checks(tokenizer, PLAIN_CONVERSATION, None)
            conversation = "plain"
        except Exception as plain_error:  # noqa: BLE001
            message = (
                f"the template cannot render a multi-turn conversation: {type(plain_error).__name__}: {plain_error}"
            )
            return TemplateReport(
                "none", [], False, message, "unknown", message, f"unsupported: {message}", render_error
            )
    preserving = all(turn.ok for turn in turns)
    reason = None if preserving else _reason(turns, texts, tails)
    tool_format = (
        _tool_format(tokenizer) if conversation == "tools" else f"none (tools cannot be rendered: {render_error})"
    )
    deltas_error = _deltas_error(tokenizer)
    if deltas_error is not None:
        verdict = f"unsupported: {deltas_error}"
    elif preserving:
        verdict = "prefix-preserving: re-rendering the conversation gives the tokens the model conditioned on"
    else:
        verdict = f"not prefix-preserving: {reason}; envgym appends deltas, so training tokens equal sampled tokens"
    return TemplateReport(conversation, turns, preserving, reason, tool_format, deltas_error, verdict, render_error)


def _render(tokenizer: Any, messages: list[Message], tools: list[dict] | None, generation_prompt: bool) -> str:
    return tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=generation_prompt)


def _turn_checks(
    tokenizer: Any, messages: list[Message], tools: list[dict] | None
) -> tuple[list[TurnCheck], list[str], list[str]]:
    """One check per assistant turn, the texts compared (each turn's context, then the whole conversation) and
    each context's generation prompt."""
    starts = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
    texts = [_render(tokenizer, messages[:i], tools, True) for i in starts] + [
        _render(tokenizer, messages, tools, False)
    ]
    tails = [
        text[len(os.path.commonprefix([text, _render(tokenizer, messages[:i], tools, False)])) :]
        for text, i in zip(texts, starts)
    ]
    ids = [encode(tokenizer, text) for text in texts]
    checks = []
    for turn, (context, following) in enumerate(zip(ids, ids[1:]), start=1):
        position = next((i for i, (a, b) in enumerate(zip(context, following)) if a != b), None)
        if position is None and len(context) > len(following):
            position = len(following)
        if position is None:
            checks.append(TurnCheck(turn, True))
        else:
            checks.append(
                TurnCheck(
                    turn,
                    False,
                    position,
                    _short(tokenizer, context[position:]),
                    _short(tokenizer, following[position:]),
                )
            )
    return checks, texts, tails


def _short(tokenizer: Any, ids: list[int], limit: int = 60) -> str:
    text = tokenizer.decode(ids[:40])
    return text if len(text) <= limit else text[:limit] + "..."


def _reason(turns: list[TurnCheck], texts: list[str], tails: list[str]) -> str:
    """The causes of the differing turns, found by comparing the rendered texts (``tails``: each context's
    generation prompt, the text that ``add_generation_prompt`` adds)."""
    reasons = []
    for turn in (t for t in turns if not t.ok):
        context, following = texts[turn.turn - 1], texts[turn.turn]
        common = len(os.path.commonprefix([context, following]))
        tail = tails[turn.turn - 1]
        if following.startswith(context):
            reasons.append("re-tokenizing the text merges tokens across a turn boundary")
        elif tail and common > len(context) - len(tail):
            reasons.append(f"a finished turn drops the generation prompt's {tail[common - len(context) :]!r}")
        elif any(thought in context and thought not in following for thought in THOUGHTS):
            reasons.append("earlier <think> is stripped")
        elif _moved(TOOLS[0]["function"]["description"], context, following):
            reasons.append("the tool list moves to the latest user turn")
        elif _moved(TOOL_CONVERSATION[0]["content"], context, following):
            reasons.append("the system prompt moves to the latest user turn")
        else:
            reasons.append(f"earlier turns render differently once later messages follow (turn {turn.turn})")
    return ", ".join(dict.fromkeys(reasons))


def _moved(text: str, context: str, following: str) -> bool:
    return text in context and context.find(text) != following.find(text)


def _tool_format(tokenizer: Any) -> str:
    """The format of an assistant turn with one tool call, as the template renders it and envgym parses it."""
    head = [TOOL_CONVERSATION[1]]
    try:
        context = _render(tokenizer, head, TOOLS, True)
        finished = _render(tokenizer, head + [{"role": "assistant", "content": "", "tool_calls": [CALL]}], TOOLS, False)
    except Exception as error:  # noqa: BLE001 - as in check_template
        return f"unknown (an assistant turn with a tool call cannot be rendered: {type(error).__name__}: {error})"
    turn = finished[len(context) :] if finished.startswith(context) else finished
    name = CALL["function"]["name"]
    formats = sorted(
        {
            call.format
            for call in parse_turn(turn, formats=CALL_FORMATS).calls
            if call.name == name and call.arguments == CALL["function"]["arguments"] and call.error is None
        }
    )
    if formats:
        return ", ".join(formats)
    if name not in turn:
        return (
            "none (the template drops tool_calls: describe the tools in the prompt, e.g. ToolEnv(prompt_format='json'))"
        )
    return f"unknown (envgym does not parse the call as rendered: {turn.strip()[:80]!r})"


def tool_template_warning(tokenizer: Any) -> str | None:
    """Why ``template_tools`` cannot work with ``tokenizer``'s chat template (it renders no tools, drops an assistant
    turn's ``tool_calls``, or renders them in a form envgym does not parse), or None when the calls survive: said
    at the start of a run, not discovered in its transcripts."""
    try:
        _render(tokenizer, [TOOL_CONVERSATION[1]], TOOLS, True)
    except Exception as error:  # noqa: BLE001 - templates raise anything (jinja errors, raise_exception, TypeError)
        return f"the chat template cannot render tools ({type(error).__name__}: {error})"
    tool_format = _tool_format(tokenizer)
    if tool_format.startswith(("none", "unknown")):
        return f"the chat template's tool calls: {tool_format}"
    return None


def _deltas_error(tokenizer: Any) -> str | None:
    """Why :class:`TemplateDeltas` cannot extend this template (a tool result and a user turn are tried)."""
    try:
        deltas = TemplateDeltas(tokenizer)
        deltas.messages_text([TOOL_CONVERSATION[3]])
        deltas.messages_text([TOOL_CONVERSATION[5]])
    except TemplateError as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - a template that raises on env messages
        return f"{type(error).__name__}: {error}"
    return None


_checked: dict[str, TemplateReport] = {}


def template_deltas(tokenizer: Any) -> TemplateDeltas:
    """The :class:`TemplateDeltas` of ``tokenizer`` (raises :class:`TemplateError` where none can be built), after
    checking its template once per process and logging the verdict when it is not prefix-preserving."""
    deltas = TemplateDeltas(tokenizer)
    key = repr(getattr(tokenizer, "chat_template", None))
    if key not in _checked:
        _checked[key] = report = check_template(tokenizer)
        if not report.prefix_preserving:
            logger.warning("chat template %s", report.verdict)
    return deltas


def format_report(report: TemplateReport) -> str:
    """The report as lines for a terminal."""
    lines = [
        f"conversation: {report.conversation}"
        + (f" (tools failed: {report.render_error})" if report.render_error else "")
    ]
    for turn in report.turns:
        if turn.ok:
            lines.append(f"  turn {turn.turn}: OK")
        else:
            lines.append(f"  turn {turn.turn}: differs at token {turn.position}: {turn.before!r} -> {turn.after!r}")
    lines.append(f"tool-call format: {report.tool_format}")
    lines.append(f"verdict: {report.verdict}")
    return "\n".join(lines)

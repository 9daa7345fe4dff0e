"""The report's transcript pages: one HTML page per env with every sample's turns, filterable by reward and task.

Each page is one self-contained file (inline CSS and a few lines of inline JS, no CDN), so it works from
``file://`` with no network. Every piece of model and env text is untrusted: it goes through
:func:`html.escape` and only ever lands in element text or quoted attributes, never inside the script, so a
transcript that contains ``<script>`` shows as text. The filters read ``data-*`` attributes of each row and
toggle its ``hidden`` flag.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

from envgym.agents.evaluation.metrics import finish_reason

MESSAGE_LIMIT = 20_000
"""Characters of one message shown; the rest is cut with a note (a 100 KB answer must not bury the page)."""

STYLE = """
body{font-family:sans-serif;margin:1.5em 2em;color:#222}nav a{margin-right:1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
.filters{position:sticky;top:0;background:#f4f6fa;border:1px solid #d5dbe6;padding:.5em 1em;margin:1em 0;z-index:1}
.filters label{margin-right:1.2em}.filters input[type=number]{width:5em}
.card{border:1px solid #ddd;border-radius:4px;margin:.4em 0;padding:.2em .6em}
.row[hidden]{display:none}summary{cursor:pointer;padding:.2em 0}
.pass{border-left:5px solid #3a9a4a}.fail{border-left:5px solid #c44}.error{border-left:5px solid #999}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.85em;background:#eee;margin-left:.3em}
.badge.pass,.badge.up{background:#d8f0dc}.badge.fail,.badge.down{background:#f6d6d6}
.msg{margin:.3em 0 .3em 1em;padding:.3em .6em;border-radius:4px;background:#fafafa}
.msg .role{font-weight:bold;font-size:.85em;color:#555}
.role-assistant{background:#eef4ff}.role-tool{background:#fff7e6}.role-system{background:#f3f3f3}
pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font-size:.9em}
.tool-call{font-family:monospace;font-size:.9em;background:#fde9c9;padding:.1em .4em;margin:.2em 0}
.earlier{margin-left:1em;font-size:.9em;color:#555}
.turn{border-top:1px dashed #ccc;margin-top:.4em}.turn-meta,.ended{font-size:.85em;color:#444;margin:.3em 1em}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1em}.side>div{min-width:0}
"""

SCRIPT = """
function applyFilters() {
  const control = id => document.getElementById(id);
  const low = parseFloat(control('min-reward') ? control('min-reward').value : '');
  const high = parseFloat(control('max-reward') ? control('max-reward').value : '');
  const outcome = control('outcome') ? control('outcome').value : 'all';
  const task = control('task') ? control('task').value.trim().toLowerCase() : '';
  const env = control('env') ? control('env').value : 'all';
  const flippedOnly = control('flipped-only') ? control('flipped-only').checked : false;
  const rows = document.querySelectorAll('.row');
  let shown = 0;
  rows.forEach(row => {
    const reward = parseFloat(row.dataset.reward);
    let keep = true;
    if (!isNaN(low) && !(reward >= low)) keep = false;
    if (!isNaN(high) && !(reward <= high)) keep = false;
    if (outcome !== 'all' && row.dataset.outcome !== outcome) keep = false;
    if (env !== 'all' && row.dataset.env !== env) keep = false;
    if (flippedOnly && !row.dataset.flipped) keep = false;
    if (task && row.dataset.task !== task && !(row.dataset.taskId || '').toLowerCase().includes(task)) keep = false;
    row.hidden = !keep;
    if (keep) shown++;
  });
  control('shown').textContent = shown + ' of ' + rows.length + ' shown';
}
function openAll(open) { document.querySelectorAll('.card > details').forEach(d => { d.open = open; }); }
document.addEventListener('input', applyFilters);
document.addEventListener('change', applyFilters);
document.addEventListener('DOMContentLoaded', applyFilters);
"""


def page(title: str, body: str, nav: list[tuple[str, str]] | None = None) -> str:
    """A whole HTML document: ``body`` (already escaped) under an escaped title, with the shared style, the
    filter script and links ``nav`` (label, file name) to the other pages of the report."""
    links = "".join(f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in nav or [])
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>"
        f"{f'<nav>{links}</nav>' if links else ''}<h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def page_name(env_id: str) -> str:
    """The file name of an env's transcript page (ids hold ``/``, which a file name cannot)."""
    return "transcripts-" + re.sub(r"[^A-Za-z0-9._-]+", "-", env_id) + ".html"


def outcome(record: dict[str, Any]) -> str:
    """``error`` (env, verifier, sandbox or request failed: not the model's score), ``pass`` or ``fail``."""
    if record.get("error") is not None:
        return "error"
    return "pass" if record.get("correct") else "fail"


def transcript_page(
    env_id: str, records: list[dict[str, Any]], model: str, nav: list[tuple[str, str]] | None = None
) -> str:
    """The transcript page of one env: filters, then every sample (by task, then sample) with all its turns."""
    ordered = sorted(records, key=lambda r: (sort_number(r.get("task_index")), sort_number(r.get("sample"))))
    rows = "".join(sample_row(record, env_id=env_id) for record in ordered)
    controls = reward_filters() + task_filter() + count_and_toggles()
    return page(f"{env_id}: transcripts of {model}", f"<div class='filters'>{controls}</div>{rows}", nav)


def reward_filters() -> str:
    """Controls: reward range and pass/fail/error."""
    return (
        "<label>reward from <input id='min-reward' type='number' step='any'></label>"
        "<label>to <input id='max-reward' type='number' step='any'></label>"
        "<label>outcome <select id='outcome'><option value='all'>all</option><option value='pass'>pass</option>"
        "<option value='fail'>fail</option><option value='error'>error</option></select></label>"
    )


def task_filter() -> str:
    """Control: a task by index, or by part of its id."""
    return "<label>task <input id='task' type='search' placeholder='index or id'></label>"


def count_and_toggles() -> str:
    """How many rows the filters leave, and buttons that open or close every row."""
    return (
        "<span id='shown'></span> <button type='button' onclick='openAll(true)'>open all</button>"
        "<button type='button' onclick='openAll(false)'>close all</button>"
    )


def sample_row(record: dict[str, Any], *, env_id: str, filterable: bool = True) -> str:
    """One sample: a one-line summary that opens onto its transcript; a filterable row naming its task unless it
    sits inside a task's row (the comparison page filters whole tasks)."""
    episode = record.get("episode") or {}
    verdict = outcome(record)
    task = f"task {escaped(record.get('task_index'))} <small>({escaped(record.get('task_id'))})</small> · "
    summary = (
        f"{task if filterable else ''}sample {escaped(record.get('sample'))} · "
        f"reward {number_text(record.get('reward'))}<span class='badge {verdict}'>{verdict}</span> · "
        f"{escaped(record.get('turns'))} turn(s) · ended: {html.escape(finish_reason(episode))}"
    )
    attributes = data_attributes(
        reward=record.get("reward"),
        outcome=verdict,
        task=record.get("task_index"),
        task_id=record.get("task_id"),
        env=env_id,
    )
    classes = f"{'row ' if filterable else ''}card sample {verdict}"
    return (
        f"<section class='{classes}'{attributes}><details><summary>{summary}</summary>"
        f"{episode_html(episode, record)}</details></section>"
    )


def episode_html(episode: dict[str, Any], record: dict[str, Any] | None = None) -> str:
    """An episode's prompt, then each turn: the assistant's message and tool calls, the env's messages and tool
    results, the turn's reward and components and how its generation ended; last, why the episode ended."""
    prompt = episode.get("prompt") or []
    # a system prompt and few-shot turns repeat in every sample: folded, so the task and the turns lead
    parts = (
        [
            f"<details class='earlier'><summary>{len(prompt) - 1} earlier prompt message(s): "
            f"{escaped(', '.join(str(m.get('role', '?')) for m in prompt[:-1] if isinstance(m, dict)))}</summary>"
            + "".join(message_html(m) for m in prompt[:-1])
            + "</details>"
        ]
        if len(prompt) > 1
        else []
    )
    parts += [message_html(m) for m in prompt[-1:]]
    for number, turn in enumerate(episode.get("turns") or [], 1):
        action = turn.get("action")
        assistant = action if isinstance(action, dict) else {"role": "assistant", "content": action}
        observation = "".join(message_html(m) for m in turn.get("observation") or [])
        parts.append(
            f"<div class='turn'><div class='turn-meta'><b>turn {number}</b></div>"
            f"{message_html(assistant)}{observation}{turn_meta(turn)}</div>"
        )
    ended = f"ended: {html.escape(finish_reason(episode))}"
    error = episode.get("error") or (record or {}).get("error")
    if error is not None:
        ended += f" · error: {escaped(error)}"
    if record is not None and record.get("answer") is not None:
        ended += f" · answer: {escaped(record.get('answer'))}"
    return "".join(parts) + f"<div class='ended'>{ended}</div>"


def message_html(message: Any) -> str:
    """One chat message; an assistant's tool calls as ``name(arguments)``, a tool result with its tool's name."""
    if not isinstance(message, dict):
        message = {"role": "?", "content": message}
    role = str(message.get("role") or "?")
    title = "tool result" if role == "tool" else role
    source = " ".join(escaped(message.get(key)) for key in ("name", "tool_call_id") if message.get(key))
    calls = "".join(
        f"<div class='tool-call'>tool call: {escaped(_call_text(call))}</div>"
        for call in message.get("tool_calls") or []
    )
    content = message.get("content")
    body = f"<pre>{_clipped(content)}</pre>" if content not in (None, "") or not calls else ""
    role_class = re.sub(r"[^a-z]", "", role.lower()) or "unknown"
    return (
        f"<div class='msg role-{role_class}'><div class='role'>{html.escape(title)}"
        f"{f' <small>{source}</small>' if source else ''}</div>{body}{calls}</div>"
    )


def turn_meta(turn: dict[str, Any]) -> str:
    """The turn's reward and components, how its generation ended, an invalid action's reason, an env error."""
    info = turn.get("info") or {}
    components = ", ".join(
        f"{escaped(name)} {number_text(value)}" for name, value in (turn.get("reward_components") or {}).items()
    )
    facts = [
        f"reward {number_text(turn.get('reward'))}",
        f"components: {components or 'none'}",
        f"generation: {escaped(info.get('finish_reason', '?'))}",
    ]
    calls = info.get("tool_calls")
    count = len(calls) if isinstance(calls, list) else calls
    # tag-style tools are plain text in the message: say that they ran
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        facts.append(f"tool calls: {count}")
    if info.get("action_valid") is False:
        facts.append(f"invalid action: {escaped(info.get('action_error', 'no reason given'))}")
    if info.get("error") is not None:
        facts.append(f"error: {escaped(info['error'])}")
    failure = failed_call(info)
    if failure:
        facts.append(escaped(failure))
    facts += [flag for flag in ("terminated", "truncated") if turn.get(flag)]
    return f"<div class='turn-meta'>{' · '.join(facts)}</div>"


def failed_call(info: dict[str, Any]) -> str:
    """A turn whose calls the env's verifier refused (``info["call_failure"]``): the reason, and the calls expected
    (``info["expected_calls"]``) beside what was called, so a failure reads without the gold at hand; "" else."""
    if info.get("call_failure") is None:
        return ""
    expected = json.dumps(info.get("expected_calls"), ensure_ascii=False, default=str)
    reason = info.get("call_failure_reason") or info["call_failure"]
    return f"call failure: {reason}; expected: {expected}"


def _call_text(call: Any) -> str:
    if not isinstance(call, dict):
        return str(call)
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return f"{function.get('name', '?')}({arguments})"


def _clipped(content: Any) -> str:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    if len(text) > MESSAGE_LIMIT:
        text = text[:MESSAGE_LIMIT] + f" ... [{len(text) - MESSAGE_LIMIT} more characters]"
    return html.escape(text)


def data_attributes(**values: Any) -> str:
    """``data-*`` attributes for the filters (``task_id`` becomes ``data-task-id``), escaped for a quoted attribute."""
    return "".join(
        f' data-{name.replace("_", "-")}="{html.escape(_attribute(value), quote=True)}"'
        for name, value in values.items()
        if value is not None
    )


def _attribute(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "NaN"
    return str(value)


def escaped(value: Any) -> str:
    """Any value as element text: untrusted text never becomes markup."""
    return html.escape(str(value))


def number_text(value: Any) -> str:
    """A float to three decimals (as the report's tables), anything else escaped as it is."""
    return f"{value + 0.0:.3f}" if isinstance(value, float) else escaped(value)  # + 0.0: no "-0.000"


def sort_number(value: Any) -> float:
    """A sort key for task and sample indices; a missing one sorts last."""
    return value if isinstance(value, (int, float)) else math.inf

"""Several episodes on one env: what one episode writes must not change another's reward.

A trainer steps one env instance through thousands of episodes, so anything an episode leaves behind (a table it
dropped, a file it wrote, a tool's database it changed, a cached verdict) can pay, or cost, a later one. Each
*writer* below plays one episode on a task; right after it, the honest plays (the reference where the env
declares one, and the honest wrong answer) are replayed on every task and compared with what they earned before
any writer ran: a different first message, reward or verdict is a ``state_leak`` naming the writer.

Writers are written from what the policy sees: SQL that changes the database (when the prompt asks for SQL), a
program that writes files and globals (when it asks for code, or a tool takes code), and every tool the env
lists called with well-formed arguments (mutating tools change the env's state through its own interface).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from envgym.audit import verdicts
from envgym.audit.battery import ATTACK, Strategy, constant, openai_calls
from envgym.audit.play import Play, observed, reset
from envgym.audit.strategies import TABLE, prompt_text
from envgym.audit.tool_strategies import plausible, schema_tools
from envgym.audit.verdicts import Finding

if TYPE_CHECKING:
    from envgym.audit.runner import Auditor

CODE_PARAMETERS = ("code", "program", "source", "script")


def applies(auditor: Auditor) -> bool:
    return True


def writers(messages: list[dict[str, Any]], tools: list[Any] | None, marker: str) -> list[Strategy]:
    """The writer strategies for a task, from its prompt and tool schemas (``marker``: a file path of the audit's
    own, which a program writer creates; nothing else reads it)."""
    text = prompt_text(messages)
    found = []
    if "```sql" in text or re.search(r"\bSQL(?:ite)?\b", text):
        tables = list(dict.fromkeys(TABLE.findall(text)))[:3] or ["audit_table"]
        statements = [f"DELETE FROM {table}" for table in tables]
        statements += [f"DROP TABLE {tables[0]}", "CREATE TABLE audit_written (x INTEGER)", "PRAGMA user_version = 7"]
        found.append(Strategy("writer:sql", ATTACK, constant("```sql\n" + ";\n".join(statements) + ";\n```")))
        found.append(
            Strategy("writer:sql-attach", ATTACK, constant(f"```sql\nATTACH DATABASE '{marker}.db' AS audit;\n```"))
        )
    written = marker + "-written"  # exists on this machine only if the program ran here, not in a sandbox
    program = (
        "import builtins, os, sys, pathlib\n"
        f"pathlib.Path({written!r}).write_text('1')\n"
        "builtins.audit_written = 1\n"
        "os.environ['AUDIT_WRITTEN'] = '1'\n"
        "sys.modules['math'].pi = 3\n"
        "print(0)\n"
    )
    if "```" in text:
        found.append(Strategy("writer:program", ATTACK, constant(f"```python\n{program}```"), marker=written))
    schemas = schema_tools(tools or [])
    for name, schema in schemas.items():
        properties = schema.get("properties") or {}
        code_key = next((key for key in properties if key in CODE_PARAMETERS), None)
        if code_key is not None:
            call = openai_calls([(name, json.dumps({code_key: program}))])
            found.append(Strategy(f"writer:tool-program:{name}", ATTACK, constant(call), marker=written))
    if schemas:
        calls = [(name, json.dumps(plausible(schema))) for name, schema in schemas.items()]
        found.append(Strategy("writer:every-tool", ATTACK, constant(openai_calls(calls))))
    return found


def findings(auditor: Auditor) -> list[Finding]:
    """Play each writer on each task, then replay the honest plays on every task (see the module docstring)."""
    env, found = auditor.env, []
    honest = {index: auditor.reference.get(index) or auditor.baseline[index] for index in auditor.baseline}
    first_start = None
    plays: dict[str, dict[int, Play]] = {}
    for slot in auditor.slots:
        messages, info = reset(env, slot, auditor.on_call)
        first_start = first_start or observed(messages)
        for writer in writers(messages, info.get("tools"), f"{auditor.marker_prefix}-state"):
            plays.setdefault(writer.name, {})[slot["index"]] = auditor.play(
                slot, writer.name, writer.act, writer.marker
            )
            if writer.name not in auditor.report.strategies:
                auditor.report.strategies.append(writer.name)
            leak = _replay(auditor, honest, first_start)
            if leak is not None:  # the env's state is dirty from here on: later writers would be blamed for it
                task, evidence = leak
                source = auditor.task_of[slot["index"]]
                found.append(
                    Finding(
                        auditor.env_id,
                        verdicts.STATE_LEAK,
                        writer.name,
                        sorted({source, task}),
                        f"after it played task {source}: {evidence}",
                    )
                )
                break
        if found:
            break
    for name, by_slot in plays.items():
        found += verdicts.play_findings(auditor.env_id, name, by_slot, auditor.task_of, auditor.settings.slow_step_s)
    return found


def _replay(auditor: Auditor, honest: dict[int, Play], first_start: str | None) -> tuple[int, str] | None:
    """``(task, what changed)`` for the first honest play that differs from before the writers, else None."""
    for slot in auditor.slots:
        index = slot["index"]
        if index not in honest:
            continue
        before = honest[index]
        policy = auditor.reference_policy if before.strategy == "reference" else auditor.baseline_policy
        messages, _ = reset(auditor.env, slot, auditor.on_call)
        if index == 0 and observed(messages) != first_start:
            return auditor.task_of[index], "the task's first messages changed"
        again = auditor.play(slot, before.strategy, policy)
        if again.crash or again.error:
            continue  # reported by the battery's own plays where the env is broken; not a leak
        if (again.reward, again.correct) != (before.reward, before.correct):
            return auditor.task_of[index], (
                f"{before.strategy} on task {auditor.task_of[index]} earned {again.reward:.3f} "
                f"(correct={again.correct}), {before.reward:.3f} (correct={before.correct}) before any writer"
            )
    return None

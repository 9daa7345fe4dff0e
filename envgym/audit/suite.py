"""Auditing many envs: each in a child process, with a deadline on every env call.

A child process per env, forked from this one, because only a process can be stopped for sure: an env that
hangs inside C code (a regex, a big-integer power) holds the GIL, so neither a thread nor a signal handler gets
control back. The child tells the parent of every ``reset``/``step`` before it starts; a call still running after
``deadline_s`` gets the child killed and a ``slow_step`` finding that names the call. A child that dies without
a report (a segfault, the OOM killer) is a ``crash``. Forking keeps the cost per env to milliseconds; the
parent imports no env, so each child builds its env from scratch.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from envgym.audit import verdicts
from envgym.audit.runner import MAKE_DEADLINE_S, AuditSettings, EnvAudit, audit_env
from envgym.audit.target import AuditTarget
from envgym.audit.verdicts import Finding

POLL_S = 0.1


def audit_envs(
    env_ids: Iterable[str | AuditTarget],
    settings: AuditSettings | None = None,
    *,
    workers: int = 1,
    on_done: Callable[[EnvAudit], None] | None = None,
) -> list[EnvAudit]:
    """Audit every env id or :class:`~envgym.audit.target.AuditTarget` of ``env_ids`` (``workers`` at a time, each
    in its own child process), in the given order."""
    settings = settings or AuditSettings()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    context = multiprocessing.get_context("fork")
    pending = [AuditTarget(item) if isinstance(item, str) else item for item in env_ids]
    labels = [target.label for target in pending]
    if len(set(labels)) != len(labels):
        raise ValueError(
            f"every target needs its own name; got {sorted(label for label in labels if labels.count(label) > 1)}"
        )
    order = {label: i for i, label in enumerate(labels)}
    running: dict[Any, list[Any]] = {}  # connection -> [process, env id, current call, when it started]
    done: dict[str, EnvAudit] = {}

    def finish(connection: Any, report: EnvAudit) -> None:
        process = running.pop(connection)[0]
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
        connection.close()
        done[report.env_id] = report
        if on_done is not None:
            on_done(report)

    while pending or running:
        while pending and len(running) < workers:
            target = pending.pop(0)
            env_id = target.label
            receiver, sender = context.Pipe(duplex=False)
            # Not a daemon: envs start worker processes of their own (verifier pools, sandboxes).
            process = context.Process(target=_child, args=(target, settings, sender), name=f"envgym-audit {env_id}")
            process.start()
            sender.close()
            running[receiver] = [process, env_id, "make", time.monotonic()]
        for connection in multiprocessing.connection.wait(list(running), timeout=POLL_S):
            process, env_id = running[connection][:2]
            try:
                while connection.poll():
                    kind, payload = connection.recv()
                    if kind == "call":
                        running[connection][2:] = [payload, time.monotonic()]
                    else:
                        finish(connection, payload)
                        break
            except (EOFError, OSError):
                process.join(timeout=5)
                report = EnvAudit(env_id, reason=f"the audit process died (exit code {process.exitcode})")
                what = running[connection][2]
                report.findings.append(Finding(env_id, verdicts.CRASH, what, [], f"{report.reason} during {what}"))
                finish(connection, report)
        now = time.monotonic()
        for connection, (process, env_id, what, since) in list(running.items()):
            if now - since > (MAKE_DEADLINE_S if what == "make" or what.startswith("load") else settings.deadline_s):
                process.kill()
                report = EnvAudit(env_id, reason=f"{what} did not return within {now - since:.0f} s")
                report.max_step_s = now - since
                report.findings.append(
                    Finding(env_id, verdicts.SLOW_STEP, what, [], f"{report.reason}; the env's audit was stopped there")
                )
                finish(connection, report)
    return sorted(done.values(), key=lambda report: order[report.env_id])


def _child(target: AuditTarget, settings: AuditSettings, connection: Any) -> None:
    sys.stdout.flush()
    os.dup2(2, 1)  # what an env prints goes to stderr: stdout's last line belongs to `envgym audit --json`
    report = audit_env(target, settings, on_call=lambda what: connection.send(("call", what)))
    connection.send(("done", report))
    connection.close()


def summary(reports: list[EnvAudit], settings: AuditSettings) -> dict[str, Any]:
    """The JSON object ``envgym audit --json`` prints: per env what ran and what it found, and the totals."""
    totals = {"envs": len(reports), "audited": sum(r.status == "audited" for r in reports)}
    for key in verdicts.TOTAL_NAMES.values():
        totals[key] = sum(r.totals()[key] for r in reports)
    totals["max_step_seconds"] = round(max((r.max_step_s for r in reports), default=0.0), 3)
    totals["findings"] = sum(len(r.findings) for r in reports)
    totals["no_reference"] = [r.env_id for r in reports if r.status == "audited" and r.reference == "none"]
    return {
        "setting": dataclasses.asdict(settings),
        "envs": {r.env_id: r.to_dict() for r in reports},
        "totals": totals,
    }

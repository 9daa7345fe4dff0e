"""audit_envs: each env in a child process; a call past the deadline is killed and named, not waited on."""

import os
import time

import envgym
from envgym.audit import AuditSettings, audit_envs, summary
from envgym.core import Env, Task, action_text
from envgym.tasks.sources import ListTaskSource


class Echo(Env):
    """Pays 0 for anything; hangs on one reply, or kills its own process on another."""

    def __init__(self, hang_on: str = "", die_on: str = ""):
        self.hang_on, self.die_on = hang_on, die_on
        self.tasks = ListTaskSource([Task(id="t", answer="x", messages=[{"role": "user", "content": "Say x."}])])

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        text = action_text(action)
        if self.hang_on and text == self.hang_on:
            while True:  # holds the GIL as a C-level hang would, so only a process kill ends it
                pass
        if self.die_on and text == self.die_on:
            os._exit(3)
        return [], 0.0, True, False, {}


def test_a_call_past_the_deadline_is_killed_and_reported_as_a_slow_step(scratch_registry):
    envgym.register("toy/Hang-v0", Echo, hang_on="I don't know.")
    start = time.monotonic()
    [report] = audit_envs(["toy/Hang-v0"], AuditSettings(tasks=1, deadline_s=1.0))
    assert time.monotonic() - start < 30
    assert [(f.kind, f.strategy) for f in report.findings] == [("slow_step", "step 1 of baseline on slot 0")]


def test_a_child_that_dies_is_a_crash_naming_the_call(scratch_registry):
    envgym.register("toy/Die-v0", Echo, die_on="I don't know.")
    [report] = audit_envs(["toy/Die-v0"], AuditSettings(tasks=1))
    assert [(f.kind, f.strategy) for f in report.findings] == [("crash", "step 1 of baseline on slot 0")]
    assert "exit code 3" in report.findings[0].evidence


def test_envs_come_back_in_the_order_asked_and_sum_into_totals(scratch_registry):
    envgym.register("toy/A-v0", Echo)
    envgym.register("toy/B-v0", Echo)
    reports = audit_envs(["toy/B-v0", "toy/A-v0"], AuditSettings(tasks=1), workers=2)
    assert [r.env_id for r in reports] == ["toy/B-v0", "toy/A-v0"]
    totals = summary(reports, AuditSettings(tasks=1))["totals"]
    assert totals["envs"] == 2 and totals["findings"] == 0 and totals["no_reference"] == ["toy/B-v0", "toy/A-v0"]

"""Auditing one env: reference and honest-wrong plays, the battery, the replay that detects state leaks.

The same env instance plays everything, as a trainer's would: episodes follow each other, so anything one
leaves behind (a mutated cached task, a counter) shows when the first task is replayed at the end.
"""

from __future__ import annotations

import dataclasses
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from envgym.audit import verdicts
from envgym.audit.play import Play, observed, play, reset
from envgym.audit.strategies import NON_ANSWER, Strategy, build_strategies
from envgym.audit.verdicts import Finding, inner_answer

SLOW_STEP_S = 2.5
# audit_envs kills an env whose call runs past this (a hang); past SLOW_STEP_S it is slow. Generous, so that a
# first call that starts a worker pool on a loaded machine is timed (and retimed), not killed.
DEADLINE_S = 30.0
MAKE_DEADLINE_S = 120.0  # building an env may load a dataset
FAST_TASKS, THOROUGH_TASKS = 2, 12
MAX_STEPS = 50  # turns per episode for envs without a turn limit of their own


@dataclasses.dataclass
class AuditSettings:
    """How hard to look. ``tasks``: task indices (or seeds, for envs without tasks) per env; ``thorough`` also
    wraps every answer in every format the prompt names and checks constant answers for skewed answer sets."""

    tasks: int = FAST_TASKS
    thorough: bool = False
    slow_step_s: float = SLOW_STEP_S
    deadline_s: float = DEADLINE_S
    seed: int = 0


@dataclasses.dataclass
class EnvAudit:
    """The audit of one env: what ran, what it found, how long it took."""

    env_id: str
    status: str = "audited"  # audited | skipped
    reason: str = ""
    tasks: list[int] = dataclasses.field(default_factory=list)
    single_turn: bool = True
    baseline: str = "non-answer"
    reference: str = "none"  # declared | partial | none
    strategies: list[str] = dataclasses.field(default_factory=list)
    findings: list[Finding] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    steps: int = 0
    max_step_s: float = 0.0

    def totals(self) -> dict[str, Any]:
        counts = {kind: sum(f.kind == kind for f in self.findings) for kind in verdicts.KINDS}
        return {"earning": counts[verdicts.EARNS_REWARD], "crashes": counts[verdicts.CRASH],
                "code_executed": counts[verdicts.CODE_EXECUTED], "state_leaks": counts[verdicts.STATE_LEAK],
                "slow_steps": counts[verdicts.SLOW_STEP], "honest_refused": counts[verdicts.HONEST_REFUSED],
                "max_step_seconds": round(self.max_step_s, 3)}

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.env_id, "status": self.status, "reason": self.reason, "tasks": self.tasks,
                "single_turn": self.single_turn, "baseline": self.baseline, "reference": self.reference,
                "strategies": self.strategies, "findings": [f.to_dict() for f in self.findings], "notes": self.notes,
                "timings": {"seconds": round(self.seconds, 3), "steps": self.steps,
                            "max_step_seconds": round(self.max_step_s, 3)},
                "totals": self.totals()}


def audit_env(env_id: str, settings: AuditSettings | None = None, *, env: Any = None,
              on_call: Callable[[str], None] | None = None) -> EnvAudit:
    """Run the battery against one registered env (or against ``env``, already built, reported as ``env_id``).

    Runs in this process without a deadline (``on_call`` hears of every env call before it starts);
    :func:`envgym.audit.audit_envs` adds the deadline by running each env in a child process."""
    import envgym

    settings = settings or AuditSettings()
    report = EnvAudit(env_id)
    start = time.perf_counter()
    if env is None:
        try:
            env = envgym.make(env_id, allow_unsafe=True)
        except Exception as error:  # an env that cannot be built is reported, and the audit goes on to the next
            needs_arguments = isinstance(error, TypeError) and "required" in str(error)
            report.status = "skipped" if needs_arguments else "audited"
            report.reason = f"could not build it: {type(error).__name__}: {error}"[:300]
            if not needs_arguments:
                report.findings.append(Finding(env_id, verdicts.CRASH, "make", [], report.reason))
            return report
    try:
        _Audit(env_id, env, settings, report, on_call).run()
    except Exception as error:  # reset, reference_action or wrong_action failed outside a policy's play
        report.findings.append(Finding(env_id, verdicts.CRASH, "setup", [], f"{type(error).__name__}: {error}"[:500]))
    finally:
        report.seconds = time.perf_counter() - start
    try:
        env.close()
    except Exception as error:  # closing is not part of the episode contract; say so and go on
        report.notes.append(f"close() raised {type(error).__name__}: {error}")
    return report


class _Audit:
    def __init__(self, env_id: str, env: Any, settings: AuditSettings, report: EnvAudit,
                 on_call: Callable[[str], None] | None):
        self.env_id, self.env, self.settings, self.report, self.on_call = env_id, env, settings, report, on_call
        unwrapped = env.unwrapped
        tasks = getattr(unwrapped, "tasks", None)
        count = settings.tasks if tasks is None else min(settings.tasks, len(tasks))
        self.slots = [{"index": i, "task_index": None if tasks is None else i, "seed": settings.seed + i}
                      for i in range(count)]
        self.task_of = {slot["index"]: (slot["task_index"] if tasks is not None else slot["seed"]) for slot in self.slots}
        report.tasks = list(self.task_of.values())
        spec = getattr(unwrapped, "spec", None)
        self.max_steps = getattr(spec, "max_turns", None) or MAX_STEPS
        self.marker_prefix = str(Path(tempfile.gettempdir()) / f"envgym-audit-{secrets.token_hex(6)}")

    def _play(self, slot: dict[str, Any], name: str, act: Any, marker: str | None = None) -> Play:
        result = play(self.env, slot, name, act, max_steps=self.max_steps, slow_s=self.settings.slow_step_s,
                      marker=marker, on_call=self.on_call)
        self.report.steps += result.steps
        self.report.max_step_s = max(self.report.max_step_s, result.max_step_s)
        if result.infra_error:
            self.report.notes.append(f"{name} on task {self.task_of[slot['index']]}: {result.infra_error} "
                                     "(reported as an error, not scored: see docs/audit.md)")
        return result

    def run(self) -> None:
        env, report = self.env, self.report
        reference, baseline, starts = {}, {}, {}
        wrong_declared = False
        for slot in self.slots:
            messages, _ = reset(env, slot, self.on_call)
            starts[slot["index"]] = observed(messages)
            wrong_declared = wrong_declared or env.wrong_action() is not None
            if env.reference_action() is not None:
                reference[slot["index"]] = self._play(slot, "reference", self._reference)
            baseline[slot["index"]] = self._play(slot, "baseline", self._wrong_or_non_answer)
        report.reference = "none" if not reference else "declared" if len(reference) == len(self.slots) else "partial"
        report.baseline = "wrong_action" if wrong_declared else "non-answer"
        lengths = [r.steps for r in (reference or baseline).values() if not r.crash]
        report.single_turn = bool(lengths) and all(steps == 1 for steps in lengths)
        gold = {s: inner_answer(r.first_action) for s, r in reference.items()} if report.single_turn else {}

        strategies: dict[str, Strategy] = {}
        plays: dict[str, dict[int, Play]] = {}
        for slot in self.slots:
            messages, _ = reset(env, slot, self.on_call)
            index = slot["index"]
            wrong = inner_answer(baseline[index].first_action) if report.baseline == "wrong_action" else None
            battery = build_strategies(messages, marker_prefix=self.marker_prefix, thorough=self.settings.thorough,
                                       reference_answer=gold.get(index), wrong_answer=wrong)
            for strategy in battery:
                strategies.setdefault(strategy.name, strategy)
                plays.setdefault(strategy.name, {})[index] = self._play(slot, strategy.name, strategy.act, strategy.marker)
        report.strategies = list(plays)
        self._retime_slow(reference, self._reference)
        self._retime_slow(baseline, self._wrong_or_non_answer)
        for name, by_slot in plays.items():
            self._retime_slow(by_slot, strategies[name].act, strategies[name].marker)
        every = [*reference.values(), *baseline.values(), *(r for by_slot in plays.values() for r in by_slot.values())]
        report.max_step_s = max((r.max_step_s for r in every), default=0.0)

        findings = [*verdicts.play_findings(self.env_id, "reference", reference, self.task_of, self.settings.slow_step_s),
                    *verdicts.play_findings(self.env_id, "baseline", baseline, self.task_of, self.settings.slow_step_s)]
        for name, by_slot in plays.items():
            findings += verdicts.play_findings(self.env_id, name, by_slot, self.task_of, self.settings.slow_step_s)
        findings += verdicts.earning_findings(self.env_id, strategies, plays, baseline, reference, gold,
                                              report.single_turn, self.task_of, self.settings.thorough)
        findings += verdicts.honest_findings(self.env_id, reference, baseline, self.task_of)
        findings += self._leaks(starts, reference, baseline)
        findings += self._stray_markers(strategies, {f.strategy for f in findings if f.kind == verdicts.CODE_EXECUTED})
        report.findings = findings
        if not reference:
            report.notes.append("no reference: reference_action() returned None, so no honest answer was checked")

    def _retime_slow(self, by_slot: dict[int, Play], act: Any, marker: str | None = None) -> None:
        """Play a slow episode again: a first call that warms a cache or starts a worker pool is no finding."""
        for index, result in list(by_slot.items()):
            if result.slow_steps:
                again = self._play(self.slots[index], result.strategy, act, marker)
                if not again.slow_steps:
                    self.report.notes.append(f"{result.strategy}: a step took {result.max_step_s:.2f} s, "
                                             f"{again.max_step_s:.2f} s played again (warm-up)")
                    by_slot[index] = again

    def _reference(self, history: list[Any]) -> Any:
        return self.env.reference_action()

    def _wrong_or_non_answer(self, history: list[Any]) -> Any:
        return self.env.wrong_action() or NON_ANSWER

    def _leaks(self, starts: dict[int, str], reference: dict[int, Play], baseline: dict[int, Play]) -> list[Finding]:
        """Replay every task after the battery: the same first messages, and the same reward for the same play."""
        leaks = []
        for slot in self.slots:
            index = slot["index"]
            messages, _ = reset(self.env, slot, self.on_call)
            task = self.task_of[index]
            if observed(messages) != starts[index]:
                leaks.append(Finding(self.env_id, verdicts.STATE_LEAK, "replay", [task],
                                     "the task's first messages differ after the adversarial episodes"))
                continue
            before = reference.get(index) or baseline[index]
            act = self._reference if index in reference else self._wrong_or_non_answer
            again = self._play(slot, before.strategy, act)
            if (again.reward, again.correct) != (before.reward, before.correct):
                leaks.append(Finding(self.env_id, verdicts.STATE_LEAK, before.strategy, [task],
                                     f"the same play earned {again.reward:.3f} (correct={again.correct}) after the "
                                     f"adversarial episodes, {before.reward:.3f} (correct={before.correct}) before"))
        return leaks

    def _stray_markers(self, strategies: dict[str, Strategy], reported: set[str]) -> list[Finding]:
        """Marker files that appeared after their step (code run later, e.g. by a background worker)."""
        found = []
        for path in Path(tempfile.gettempdir()).glob(Path(self.marker_prefix).name + "*"):
            owner = next((name for name, s in strategies.items() if s.marker == str(path)), path.name)
            path.unlink(missing_ok=True)
            if owner not in reported:
                found.append(Finding(self.env_id, verdicts.CODE_EXECUTED, owner, [], f"{path} appeared after its step"))
        return found

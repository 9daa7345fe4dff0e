"""Auditing one env: reference and honest-wrong plays, the battery, the replay that detects state leaks, and the
phases that reach further (several episodes, two seats, group rewards, the task generator).

The same env instance plays everything, as a trainer's would: episodes follow each other, so anything one
leaves behind (a mutated cached task, a counter) shows when the first task is replayed at the end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envgym.audit import verdicts
from envgym.audit.endpoints import OBEDIENT, JudgeUnavailable, judge_endpoint
from envgym.audit.judge_strategies import judge_strategies
from envgym.audit.play import Play, observed, play, reset
from envgym.audit.strategies import (
    NON_ANSWER,
    Strategy,
    answer_formats,
    build_strategies,
    example_styles,
    prompt_text,
    style_policy,
)
from envgym.audit.target import AuditTarget
from envgym.audit.tool_strategies import with_wrong_calls
from envgym.audit.verdicts import Finding, inner_answer
from envgym.core import Action
from envgym.multiagent import is_multi_agent

SLOW_STEP_S = 2.5
# audit_envs kills an env whose call runs past this (a hang); past SLOW_STEP_S it is slow. Generous, so that a
# first call that starts a worker pool on a loaded machine is timed (and retimed), not killed.
DEADLINE_S = 30.0
MAKE_DEADLINE_S = 120.0  # building an env may load a dataset; loading a model for token-level components too
FAST_TASKS, THOROUGH_TASKS = 2, 12
FAST_CUE_TASKS, THOROUGH_CUE_TASKS = 200, 300
FAST_NUM_GENERATIONS, THOROUGH_NUM_GENERATIONS = 4, 8
MAX_STEPS = 50  # turns per episode for envs without a turn limit of their own


@dataclasses.dataclass
class AuditSettings:
    """How hard to look. ``tasks``: task indices (or seeds, for envs without tasks) per env; ``thorough`` also
    wraps every answer in every format the prompt names and checks constant answers for skewed answer sets.

    ``cue_tasks``: tasks the blind learner draws (0: no cue check). ``num_generations``: episodes per group for group
    rewards. ``judge``: which judge the spec's judges ask: ``obedient`` (the built-in obedient judge), ``spec``
    (the spec's own base_url) or an endpoint URL. ``model``: the model (name or path) that token-level components
    (self-certainty, process rewards) run with."""

    tasks: int = FAST_TASKS
    thorough: bool = False
    slow_step_s: float = SLOW_STEP_S
    deadline_s: float = DEADLINE_S
    seed: int = 0
    cue_tasks: int = FAST_CUE_TASKS
    num_generations: int = FAST_NUM_GENERATIONS
    judge: str = OBEDIENT
    model: str = "smollm2"

    @classmethod
    def for_level(cls, thorough: bool, **overrides: Any) -> AuditSettings:
        """The fast (``make test``) or thorough (benchmark) setting, with ``overrides`` that are not None."""
        base = (
            cls(
                tasks=THOROUGH_TASKS,
                thorough=True,
                cue_tasks=THOROUGH_CUE_TASKS,
                num_generations=THOROUGH_NUM_GENERATIONS,
            )
            if thorough
            else cls()
        )
        return dataclasses.replace(base, **{k: v for k, v in overrides.items() if v is not None})


@dataclasses.dataclass
class EnvAudit:
    """The audit of one env (or recipe): what ran, what it found, how long it took."""

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
    target: dict[str, Any] = dataclasses.field(default_factory=dict)
    phases: list[str] = dataclasses.field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        counts = {name: sum(f.kind == kind for f in self.findings) for kind, name in verdicts.TOTAL_NAMES.items()}
        return {**counts, "max_step_seconds": round(self.max_step_s, 3)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.env_id,
            "status": self.status,
            "reason": self.reason,
            "target": self.target,
            "tasks": self.tasks,
            "single_turn": self.single_turn,
            "baseline": self.baseline,
            "reference": self.reference,
            "phases": self.phases,
            "strategies": self.strategies,
            "findings": [f.to_dict() for f in self.findings],
            "notes": self.notes,
            "timings": {
                "seconds": round(self.seconds, 3),
                "steps": self.steps,
                "max_step_seconds": round(self.max_step_s, 3),
            },
            "totals": self.totals(),
        }


def audit_env(
    target: str | AuditTarget,
    settings: AuditSettings | None = None,
    *,
    env: Any = None,
    on_call: Callable[[str], None] | None = None,
) -> EnvAudit:
    """Run the battery against one registered env or target (or against ``env``, already built, reported as
    ``target``'s label).

    Runs in this process without a deadline (``on_call`` hears of every env call before it starts);
    :func:`envgym.audit.audit_envs` adds the deadline by running each env in a child process."""
    target = AuditTarget(target) if isinstance(target, str) else target
    settings = settings or AuditSettings()
    report = EnvAudit(target.label, target=target.to_dict())
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        try:
            judge_url = stack.enter_context(judge_endpoint(target, settings)) if env is None else None
        except JudgeUnavailable as error:
            report.status, report.reason = "skipped", str(error)
            return report
        if env is None:
            try:
                env = target.make(judge_url)
            except Exception as error:  # an env that cannot be built is reported, and the audit goes on to the next
                needs_arguments = isinstance(error, TypeError) and "required" in str(error)
                report.status = "skipped" if needs_arguments else "audited"
                report.reason = f"could not build it: {type(error).__name__}: {error}"[:300]
                if not needs_arguments:
                    report.findings.append(Finding(report.env_id, verdicts.CRASH, "make", [], report.reason))
                return report
        auditor = Auditor(report.env_id, env, settings, report, on_call, target, judge_url)
        try:
            auditor.run()
        except Exception as error:  # reset, reference_action or wrong_action failed outside a policy's play
            report.findings.append(
                Finding(report.env_id, verdicts.CRASH, "setup", [], f"{type(error).__name__}: {error}"[:500])
            )
        finally:
            report.seconds = time.perf_counter() - start
        try:
            env.close()
        except Exception as error:  # closing is not part of the episode contract; say so and go on
            report.notes.append(f"close() raised {type(error).__name__}: {error}")
    return report


class Auditor:
    """One env's audit in progress: the env, its task slots, and how to play and time an episode on it. The
    phases beyond the battery (:mod:`~envgym.audit.multi_episode`, :mod:`~envgym.audit.collusion`,
    :mod:`~envgym.audit.groups`, :mod:`~envgym.audit.cue_check`) read what they need from it."""

    def __init__(
        self,
        env_id: str,
        env: Any,
        settings: AuditSettings,
        report: EnvAudit,
        on_call: Callable[[str], None] | None,
        target: AuditTarget | None = None,
        judge_url: str | None = None,
    ):
        self.env_id, self.env, self.settings, self.report, self.on_call = env_id, env, settings, report, on_call
        self.target, self.judge_url = target or AuditTarget(env_id), judge_url
        self.reference: dict[int, Play] = {}
        self.baseline: dict[int, Play] = {}
        unwrapped = env.unwrapped
        tasks = getattr(unwrapped, "tasks", None)
        self.has_tasks = tasks is not None
        self.seats: list[str] = []  # a multi-agent env's seats, read at its first reset
        count = settings.tasks if tasks is None else min(settings.tasks, len(tasks))
        self.slots = [
            {"index": i, "task_index": None if tasks is None else i, "seed": settings.seed + i} for i in range(count)
        ]
        self.task_of = {
            slot["index"]: (slot["task_index"] if tasks is not None else slot["seed"]) for slot in self.slots
        }
        report.tasks = list(self.task_of.values())
        spec = getattr(unwrapped, "spec", None)
        self.max_steps = getattr(spec, "max_turns", None) or MAX_STEPS
        self.marker_prefix = str(Path(tempfile.gettempdir()) / f"envgym-audit-{secrets.token_hex(6)}")

    def play(self, slot: dict[str, Any], name: str, act: Any, marker: str | None = None) -> Play:
        """Play ``act`` through one episode of ``slot``, counting its steps and time in the report."""
        result = play(
            self.env,
            slot,
            name,
            act,
            max_steps=self.max_steps,
            slow_s=self.settings.slow_step_s,
            marker=marker,
            on_call=self.on_call,
        )
        self.report.steps += result.steps
        self.report.max_step_s = max(self.report.max_step_s, result.max_step_s)
        if result.infra_error:
            self.report.notes.append(
                f"{name} on task {self.task_of[slot['index']]}: {result.infra_error} "
                "(reported as an error, not scored: see docs/audit.md)"
            )
        return result

    def run(self) -> None:
        env, report = self.env, self.report
        reference, baseline, starts, tools = self.reference, self.baseline, {}, {}
        wrong_declared = False
        for slot in self.slots:
            messages, info = reset(env, slot, self.on_call)
            starts[slot["index"]], tools[slot["index"]] = observed(messages), info.get("tools")
            if is_multi_agent(info):
                self.seats = list(info["agents"])
            wrong_declared = wrong_declared or env.wrong_action() is not None
            if env.reference_action() is not None:
                reference[slot["index"]] = self.play(slot, "reference", self.reference_policy)
            baseline[slot["index"]] = self.play(slot, "baseline", self.baseline_policy)
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
            battery = build_strategies(
                messages,
                marker_prefix=self.marker_prefix,
                thorough=self.settings.thorough,
                reference_answer=gold.get(index),
                wrong_answer=wrong,
                tools=tools[index],
            )
            battery += self._spec_strategies(wrong or NON_ANSWER, index in reference and report.single_turn)
            for strategy in battery:
                strategies.setdefault(strategy.name, strategy)
                plays.setdefault(strategy.name, {})[index] = self.play(
                    slot, strategy.name, strategy.act, strategy.marker
                )
        report.strategies = list(plays)
        self._retime_slow(reference, self.reference_policy)
        self._retime_slow(baseline, self.baseline_policy)
        for name, by_slot in plays.items():
            self._retime_slow(by_slot, strategies[name].act, strategies[name].marker)
        every = [*reference.values(), *baseline.values(), *(r for by_slot in plays.values() for r in by_slot.values())]
        report.max_step_s = max((r.max_step_s for r in every), default=0.0)

        findings = [
            *verdicts.play_findings(self.env_id, "reference", reference, self.task_of, self.settings.slow_step_s),
            *verdicts.play_findings(self.env_id, "baseline", baseline, self.task_of, self.settings.slow_step_s),
        ]
        for name, by_slot in plays.items():
            findings += verdicts.play_findings(self.env_id, name, by_slot, self.task_of, self.settings.slow_step_s)
        findings += verdicts.earning_findings(
            self.env_id,
            strategies,
            plays,
            baseline,
            reference,
            gold,
            report.single_turn,
            self.task_of,
            self.settings.thorough,
            styled=self._styled(baseline) if report.baseline == "wrong_action" else None,
        )
        findings += verdicts.honest_findings(self.env_id, reference, baseline, self.task_of)
        report.phases.append("battery")
        findings += self._phases()
        findings += self._leaks(starts, reference, baseline)
        findings += self._stray_markers(strategies, {f.strategy for f in findings if f.kind == verdicts.CODE_EXECUTED})
        report.findings = findings
        report.max_step_s = max(report.max_step_s, *(r.max_step_s for r in every), 0.0)
        if not reference:
            report.notes.append("no reference: reference_action() returned None, so no honest answer was checked")

    def _styled(self, baseline: dict[int, Play]) -> dict[int, list[Play]]:
        """The honest wrong answer in the style of each worked example of the prompt, per slot."""
        styled: dict[int, list[Play]] = {}
        for slot in self.slots:
            messages, _ = reset(self.env, slot, self.on_call)
            wrong = inner_answer(baseline[slot["index"]].first_action)
            if wrong is None:
                continue
            examples = sum(m.get("role") == "assistant" for m in messages)
            form = answer_formats(prompt_text(messages))[0]
            styled[slot["index"]] = [
                self.play(slot, f"baseline:example-style:{k}", style_policy(list(style), examples))
                for k, style in enumerate(example_styles(messages, wrong, form))
            ]
        return styled

    def _spec_strategies(self, wrong_answer: str, right_calls: bool) -> list[Strategy]:
        """Strategies that depend on the env's live state or on the reward spec: the right call with wrong calls
        beside it (single-turn envs whose reference makes calls), and attacks on the spec's judges."""
        extra = []
        if right_calls and with_wrong_calls(self.env.reference_action()) is not None:
            extra.append(
                Strategy(
                    "calls:right-plus-wrong",
                    "attack",
                    lambda history: with_wrong_calls(self.env.reference_action()),
                )
            )
        judges = self.target.components("judge")
        if judges:
            scale = int(judges[0].get("scale", 10))
            extra += judge_strategies(lambda: self.env.wrong_action() or NON_ANSWER, scale, wrong_answer)
        return extra

    def _phases(self) -> list[Finding]:
        """The checks beyond the single-episode battery, each where it applies."""
        from envgym.audit import collusion, cue_check, groups, multi_episode

        findings = []
        for name, phase in (
            ("multi-episode", multi_episode),
            ("collusion", collusion),
            ("groups", groups),
            ("cue-check", cue_check),
        ):
            if not phase.applies(self):
                continue
            try:
                findings += phase.findings(self)
            except Exception as error:  # an env call outside a policy's play failed: say where, go on
                detail = f"{type(error).__name__}: {error}"[:500]
                findings.append(Finding(self.env_id, verdicts.CRASH, f"phase:{name}", [], detail))
            self.report.phases.append(name)
        return findings

    def _retime_slow(self, by_slot: dict[int, Play], act: Any, marker: str | None = None) -> None:
        """Play a slow episode again: a first call that warms a cache or starts a worker pool is no finding."""
        for index, result in list(by_slot.items()):
            if result.slow_steps:
                again = self.play(self.slots[index], result.strategy, act, marker)
                if not again.slow_steps:
                    self.report.notes.append(
                        f"{result.strategy}: a step took {result.max_step_s:.2f} s, "
                        f"{again.max_step_s:.2f} s played again (warm-up)"
                    )
                    by_slot[index] = again

    def reset_slot(self, slot: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Reset the env to ``slot`` (its seed and task index), announced to ``on_call``."""
        return reset(self.env, slot, self.on_call)

    def seat_task(self, index: int) -> int:
        """The task index (or seed) a slot index of a phase's own slot list plays."""
        return index if self.has_tasks else self.settings.seed + index

    def reference_policy(self, history: list[Any]) -> Action | None:
        """The env's honest, correct action for its current state."""
        return self.env.reference_action()

    def baseline_policy(self, history: list[Any]) -> Action:
        """The honest wrong answer: the env's ``wrong_action()``, else "I don't know."."""
        return self.env.wrong_action() or NON_ANSWER

    def _leaks(self, starts: dict[int, str], reference: dict[int, Play], baseline: dict[int, Play]) -> list[Finding]:
        """Replay every task after the battery: the same first messages, and the same reward for the same play."""
        leaks = []
        for slot in self.slots:
            index = slot["index"]
            messages, _ = reset(self.env, slot, self.on_call)
            task = self.task_of[index]
            if observed(messages) != starts[index]:
                leaks.append(
                    Finding(
                        self.env_id,
                        verdicts.STATE_LEAK,
                        "replay",
                        [task],
                        "the task's first messages differ after the adversarial episodes",
                    )
                )
                continue
            before = reference.get(index) or baseline[index]
            act = self.reference_policy if index in reference else self.baseline_policy
            again = self.play(slot, before.strategy, act)
            if (again.reward, again.correct) != (before.reward, before.correct):
                leaks.append(
                    Finding(
                        self.env_id,
                        verdicts.STATE_LEAK,
                        before.strategy,
                        [task],
                        f"the same play earned {again.reward:.3f} (correct={again.correct}) after the "
                        f"adversarial episodes, {before.reward:.3f} (correct={before.correct}) before",
                    )
                )
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

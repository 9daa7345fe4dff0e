"""A reward spec applied to an env: a stack of the reward wrappers of :mod:`envgym.wrappers.rewards`.

``apply_reward(env, spec)`` builds, from the inside out:

1. :class:`SelectEnvComponents`: the env's own components the spec names (``source: env``), renamed to their spec
   names; the env's full report stays in ``info["env_reward_components"]``. It also decides the **answering
   turn** (``info["answer_turn"]``): the first turn the env marks with ``info["answer_turn"]``, else the turn
   that ends the episode. Answer components are scored there once; per-turn ones on every turn;
2. one shaping wrapper per per-turn component, each adding its *unweighted* value under its name
   (``PatternReward``, ``FormatReward``, ``LengthPenalty``, :class:`ToolCostReward`,
   :class:`~envgym.rewards.judge_reward.JudgeReward`);
3. one ``RewardNoise`` per noise component, on the unweighted value it applies to, on the turns where that
   component is scored, within its range;
4. :class:`ComposeReward`: gates, then weights; the reward is the sum. ``info["reward_raw_components"]`` keeps
   the values before gates and weights (group rewards read their gates there), ``info["reward_weights"]`` the
   weights (GDPO divides them out).

A failure the policy causes scores the component's minimum and is recorded in ``info["reward_failures"]``: an
answer component the env did not report on the answering turn (the policy never answered: it stalled with tool
calls until the turn limit), a judge reply the response broke, a value that is not a finite number.

Group components (``majority_vote``, ``self_consistency``...) are not computed here: the trainer adds them after a
group's episodes end (:mod:`envgym.agents.training.group_rewards`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

from envgym.core import Action, Env, Message, RewardRange, StepResult, Wrapper, reward_total
from envgym.rewards.judge_reward import JudgeReward, shared_judge
from envgym.rewards.spec import RewardComponent, RewardSpec, RewardSpecError, default_range
from envgym.wrappers.rewards import (
    FormatReward,
    LengthPenalty,
    PatternReward,
    RewardComponentWrapper,
    RewardNoise,
    record_failure,
)

__all__ = ["ComposeReward", "SelectEnvComponents", "ToolCostReward", "apply_reward", "scoring_of", "shared_judge"]


@dataclasses.dataclass(frozen=True)
class Scoring:
    """When a spec component is scored and what it can be worth, resolved against the env it wraps."""

    per_turn: bool
    low: float
    high: float


def scoring_of(spec: RewardSpec, env: Env, where: str = "reward") -> dict[str, Scoring]:
    """Every per-turn component's :class:`Scoring`: the spec's ``scope``/``range`` where it sets them, else the
    source's defaults, else (``source: env``) the env's declaration (``Env.reward_ranges``), else an answer grade
    in [0, 1]. A name the env declares it never reports is refused here, before any episode."""
    declared = env.unwrapped.reward_ranges
    out = {}
    for index, component in enumerate(spec.components):
        if component.kind != "step":
            continue
        bounds = default_range(component)
        scope = component.scope
        if component.source == "env":
            env_name = component.option("component") or component.name
            if declared and env_name not in declared:
                raise RewardSpecError(
                    f"{where}.components[{index}] reads env component {env_name!r}, which "
                    f"{type(env.unwrapped).__name__} never reports; it reports {sorted(declared)}"
                )
            own = declared.get(env_name, RewardRange())
            bounds = bounds or (own.low, own.high)
            scope = scope or ("turn" if own.per_turn else "answer")
        out[component.name] = Scoring(scope == "turn", *bounds)
    return out


def apply_reward(env: Env, spec: RewardSpec | dict[str, Any]) -> Env:
    """``env`` with its reward replaced by what ``spec`` (a :class:`RewardSpec` or its dict form) composes."""
    spec = RewardSpec.coerce(spec)
    scoring = scoring_of(spec, env)
    wrapped: Env = SelectEnvComponents(env, spec.of_kind("step"), scoring)
    for component in spec.of_kind("step"):
        wrapped = _shaping_wrapper(wrapped, component, scoring[component.name].per_turn)
    for component in spec.of_kind("noise"):
        target = scoring[component.option("applies_to")]
        wrapped = RewardNoise(
            wrapped,
            p=component.option("rate"),
            mode=component.source,
            sigma=component.options.get("sigma", 0.5),
            component=component.option("applies_to"),
            seed=component.option("seed"),
            low=target.low,
            high=target.high,
            per_turn=target.per_turn,
        )
    return ComposeReward(wrapped, spec, scoring)


def _shaping_wrapper(env: Env, component: RewardComponent, per_turn: bool) -> Env:
    options, name = component.options, component.name
    if component.source == "pattern":
        patterns = [options["pattern"]] if options["pattern"] is not None else list(options["patterns"])
        return PatternReward(env, patterns=patterns, cap=options["cap"], weight=1.0, name=name, per_turn=per_turn)
    if component.source == "format":
        return FormatReward(
            env,
            tags=options["tags"],
            pattern=options["pattern"],
            penalty=options["penalty"],
            weight=1.0,
            name=name,
            per_turn=per_turn,
        )
    if component.source == "length":
        return LengthPenalty(
            env, max_length=options["max_length"], buffer=options["buffer"], weight=1.0, name=name, per_turn=per_turn
        )
    if component.source == "tool_cost":
        return ToolCostReward(env, weight=1.0, name=name, per_turn=per_turn)
    if component.source == "judge":
        return JudgeReward(env, component)
    return env  # source "env": SelectEnvComponents already put it in place


class SelectEnvComponents(Wrapper):
    """Keeps the env components a spec names, under their spec names, unweighted (a component the env reports
    with a weight in ``info["reward_weights"]`` is divided by it, as GDPO does), and marks the answering turn.

    A per-turn component the env leaves out of a turn counts 0 there. An answer component is read on the
    answering turn only (0 on the others); missing there, the policy never gave what it grades (it stalled until
    the turn limit): it scores its minimum and is recorded in ``info["reward_failures"]``.
    """

    def __init__(self, env: Env, step_components: list[RewardComponent], scoring: dict[str, Scoring]):
        super().__init__(env)
        self.wanted = {c.name: c.option("component") or c.name for c in step_components if c.source == "env"}
        self.scoring = scoring
        self.declared = bool(env.unwrapped.reward_ranges)
        self._answered = False
        self._warned: set[str] = set()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._answered = False
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        reported = info.get("reward_components")
        reported = dict(reported) if reported is not None else {"env": float(reward)}
        info["env_reward_components"] = reported
        answer_turn = not self._answered and bool(info.get("answer_turn") or terminated or truncated)
        self._answered = self._answered or answer_turn
        info["answer_turn"] = answer_turn
        # Unweighted: a value the env (or a wrapper inside it) weighted is divided back; the spec's weight replaces it.
        env_weights = info.pop("reward_weights", None) or {}
        components = {}
        for name, env_name in self.wanted.items():
            scoring = self.scoring[name]
            if scoring.per_turn or (answer_turn and env_name in reported):
                components[name] = _unweighted(reported.get(env_name, 0.0), env_weights.get(env_name, 1.0))
            elif not answer_turn:
                components[name] = 0.0
            else:
                components[name] = scoring.low
                if "error" not in info:
                    record_failure(info, name, f"the episode ended without an answer for {env_name!r}")
                    self._warn_undeclared(env_name, reported)
        info["reward_components"] = components
        return messages, reward_total(components), terminated, truncated, info

    def _warn_undeclared(self, env_name: str, reported: dict[str, float]) -> None:
        """An env that declares nothing cannot tell a typo from a missing answer: say so once."""
        if self.declared or env_name in self._warned:
            return
        self._warned.add(env_name)
        warnings.warn(
            f"{type(self.env.unwrapped).__name__} ended an episode without reporting {env_name!r} (it reported "
            f"{sorted(reported)}); scored as the policy's failure. Declare Env.reward_ranges to have a misspelt "
            "name refused when the spec is applied.",
            stacklevel=2,
        )


def _unweighted(value: float, weight: float) -> float:
    return float(value) / float(weight) if weight else 0.0


class ToolCostReward(RewardComponentWrapper):
    """Minus the number of tool calls the turn made (``info["tool_calls"]``, a list or a count), so that the
    component's weight is the cost of one call (OTC-style tool-efficiency shaping)."""

    name = "tool_cost"

    def score(self, action: Action, messages: list[Message], info: dict[str, Any]) -> float:
        calls = info.get("tool_calls", 0)
        return -float(len(calls) if isinstance(calls, list) else int(calls or 0))


class ComposeReward(Wrapper):
    """The last stage: gates, then weights (see the module docstring). The reward is the sum of the weighted,
    gated per-turn components; ``reward/<name>`` logs each of them. A value that is not a finite number (a NaN a
    response provoked) scores the component's minimum, recorded as a policy failure."""

    def __init__(self, env: Env, spec: RewardSpec, scoring: dict[str, Scoring]):
        super().__init__(env)
        self.reward_spec = spec
        self.step_components = spec.of_kind("step")
        self.scoring = scoring

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        raw = {name: float(value) for name, value in (info.get("reward_components") or {}).items()}
        for name, value in raw.items():
            if not math.isfinite(value) and name in self.scoring:
                low = self.scoring[name].low
                raw[name] = low if math.isfinite(low) else 0.0
                record_failure(info, name, f"the value was {value}, not a finite number")
        info["reward_raw_components"] = raw
        info["reward_components"] = composed = {}
        info["reward_weights"] = {}
        for component in self.step_components:
            value = raw.get(component.name, 0.0)
            if component.gate is not None and raw.get(component.gate, 0.0) <= 0.0:
                value = 0.0
            composed[component.name] = component.weight * value
            info["reward_weights"][component.name] = component.weight
        return messages, reward_total(composed), terminated, truncated, info

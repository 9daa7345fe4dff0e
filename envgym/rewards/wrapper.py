"""A reward spec applied to an env: a stack of the reward wrappers of :mod:`envgym.wrappers.rewards`.

``apply_reward(env, spec)`` builds, from the inside out:

1. :class:`SelectEnvComponents`: the env's own components the spec names (``source: env``), renamed to their spec
   names; the env's full report stays in ``info["env_reward_components"]``;
2. one shaping wrapper per per-turn component, each adding its *unweighted* value under its name
   (``PatternReward``, ``FormatReward``, ``LengthPenalty``, :class:`ToolCostReward`, :class:`JudgeReward`);
3. one ``RewardNoise`` per noise component, on the unweighted value it applies to;
4. :class:`ComposeReward`: gates, then weights; the reward is the sum. ``info["reward_raw_components"]`` keeps
   the values before gates and weights (group rewards read their gates there), ``info["reward_weights"]`` the
   weights (GDPO divides them out).

Group components (``majority_vote``, ``self_consistency``) are not computed here: the trainer adds them after a
group's episodes end (:mod:`envgym.agents.training.group_rewards`).
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Wrapper, action_text, reward_total
from envgym.rewards.spec import RewardComponent, RewardSpec
from envgym.wrappers.rewards import FormatReward, LengthPenalty, PatternReward, RewardComponentWrapper, RewardNoise


def apply_reward(env: Env, spec: RewardSpec | dict[str, Any]) -> Env:
    """``env`` with its reward replaced by what ``spec`` (a :class:`RewardSpec` or its dict form) composes."""
    spec = RewardSpec.coerce(spec)
    wrapped: Env = SelectEnvComponents(env, spec.of_kind("step"))
    for component in spec.of_kind("step"):
        wrapped = _shaping_wrapper(wrapped, component)
    for component in spec.of_kind("noise"):
        wrapped = RewardNoise(wrapped, p=component.option("rate"), mode=component.source,
                              sigma=component.options.get("sigma", 0.5), component=component.option("applies_to"),
                              seed=component.option("seed"))
    return ComposeReward(wrapped, spec)


def _shaping_wrapper(env: Env, component: RewardComponent) -> Env:
    options, name = component.options, component.name
    if component.source == "pattern":
        patterns = [options["pattern"]] if options["pattern"] is not None else list(options["patterns"])
        return PatternReward(env, patterns=patterns, cap=options["cap"], weight=1.0, name=name)
    if component.source == "format":
        return FormatReward(env, tags=options["tags"], pattern=options["pattern"], penalty=options["penalty"],
                            weight=1.0, name=name)
    if component.source == "length":
        return LengthPenalty(env, max_length=options["max_length"], buffer=options["buffer"], weight=1.0, name=name)
    if component.source == "tool_cost":
        return ToolCostReward(env, weight=1.0, name=name)
    if component.source == "judge":
        return JudgeReward(env, component)
    return env  # source "env": SelectEnvComponents already put it in place


class SelectEnvComponents(Wrapper):
    """Keeps the env components a spec names, under their spec names, unweighted (a component the env reports
    with a weight in ``info["reward_weights"]`` is divided by it, as GDPO does).

    An env may report a component on some turns only (a tool env's ``correct`` on the answering turn): a turn
    without it counts 0. A component the env never reports in a whole episode is a misconfigured spec, reported
    as the episode's ``info["error"]`` (a failure, never a silent 0) with the names the env does report.
    """

    def __init__(self, env: Env, step_components: list[RewardComponent]):
        super().__init__(env)
        self.wanted = {c.name: c.option("component") or c.name for c in step_components if c.source == "env"}
        self._seen: set[str] = set()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._seen = set()
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        reported = info.get("reward_components")
        reported = dict(reported) if reported is not None else {"env": float(reward)}
        info["env_reward_components"] = reported
        self._seen.update(reported)
        # Unweighted: a value the env (or a wrapper inside it) weighted is divided back; the spec's weight replaces it.
        env_weights = info.pop("reward_weights", None) or {}
        info["reward_components"] = {name: _unweighted(reported.get(env_name, 0.0), env_weights.get(env_name, 1.0))
                                     for name, env_name in self.wanted.items()}
        missing = sorted(env_name for env_name in self.wanted.values() if env_name not in self._seen)
        if (terminated or truncated) and missing and "error" not in info:
            info["error"] = (f"the reward spec names env components {missing}, which this env never reported in the "
                             f"episode; it reported {sorted(self._seen)}")
        return messages, reward_total(info["reward_components"]), terminated, truncated, info


def _unweighted(value: float, weight: float) -> float:
    return float(value) / float(weight) if weight else 0.0


class ToolCostReward(RewardComponentWrapper):
    """Minus the number of tool calls the turn made (``info["tool_calls"]``, a list or a count), so that the
    component's weight is the cost of one call (OTC-style tool-efficiency shaping)."""

    name = "tool_cost"

    def score(self, action: Action, messages: list[Message], info: dict[str, Any]) -> float:
        calls = info.get("tool_calls", 0)
        return -float(len(calls) if isinstance(calls, list) else int(calls or 0))


class JudgeReward(Wrapper):
    """An LLM judge's score in [0, 1] (:class:`envgym.verifiers.judge.Judge`) on the turn that ends the episode.

    The judge reads the task's prompt (its last user message), the final response and, with ``reference: true``,
    the task's label. Judges with the same settings are shared by every env of a process, so its cache serves the
    whole group. A judge that cannot be reached (after its retries) or gives no score is the episode's
    ``info["error"]``: the trainer drops the episode and eval counts it in ``n_failed``; it is never a 0.
    """

    def __init__(self, env: Env, component: RewardComponent):
        super().__init__(env)
        self.component = component
        self.judge = shared_judge(component)

    def step(self, action: Action) -> StepResult:
        from envgym.verifiers.judge import JudgeError

        messages, reward, terminated, truncated, info = self.env.step(action)
        components = info.setdefault("reward_components", {})
        components[self.component.name] = 0.0
        if not (terminated or truncated) or "error" in info:
            return messages, reward_total(components), terminated, truncated, info
        task = self.env.task
        question = _question(task.messages if task is not None else [])
        reference = str(task.answer) if self.component.option("reference") and task is not None and \
            task.answer is not None else None
        response = action_text(action)
        part = self.component.option("part")
        if part is not None:  # judge one named part of the reply (a proof), as the env reports it in info["parts"]
            parts = info.get("parts") or {}
            if part not in parts:
                if info.get("action_valid") is False:  # no answer, so nothing to judge: the policy's mistake
                    return messages, reward_total(components), terminated, truncated, info
                info["error"] = (f"judge {self.component.name!r} reads part {part!r}, which the env did not report "
                                 f"(its parts: {sorted(parts)})")
                return messages, reward_total(components), terminated, truncated, info
            response = str(parts[part])
        try:
            judgement = self.judge.score(question, response, reference)
        except JudgeError as error:
            info["error"] = f"judge {self.component.name!r} failed: {error}"
            return messages, reward_total(components), terminated, truncated, info
        if judgement.score is None:
            info["error"] = (f"judge {self.component.name!r} gave no score after {judgement.attempts} attempts; "
                             f"its last reply: {judgement.reply[:200]!r}")
        else:
            components[self.component.name] = judgement.score
        info.setdefault("judge", {})[self.component.name] = {"score": judgement.score, "cached": judgement.cached}
        return messages, reward_total(components), terminated, truncated, info


def _question(messages: list[Message]) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    return action_text(users[-1]) if users else ""


_JUDGE_KEYS = ("base_url", "model", "rubric", "scale", "timeout", "retries", "cache_size", "api_key_env",
               "max_tokens", "examples")
_judges: dict[tuple, Any] = {}
_judges_lock = threading.Lock()


def shared_judge(component: RewardComponent) -> Any:
    """One :class:`~envgym.verifiers.judge.Judge` per distinct setting in this process (its cache is shared)."""
    from envgym.verifiers.judge import DEFAULT_GROUP_RUBRIC, DEFAULT_RUBRIC, DEFAULT_STEP_RUBRIC, Judge

    options = component.options
    # judge (pointwise), judge_group (relative) and a process judge (per step) differ in rubric only
    key = (component.source, json.dumps({k: v for k, v in options.items() if k in _JUDGE_KEYS}, sort_keys=True))
    own_rubric = options["rubric"]
    with _judges_lock:
        if key not in _judges:
            api_key = os.environ.get(options["api_key_env"]) if options["api_key_env"] else None
            pointwise = DEFAULT_STEP_RUBRIC if component.source == "process" else DEFAULT_RUBRIC
            _judges[key] = Judge(options["base_url"], options["model"], rubric=own_rubric or pointwise,
                                 group_rubric=own_rubric or DEFAULT_GROUP_RUBRIC,
                                 scale=options["scale"], api_key=api_key, timeout=options["timeout"],
                                 retries=options["retries"], cache_size=options["cache_size"],
                                 max_tokens=options["max_tokens"], examples=options["examples"])
        return _judges[key]


class ComposeReward(Wrapper):
    """The last stage: gates, then weights (see the module docstring). The reward is the sum of the weighted,
    gated per-turn components; ``reward/<name>`` logs each of them."""

    def __init__(self, env: Env, spec: RewardSpec):
        super().__init__(env)
        self.reward_spec = spec
        self.step_components = spec.of_kind("step")

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        raw = {name: float(value) for name, value in (info.get("reward_components") or {}).items()}
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

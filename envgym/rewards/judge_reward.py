"""The ``judge`` component of a reward spec: an LLM judge's score of the episode's answer, and the judges shared by
every env of a process (their caches serve whole groups)."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Wrapper, action_text, reward_total
from envgym.rewards.spec import RewardComponent
from envgym.wrappers.rewards import is_answer_turn, record_failure


class JudgeReward(Wrapper):
    """An LLM judge's score in [0, 1] (:class:`envgym.verifiers.judge.Judge`) on the answering turn.

    The judge reads the task's prompt (its last user message), the final response and, with ``reference: true``,
    the task's label, each as data (:mod:`envgym.verifiers.judge_prompt`). What the policy can cause scores 0 and
    is recorded in ``info["reward_failures"]``: a response that writes the judge's grammar (never sent), a reply
    its response broke so that it carries no score. What it cannot cause is the episode's ``info["error"]``
    (dropped by the trainer, ``n_failed`` in eval): a judge that cannot be reached after its retries or refuses
    the request.
    """

    def __init__(self, env: Env, component: RewardComponent):
        super().__init__(env)
        self.component = component
        self.judge = shared_judge(component)

    def step(self, action: Action) -> StepResult:
        from envgym.verifiers.judge import JudgeError

        messages, reward, terminated, truncated, info = self.env.step(action)
        name = self.component.name
        components = info.setdefault("reward_components", {})
        components[name] = 0.0
        if not is_answer_turn(terminated, truncated, info) or "error" in info:
            return messages, reward_total(components), terminated, truncated, info
        task = self.env.task
        question = _question(task.messages if task is not None else [])
        reference = (
            str(task.answer)
            if self.component.option("reference") and task is not None and task.answer is not None
            else None
        )
        response = action_text(action)
        part = self.component.option("part")
        if part is not None:  # judge one named part of the reply (a proof), as the env reports it in info["parts"]
            parts = info.get("parts") or {}
            if part not in parts:
                if info.get("action_valid") is False:  # no answer, so nothing to judge: the policy's mistake
                    record_failure(info, name, f"the env refused the reply, so it has no {part!r} to judge")
                    return messages, reward_total(components), terminated, truncated, info
                info["error"] = (
                    f"judge {name!r} reads part {part!r}, which the env did not report (its parts: {sorted(parts)})"
                )
                return messages, reward_total(components), terminated, truncated, info
            response = str(parts[part])
        try:
            judgement = self.judge.score(question, response, reference)
        except JudgeError as error:
            info["error"] = f"judge {name!r} failed: {error}"
            return messages, reward_total(components), terminated, truncated, info
        if judgement.withheld is not None:
            record_failure(info, name, f"withheld from the judge: {judgement.withheld}")
        elif judgement.score is None:
            record_failure(
                info,
                name,
                f"the judge's reply had no score after {judgement.attempts} attempts: {judgement.reply[:200]!r}",
            )
        else:
            components[name] = judgement.score
        info.setdefault("judge", {})[name] = {"score": judgement.score, "cached": judgement.cached}
        return messages, reward_total(components), terminated, truncated, info


def _question(messages: list[Message]) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    return action_text(users[-1]) if users else ""


_JUDGE_KEYS = (
    "base_url",
    "model",
    "rubric",
    "scale",
    "timeout",
    "retries",
    "cache_size",
    "api_key_env",
    "max_tokens",
    "examples",
    "json_mode",
)
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
            _judges[key] = Judge(
                options["base_url"],
                options["model"],
                rubric=own_rubric or pointwise,
                group_rubric=own_rubric or DEFAULT_GROUP_RUBRIC,
                scale=options["scale"],
                api_key=api_key,
                timeout=options["timeout"],
                retries=options["retries"],
                cache_size=options["cache_size"],
                max_tokens=options["max_tokens"],
                examples=options["examples"],
                json_mode=options["json_mode"],
            )
        return _judges[key]

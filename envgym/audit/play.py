"""Playing one strategy through one episode, timing every env call.

Calls run in the caller's thread: an env that hangs inside C code holds the GIL, so no thread-based deadline
could take control back. ``on_call(what)`` is told before each call instead; :func:`envgym.audit.audit_envs`
runs each env in a child process that reports its calls this way, and kills a child whose call passes the
deadline (a ``slow_step`` finding naming the call).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envgym.core import Action, Message, action_text

INFRA_ERROR = "sandbox infra_error"


@dataclasses.dataclass
class Play:
    """What happened when one strategy played one episode (one task index and seed)."""

    strategy: str
    slot: int
    reward: float = 0.0
    correct: bool | None = None
    steps: int = 0
    terminated: bool = False
    all_valid: bool = True
    max_step_s: float = 0.0
    slow_steps: int = 0
    crash: str | None = None
    error: str | None = None
    infra_error: str | None = None
    code_executed: bool = False
    first_action: str | None = None
    stopped: str | None = None


def timed(function: Callable[[], Any], what: str, on_call: Callable[[str], None] | None) -> tuple[Any, float]:
    """``(result, seconds)`` of ``function()``, announced to ``on_call`` first."""
    if on_call is not None:
        on_call(what)
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def observed(messages: Any) -> str:
    """A canonical text of messages, to compare the start of an episode before and after the battery."""
    return json.dumps(messages, sort_keys=True, default=repr)


def reset(
    env: Any,
    slot: dict[str, Any],
    on_call: Callable[[str], None] | None = None,
) -> tuple[list[Message], dict[str, Any]]:
    """Reset ``env`` to the audit's episode ``slot`` (its seed and, when the env has tasks, its task index)."""
    options = {"task_index": slot["task_index"]} if slot["task_index"] is not None else None
    (messages, info), _ = timed(lambda: env.reset(seed=slot["seed"], options=options), "reset", on_call)
    return messages, info


def play(
    env: Any,
    slot: dict[str, Any],
    strategy: str,
    act: Callable[[list[Message]], Action | None],
    *,
    max_steps: int,
    slow_s: float,
    marker: str | None = None,
    on_call: Callable[[str], None] | None = None,
) -> Play:
    """Reset to ``slot`` and play ``act`` until the episode ends (or ``max_steps`` turns, or ``act`` returns None).

    An exception out of ``reset`` or ``step`` is recorded as the play's ``crash``, never raised.
    """
    result = Play(strategy, slot["index"])
    try:
        history, _ = reset(env, slot, on_call)
    except Exception as error:  # an env that cannot start an episode after the previous one: a crash
        result.crash = f"reset raised {type(error).__name__}: {error}"[:500]
        return result
    history = list(history)
    for _ in range(max_steps):
        action = act(history)
        if action is None:
            result.stopped = f"no action at turn {result.steps + 1}"
            break
        if result.first_action is None:
            result.first_action = action_text(action) if isinstance(action, (str, dict)) else repr(action)
        try:
            (messages, reward, terminated, truncated, info), seconds = timed(
                lambda action=action: env.step(action),
                f"step {result.steps + 1} of {strategy} on slot {slot['index']}",
                on_call,
            )
        except Exception as error:  # a policy's action must never raise out of step
            result.crash = f"step {result.steps + 1} raised {type(error).__name__}: {error}"[:500]
            break
        finally:
            if marker is not None and Path(marker).exists():
                result.code_executed = True
                Path(marker).unlink(missing_ok=True)  # so the next task's play starts clean
        result.steps += 1
        result.max_step_s = max(result.max_step_s, seconds)
        result.slow_steps += seconds > slow_s
        result.reward += float(reward)
        _read_info(result, info)
        history += [{"role": "assistant", "content": action_text(action)}, *messages]
        if terminated or truncated:
            result.terminated = bool(terminated)
            break
    return result


def _read_info(result: Play, info: dict[str, Any]) -> None:
    if "correct" in info:
        result.correct = bool(info["correct"])
    if info.get("action_valid") is False:
        result.all_valid = False
    error = info.get("error")
    if error:
        text = str(error)[:500]
        if text.startswith(INFRA_ERROR):
            result.infra_error = result.infra_error or text
        else:
            result.error = result.error or text

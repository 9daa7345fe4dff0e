"""check_env: gymnasium's API checker plus the properties RL on LLMs depends on.

Gymnasium's checker covers spaces, seeding and return types; its warnings count as failures here. On top:
- determinism per seed and per task (GRPO groups rely on G resets of one task being identical),
- finite float rewards and strict bools,
- JSON-serializable info (episodes are logged and sent over HTTP),
- reward components that sum to the reward,
- the failure contract: ``info["error"]`` is only for failures that are not the policy's fault (trainers drop
  those episodes), so a probe action (a policy mistake at worst) must never produce it; a policy mistake is
  ``action_valid=False`` with its message in ``action_error``,
- the bad-input contract: step before reset and after the end raise ResetNeeded; a wrong action type
  raises InvalidAction and leaves the episode untouched.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

from envgym.core import Env, InvalidAction, ResetNeeded

DEFAULT_PROBE_ACTIONS = (
    "",
    "I am not sure.",
    "<answer>1</answer>",
    "<guess>50</guess>",
    "\\boxed{0}",
    "```python\nprint(1)\n```",
)


def check_env(
    env: Env,
    *,
    probe_actions: Sequence[Any] = DEFAULT_PROBE_ACTIONS,
    max_steps: int = 12,
    seeds: Sequence[int] = (0, 1),
) -> None:
    """Raise ``AssertionError`` (or the env's own error) if ``env`` breaks the contract; return None if not.

    ``probe_actions`` are replayed turn by turn (cycling) to compare trajectories; envs with a meaningful
    action vocabulary can pass their own.
    """
    if not isinstance(env, gymnasium.Env):
        raise TypeError(f"check_env needs a gymnasium/envgym Env, got {type(env).__name__}")
    _check_with_gymnasium(env)
    for seed in seeds:
        for options in _task_options(env):
            first = _play(env, seed, options, probe_actions, max_steps)
            second = _play(env, seed, options, probe_actions, max_steps)
            assert first == second, (
                f"not deterministic: two episodes with seed={seed}, options={options} and the same actions differ:\n"
                f"{_first_difference(first, second)}"
            )
    _check_bad_input(env, probe_actions, max_steps)


def _check_with_gymnasium(env: Env) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gymnasium_check_env(env.unwrapped, skip_close_check=False)
    # Frame rates mean nothing for text envs, and the wrapped-env notice is expected (we pass the unwrapped env).
    ignored = ("different from the unwrapped", "render fps")
    problems = [str(w.message) for w in caught if not any(text in str(w.message) for text in ignored)]
    assert not problems, "gymnasium's env checker warned:\n" + "\n".join(problems)


def _task_options(env: Env) -> list[dict[str, Any] | None]:
    tasks = env.unwrapped.tasks
    if tasks is None:
        return [None]
    return [{"task_index": i} for i in range(min(2, len(tasks)))]


def _play(env: Env, seed: int, options: dict[str, Any] | None, actions: Sequence[Any], max_steps: int) -> list[Any]:
    messages, info = env.reset(seed=seed, options=options)
    _check_jsonable(info, "reset info")
    trace: list[Any] = [_canonical(messages), _canonical(info)]
    for turn in range(max_steps):
        result = env.step(actions[turn % len(actions)])
        _check_step_result(result)
        trace.append(_canonical(result))
        if result[2] or result[3]:
            break
    return trace


def _check_step_result(result: tuple) -> None:
    assert isinstance(result, tuple) and len(result) == 5, (
        "step must return (messages, reward, terminated, truncated, info)"
    )
    messages, reward, terminated, truncated, info = result
    assert isinstance(messages, list), f"step messages must be a list, got {type(messages).__name__}"
    assert type(reward) is float and math.isfinite(reward), f"reward must be a finite float, got {reward!r}"
    assert type(terminated) is bool and type(truncated) is bool, "terminated and truncated must be bools"
    _check_jsonable(info, "step info")
    assert "error" not in info, (
        f"step reported info['error']={info['error']!r} for a probe action; 'error' means the env, verifier or "
        f"sandbox failed (never the policy's fault): report a bad action as info['action_valid']=False with the "
        f"message in info['action_error'], and fix the env if it really failed"
    )
    if "action_error" in info:
        assert isinstance(info["action_error"], str), (
            f"info['action_error'] must be a string, got {info['action_error']!r}"
        )
    components = info.get("reward_components")
    if components is not None:
        total = sum(float(v) for v in components.values())
        assert math.isclose(total, reward, rel_tol=1e-9, abs_tol=1e-9), (
            f"reward components {components} sum to {total}, but the reward is {reward}"
        )


def _check_jsonable(value: Any, what: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise AssertionError(f"{what} is not JSON-serializable: {error}") from None


def _check_bad_input(env: Env, actions: Sequence[Any], max_steps: int) -> None:
    if env.spec is not None:
        fresh = env.spec.make()
        try:
            _expect(ResetNeeded, lambda: fresh.step("hello"), "step() before reset()")
        finally:
            fresh.close()
    messages, _ = env.reset(seed=0)
    for bad in (None, 42, ["a list"], {"role": "user", "content": "not an assistant turn"}):
        _expect(InvalidAction, lambda bad=bad: env.step(bad), f"step({bad!r})")
    # The rejected actions left the episode untouched: it plays exactly like a fresh one.
    after_rejections = _canonical(env.step(actions[0]))
    env.reset(seed=0)
    assert _canonical(env.step(actions[0])) == after_rejections, "a rejected action changed the episode's state"
    env.reset(seed=0)
    for turn in range(max_steps):
        _, _, terminated, truncated, _ = env.step(actions[turn % len(actions)])
        if terminated or truncated:
            _expect(ResetNeeded, lambda: env.step(actions[0]), "step() after the episode ended")
            break


def _expect(error_type: type[BaseException], call: Any, what: str) -> None:
    try:
        call()
    except error_type:
        return
    except Exception as error:
        raise AssertionError(
            f"{what} should raise {error_type.__name__}, raised {type(error).__name__}: {error}"
        ) from error
    raise AssertionError(f"{what} should raise {error_type.__name__}, but it returned normally")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def _first_difference(first: list[Any], second: list[Any]) -> str:
    for i, (a, b) in enumerate(zip(first, second)):
        if a != b:
            return f"entry {i}:\n  {a[:300]}\n  {b[:300]}"
    return f"lengths differ: {len(first)} vs {len(second)}"

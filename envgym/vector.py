"""Vectorized envs for LLM rollouts: lists in, lists out, and envs that finish at different turns.

Unlike ``gymnasium.vector`` (fixed-shape arrays, every env steps every call), a batch of conversations has
episodes of different lengths, so ``step`` takes ``None`` (or omits the index in a dict) for envs that are not
acting this turn. Each env keeps its own RNG (``reset(seed=s)`` seeds env i with ``s + i``); nothing is
seeded globally.

Failures are never rewards: an exception inside one env, or a call that overruns ``step_timeout``, becomes
that env's ``info["error"]`` (with ``truncated=True`` and reward 0) and the rest of the batch carries on.
A hung env is replaced by a fresh one from its factory (see :mod:`envgym.vector_backends` for how each
backend stops it, and what happens to the envs that shared its worker process).

Autoreset modes and the differences from ``gymnasium.vector`` are documented on :class:`VectorEnv`.

Where the envs run is a backend: ``sync`` (a loop in this thread), ``thread`` (a thread pool: envs whose
steps wait on I/O, sandboxes or servers), ``process`` (worker processes: CPU-heavy verifiers), and ``ray``
(actors, from ``envgym.server``).
"""

from __future__ import annotations

import asyncio
import functools
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from envgym.core import Action, Message, ResetNeeded
from envgym.vector_backends import BACKENDS, Call, EnvFactory, Replaced, error_result

AUTORESET_MODES = ("next_step", "same_step", "disabled")


class VectorEnv:
    """A batch of envs stepped together (see the module docstring). Build one with :func:`make_vec`.

    ``step_timeout``: seconds a reset or step of one env may take before it is reported as
    ``info["error"] = "step timeout after Xs"`` and the env is replaced (``None``: wait forever).

    Autoreset (``autoreset_mode``), as in Gymnasium 1.x:

    - ``"next_step"`` (default): the step that ends an episode returns its own last messages, reward and
      ``terminated``/``truncated``; the *next* ``step`` that gives that env an action resets it instead (the
      action is ignored) and returns the first messages of the new episode with reward 0, both flags False and
      the reset's info.
    - ``"same_step"``: the ending step resets the env at once and returns the new episode's first messages; the
      finished episode's last messages and info are in ``info["final_observation"]`` / ``info["final_info"]``
      and the reset's info in ``info["reset_info"]``. The finished step's reward and flags are returned as they
      were. (Gymnasium 0.29's behaviour, and envgym's ``autoreset=True`` before.)
    - ``"disabled"``: an ended env stays ended; stepping it reports ``ResetNeeded`` until ``reset``.

    ``gymnasium.vector.AutoresetMode`` members are accepted too.

    An autoreset uses the ``options`` of that env's last explicit ``reset`` (a GRPO group keeps its
    ``task_index``) and ``seed=None``, so the env draws its next episode from its own RNG stream, which the last
    explicit ``reset(seed=...)`` seeded: a seeded run replays exactly, episode after episode. An env replaced
    after a failure has lost that stream, so its next autoreset is seeded with
    ``numpy.random.SeedSequence([seed, k]).generate_state(1)[0]`` (``seed`` of the last explicit reset, ``k`` the
    episode's number since it). After a failure (``info["error"]``) an autoreset mode resets the env on its next
    step the same way, in ``same_step`` mode too (a failed step has no next observation to return).

    Differences from ``gymnasium.vector``: lists of messages, not stacked arrays; idle envs (``None``) are not
    stepped; the same-step final observation is ``info["final_observation"]`` per env (Gymnasium 1.x:
    ``final_obs`` in a batched info); autoreset passes the caller's options and a deterministic seed (Gymnasium
    resets with ``seed=None`` and no options); failures are reported per env instead of raised.
    """

    def __init__(
        self,
        env_fns: Sequence[EnvFactory],
        *,
        mode: str = "sync",
        autoreset_mode: str | AutoresetMode = "next_step",
        step_timeout: float | None = None,
        max_workers: int | None = None,
        env_ids: Sequence[str | None] | None = None,
    ):
        if not env_fns:
            raise ValueError("a vector env needs at least one env")
        if isinstance(autoreset_mode, AutoresetMode):
            autoreset_mode = autoreset_mode.name.lower()
        if autoreset_mode not in AUTORESET_MODES:
            raise ValueError(
                f"unknown autoreset_mode {autoreset_mode!r}; choose one of {', '.join(map(repr, AUTORESET_MODES))}"
            )
        if step_timeout is not None and (
            isinstance(step_timeout, bool) or not isinstance(step_timeout, numbers.Real) or not step_timeout > 0
        ):
            raise ValueError(f"step_timeout must be a number of seconds > 0 or None, got {step_timeout!r}")
        self.num_envs = len(env_fns)
        self.mode = mode
        self.autoreset_mode = autoreset_mode
        self.step_timeout = step_timeout
        self.env_ids = list(env_ids) if env_ids is not None else [None] * self.num_envs
        backend = _backend_class(mode)
        self._backend = backend(env_fns, step_timeout=step_timeout, max_workers=max_workers)
        n = self.num_envs
        self._active = [False] * n
        self._started = [False] * n  # reset explicitly at least once: an autoreset mode may reset it
        self._seeds: list[int | None] = [None] * n  # seed of the last explicit reset
        self._episodes = [0] * n  # episodes begun by autoreset since the last explicit reset
        self._autoreset_args: list[tuple[int | None, Any]] = [(None, None)] * n  # (seed, options) of the next autoreset
        self._pending: list[str | None] = [None] * n  # an episode lost while idle, reported at its next step
        self._no_autoreset = [None] * n
        self.closed = False

    @property
    def envs(self) -> list[Any]:
        """The env objects, for in-process modes (``sync``/``thread``)."""
        if not hasattr(self._backend, "envs"):
            raise AttributeError(f"envs live in other processes in mode {self.mode!r}; only sync/thread expose them")
        return self._backend.envs

    @property
    def active(self) -> list[bool]:
        """Which envs are in an episode that has not ended."""
        return list(self._active)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
        indices: Sequence[int] | None = None,
    ) -> tuple[list[list[Message]], list[dict[str, Any]]]:
        """Reset the envs in ``indices`` (default all); returns lists over those indices, in order.

        ``seed``: an int seeds env i with ``seed + i``; a list gives one seed per reset env. ``options``: one
        dict for all, or one per reset env (e.g. ``[{"task_index": 3}] * G`` for a GRPO group). Both are
        remembered for the env's autoresets (see the module docstring)."""
        self._check_open()
        indices = list(range(self.num_envs)) if indices is None else [self._check_index(i) for i in indices]
        seeds = _per_env(seed, indices, "seed", offset_ints=True)
        all_options = _per_env(options, indices, "options", offset_ints=False)
        results, replaced = self._backend.run({i: ("reset", (s, o)) for i, s, o in zip(indices, seeds, all_options)})
        for i, s, o in zip(indices, seeds, all_options):
            self._active[i] = "error" not in results[i][1]
            self._started[i] = True
            self._seeds[i], self._episodes[i], self._autoreset_args[i], self._pending[i] = s, 0, (None, o), None
        self._lose(replaced, results)
        return [results[i][0] for i in indices], [results[i][1] for i in indices]

    def step(
        self, actions: Sequence[Action | None] | Mapping[int, Action]
    ) -> tuple[list[list[Message]], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        """Step the envs that have an action; the others return ``([], 0.0, False, False, {"skipped": True})``.

        An env whose episode ended is reset by this call instead in ``next_step`` mode (see the module
        docstring)."""
        self._check_open()
        if isinstance(actions, Mapping):
            chosen = {self._check_index(i): a for i, a in actions.items() if a is not None}
        elif isinstance(actions, Sequence) and not isinstance(actions, str):
            if len(actions) != self.num_envs:
                raise ValueError(
                    f"step() got {len(actions)} actions for {self.num_envs} envs; pass one per env (None for idle "
                    f"envs) or a dict {{index: action}}"
                )
            chosen = {i: a for i, a in enumerate(actions) if a is not None}
        else:
            raise TypeError(
                f"actions must be a list (None for idle envs) or a dict {{index: action}}, got {type(actions).__name__}"
            )

        same_step = self.autoreset_mode == "same_step"
        autoreset_args = self._autoreset_args if same_step else self._no_autoreset
        answered: dict[int, tuple] = {}  # calls answered here, without reaching the backend
        calls: dict[int, Call] = {}
        for i, action in chosen.items():
            if self._active[i]:
                calls[i] = ("step", (action, autoreset_args[i]))
            elif self._pending[i] is not None:
                answered[i] = error_result("step", self._pending[i])
                self._pending[i] = None
            elif self._started[i] and self.autoreset_mode != "disabled":
                calls[i] = ("reset", self._autoreset_args[i])
            else:
                error = ResetNeeded(f"env {i} is not in an episode (not reset yet, ended, or failed); reset it first")
                answered[i] = error_result("step", f"{type(error).__name__}: {error}")
        results, replaced = self._backend.run(calls)

        for i, result in results.items():
            if len(result) == 2:  # an autoreset: the new episode's first messages, as a step result
                messages, info = result
                if "error" in info:
                    results[i] = ([], 0.0, False, True, info)
                else:
                    results[i] = (messages, 0.0, False, False, info)
                    self._begin_autoreset_episode(i)
            elif "error" in result[4]:
                self._active[i] = False
            elif result[2] or result[3]:
                if not same_step or "error" in result[4]["reset_info"]:
                    self._active[i] = False
                else:
                    self._begin_autoreset_episode(i)
        if replaced:
            self._lose(replaced, results)
        results.update(answered)
        rows = [
            results[i] if i in results else ([], 0.0, False, False, {"skipped": True}) for i in range(self.num_envs)
        ]
        messages, rewards, terminated, truncated, infos = map(list, zip(*rows))
        return messages, rewards, terminated, truncated, infos

    async def areset(self, **kwargs: Any) -> tuple[list[list[Message]], list[dict[str, Any]]]:
        """``reset`` without blocking the event loop."""
        return await asyncio.to_thread(functools.partial(self.reset, **kwargs))

    async def astep(self, actions: Sequence[Action | None] | Mapping[int, Action]):
        """``step`` without blocking the event loop."""
        return await asyncio.to_thread(self.step, actions)

    def close(self) -> None:
        if not self.closed:
            self._backend.close()
            self.closed = True

    def __enter__(self) -> VectorEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _begin_autoreset_episode(self, i: int) -> None:
        self._active[i] = True
        self._episodes[i] += 1
        if self._autoreset_args[i][0] is not None:  # a seeded replacement env: its stream now continues
            self._autoreset_args[i] = (None, self._autoreset_args[i][1])

    def _lose(self, replaced: Replaced, results: dict[int, tuple]) -> None:
        """End the episodes that were lost with replaced env instances, each with an error of its own.

        An env answered in this call gets the error now (a same-step autoreset that ran in a lost worker keeps
        its finished step and loses only the new episode); an idle one gets it at its next step."""
        for i, why in replaced.items():
            seed, options = self._seeds[i], self._autoreset_args[i][1]
            if seed is not None:
                derived = np.random.SeedSequence([seed, self._episodes[i] + 1]).generate_state(1)[0]
                self._autoreset_args[i] = (int(derived), options)
            if not self._active[i]:
                continue
            self._active[i] = False
            result = results.get(i)
            if result is None:
                self._pending[i] = why
            elif len(result) == 5 and "reset_info" in result[4]:
                results[i] = ([], *result[1:4], {**result[4], "reset_info": {"error": why}})
            else:
                results[i] = error_result("reset" if len(result) == 2 else "step", why)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this vector env is closed")

    def _check_index(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.num_envs:
            raise IndexError(f"env index {i!r} is out of range for {self.num_envs} envs")
        return i


def make_vec(
    id_or_ids: str | Sequence[str],
    num_envs: int | None = None,
    *,
    mode: str = "sync",
    autoreset_mode: str | AutoresetMode = "next_step",
    step_timeout: float | None = None,
    max_workers: int | None = None,
    **kwargs: Any,
) -> VectorEnv:
    """Build a :class:`VectorEnv` of registered envs.

    One id and ``num_envs`` copies of it, or a list of ids (mixed envs in one batch): with ``num_envs`` unset
    one env per id, otherwise the ids are repeated to fill ``num_envs``. ``kwargs`` go to every env."""
    from envgym.registration import make, spec

    if "autoreset" in kwargs:
        raise TypeError(
            "make_vec(autoreset=...) is now autoreset_mode='next_step' (default), 'same_step' (what "
            "autoreset=True did) or 'disabled' (autoreset=False)"
        )
    ids = [id_or_ids] if isinstance(id_or_ids, str) else list(id_or_ids)
    if not ids:
        raise ValueError("make_vec needs at least one env id")
    if num_envs is None:
        num_envs = len(ids) if len(ids) > 1 else 1
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    for env_id in set(ids):
        spec(env_id)  # fail fast, in this process, on unknown ids
    env_ids = [ids[i % len(ids)] for i in range(num_envs)]
    env_fns = [functools.partial(make, env_id, **kwargs) for env_id in env_ids]
    return VectorEnv(
        env_fns,
        mode=mode,
        autoreset_mode=autoreset_mode,
        step_timeout=step_timeout,
        max_workers=max_workers,
        env_ids=env_ids,
    )


def _backend_class(mode: str) -> type:
    if mode in BACKENDS:
        return BACKENDS[mode]
    if mode == "ray":  # imported on use: the core never imports ray otherwise
        from envgym.vector_ray import RayBackend

        return RayBackend
    known = ", ".join(repr(m) for m in [*BACKENDS, "ray"])
    raise ValueError(f"unknown vector-env mode {mode!r}; choose one of {known}")


def _per_env(value: Any, indices: list[int], name: str, offset_ints: bool) -> list[Any]:
    if value is None or isinstance(value, Mapping):
        return [value] * len(indices)
    if offset_ints and isinstance(value, int) and not isinstance(value, bool):
        return [value + i for i in indices]
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != len(indices):
            raise ValueError(f"{name} has {len(value)} entries for {len(indices)} envs being reset")
        return list(value)
    raise TypeError(f"{name} must be {'an int, ' if offset_ints else 'a dict, '}a list with one entry per env, or None")

"""Ray: vector envs whose workers are actors (``make_vec(..., mode="ray")``) and rollouts fanned out over actors.

Both connect to the cluster named by ``RAY_ADDRESS`` or an already initialized one, and start a local Ray
otherwise. Actors reserve no CPUs and are spread over the nodes (``SPREAD``), so several vector envs can
share a cluster without waiting on each other for resources; the CPU count of the cluster only sets how
many actors a vector env uses by default.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ray

from envgym.core import Action, Message
from envgym.episode import Episode
from envgym.vector_backends import Call, EnvFactory, Replaced, _run_call, error_result, timeout_message

Policy = Callable[[list[Message]], Action]
_ACTOR_OPTIONS = {"num_cpus": 0, "scheduling_strategy": "SPREAD"}
RUNAWAY_TURNS = 1000
"""An episode whose env has no turn limit of its own (``max_turns``, the one limit) stops after this many turns,
so a runaway env cannot hold an actor for ever."""


def _connect() -> None:
    if not ray.is_initialized():
        ray.init(include_dashboard=False, logging_level="WARNING")


@ray.remote
class EnvActor:
    """Hosts a shard of a vector env's envs (by index) and runs calls on them.

    ``eager``: build the envs now (the first start, so construction errors surface in ``make_vec``);
    otherwise each env is built on its first call (a restart, where a failing factory fails only that env)."""

    def __init__(self, env_fns: Mapping[int, EnvFactory], eager: bool = True):
        self.env_fns = dict(env_fns)
        self.envs = {i: fn() for i, fn in self.env_fns.items()} if eager else dict.fromkeys(self.env_fns)

    def pid(self) -> int:
        return os.getpid()

    def run(self, calls: Mapping[int, Call]) -> dict[int, tuple]:
        return {i: _run_call(self.envs, self.env_fns, i, call) for i, call in calls.items()}

    def close(self) -> None:
        for env in self.envs.values():
            if env is not None:
                env.close()


class RayBackend:
    """The ``ray`` vector-env backend: envs sharded over ``max_workers`` actors (default: cluster CPUs).

    An actor that dies takes only its envs down: they report ``info["error"]``, the actor is restarted with
    fresh envs, and the others go on. With ``step_timeout`` each env's call is its own actor task, so the
    parent sees which call overran: that actor is killed and restarted, and its other envs called in the
    same batch and not yet answered report ``"env lost: ..."`` (as in the process backend)."""

    def __init__(
        self, env_fns: Sequence[EnvFactory], step_timeout: float | None = None, max_workers: int | None = None
    ):
        _connect()
        cpus = int(ray.cluster_resources().get("CPU", 1))
        num_actors = max(1, min(len(env_fns), max_workers or cpus))
        self.step_timeout = step_timeout
        self._owner = {i: i % num_actors for i in range(len(env_fns))}
        self._shards = [{i: fn for i, fn in enumerate(env_fns) if self._owner[i] == a} for a in range(num_actors)]
        self.actors = [EnvActor.options(**_ACTOR_OPTIONS).remote(shard) for shard in self._shards]
        self._starting: dict[int, Any] = {}  # restarted actor -> its pid() call, awaited before its next calls
        try:
            ray.get([actor.pid.remote() for actor in self.actors])  # surfaces env construction errors here
        except ray.exceptions.RayError as error:
            self.close()
            raise RuntimeError(f"a Ray env actor could not build its envs: {error}") from None

    def run(self, calls: Mapping[int, Call]) -> tuple[dict[int, tuple], Replaced]:
        shards: dict[int, dict[int, Call]] = {}
        for i, call in calls.items():
            shards.setdefault(self._owner[i], {})[i] = call
        for actor in shards.keys() & self._starting.keys():
            try:  # a restart's start-up must not count against the first call's timeout
                ray.get(self._starting.pop(actor))
            except ray.exceptions.RayError:
                pass  # the calls below find the actor dead and report it
        results: dict[int, tuple] = {}
        replaced: Replaced = {}
        if self.step_timeout is None:
            pending = {actor: self.actors[actor].run.remote(shard) for actor, shard in shards.items()}
            for actor, ref in pending.items():
                try:
                    results.update(ray.get(ref))
                except ray.exceptions.RayError as error:
                    self._restart(actor, shards[actor], _died(error), results, replaced)
            return results, replaced
        # One task per call, queued in order on its actor: a call starts when the one before it is answered.
        queues = {
            actor: [(i, self.actors[actor].run.remote({i: call})) for i, call in shard.items()]
            for actor, shard in shards.items()
        }
        deadlines = dict.fromkeys(queues, time.monotonic() + self.step_timeout)
        while queues:
            heads = {queue[0][1]: actor for actor, queue in queues.items()}
            wait = max(0.0, min(deadlines.values()) - time.monotonic())
            ready, _ = ray.wait(list(heads), num_returns=1, timeout=wait)
            for ref in ready:
                actor = heads[ref]
                try:
                    results.update(ray.get(ref))
                except ray.exceptions.RayError as error:
                    self._restart(actor, shards[actor], _died(error), results, replaced)
                    del queues[actor], deadlines[actor]
                    continue
                queues[actor].pop(0)
                deadlines[actor] = time.monotonic() + self.step_timeout
                if not queues[actor]:
                    del queues[actor], deadlines[actor]
            now = time.monotonic()
            for actor in [a for a, deadline in deadlines.items() if deadline <= now]:
                hung = queues[actor][0][0]
                method = shards[actor][hung][0]
                why = timeout_message(method, self.step_timeout)
                results[hung], replaced[hung] = error_result(method, why), why
                lost = f"env lost: its Ray actor was restarted because env {hung} hung ({why})"
                self._restart(actor, shards[actor], lost, results, replaced)
                del queues[actor], deadlines[actor]
        return results, replaced

    def _restart(
        self, actor: int, calls: Mapping[int, Call], why: str, results: dict[int, tuple], replaced: Replaced
    ) -> None:
        """Replace actor ``actor`` with a fresh one; its unanswered calls report ``why``, its envs are replaced."""
        for i, (method, _) in calls.items():
            results.setdefault(i, error_result(method, why))
        for i in self._shards[actor]:
            replaced.setdefault(i, why)
        ray.kill(self.actors[actor])
        self.actors[actor] = EnvActor.options(**_ACTOR_OPTIONS).remote(self._shards[actor], eager=False)
        self._starting[actor] = self.actors[actor].pid.remote()

    def close(self) -> None:
        for actor in self.actors:
            try:
                ray.get(actor.close.remote(), timeout=10)
            except ray.exceptions.RayError:
                pass
            ray.kill(actor)
        self.actors = []


def _died(error: Exception) -> str:
    return f"env lost: its Ray env actor died ({type(error).__name__}: {str(error).splitlines()[0]})"


def play_episode(
    env: Any,
    policy: Policy,
    *,
    env_id: str | None = None,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
) -> Episode:
    """One episode of ``policy`` (chat history -> action) on ``env``, recorded as an :class:`Episode`; it ends
    when the env ends it (its turn limit included), or after :data:`RUNAWAY_TURNS`."""
    messages, info = env.reset(seed=seed, options=options)
    episode = Episode(env_id, info.get("task_id"), messages, seed=seed, reset_info=info)
    history = list(messages)
    for _ in range(RUNAWAY_TURNS):
        action = policy(history)
        observation, reward, terminated, truncated, info = env.step(action)
        episode.add_turn(action, observation, reward, terminated, truncated, info)
        history += [{"role": "assistant", "content": action} if isinstance(action, str) else dict(action), *observation]
        if terminated or truncated:
            break
    return episode


@ray.remote
class RolloutActor:
    """Holds one env and plays whole episodes on it, one job after another."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], policy: Policy):
        import envgym

        self.env_id, self.policy = env_id, policy
        self.env = envgym.make(env_id, **env_kwargs)

    def play(self, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        episode = play_episode(self.env, self.policy, env_id=self.env_id, seed=seed, options=options)
        return episode.to_dict()


def ray_rollouts(
    env_id: str,
    policy: Policy,
    seeds: Sequence[int | None],
    *,
    options: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
    num_actors: int | None = None,
    **env_kwargs: Any,
) -> list[Episode]:
    """Play one episode per seed on Ray actors (default: one per cluster CPU, at most one per episode) and
    return the episodes in the order of ``seeds``. An actor takes its next job as soon as it finishes one,
    so long and short episodes balance out.

    ``options``: one dict for every episode or one per seed, e.g. ``[{"task_index": 7}] * 8`` with
    ``seeds=range(8)`` for a GRPO group of 8 on task 7. ``policy`` is pickled to the actors: a function
    importable by the actors or defined inside a function or notebook, which cloudpickle sends by value (an
    LLM policy would call a model server)."""
    import envgym

    envgym.spec(env_id)  # unknown ids fail here, not inside an actor
    if options is None or isinstance(options, Mapping):
        per_episode = [dict(options) if options else None] * len(seeds)
    else:
        if len(options) != len(seeds):
            raise ValueError(
                f"options has {len(options)} entries for {len(seeds)} seeds; give one per seed or one dict"
            )
        per_episode = [dict(o) if o else None for o in options]
    if not seeds:
        return []
    _connect()
    count = max(1, min(len(seeds), num_actors or int(ray.cluster_resources().get("CPU", 1))))
    actors = [RolloutActor.options(**_ACTOR_OPTIONS).remote(env_id, env_kwargs, policy) for _ in range(count)]
    try:
        pool = ray.util.ActorPool(actors)
        jobs = list(zip(seeds, per_episode))
        return [Episode.from_dict(d) for d in pool.map(lambda actor, job: actor.play.remote(*job), jobs)]
    finally:
        for actor in actors:
            ray.kill(actor)

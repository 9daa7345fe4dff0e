"""The reward of a τ² episode, as τ²'s ``evaluate_simulation(..., EvaluationType.ALL)`` computes it.

τ² multiplies the checks named in the task's ``reward_basis``:

- ``DB``: the agent's (and the user's) database equals the gold one, the initial state with the task's gold
  actions replayed (τ²'s ``EnvironmentEvaluator``, database hashes);
- ``ENV_ASSERTION``: every assertion of the task holds on the final state (telecom: "the phone can send MMS");
- ``ACTION``: every gold action appears among the calls made, compared on its ``compare_args`` (τ²'s
  ``ActionEvaluator``, called as is);
- ``COMMUNICATE``: every required piece of information appears in some agent message (τ²'s
  ``CommunicateEvaluator``, called as is).

An episode that did not end by the agent or the user stopping earns 0; a task without criteria earns 1.

One difference in how, not what: τ²'s ``EnvironmentEvaluator`` rebuilds the final state by replaying the whole
conversation on a fresh environment and the gold state by replaying the gold actions, every time. Here the final
state is the episode's own environment, which ran the same calls through the same ``get_response`` (tools are
deterministic), and the gold and initial hashes are kept per task: a τ² airline environment takes about 0.2 s to
load, and the audit plays hundreds of episodes. ``tests/envs/tau2/test_official_grader.py`` grades every gold
replay and every perturbed trajectory with τ²'s own ``evaluate_simulation`` too, and requires the same reward.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from tau2.data_model.message import Message as Tau2Message
from tau2.data_model.simulation import TerminationReason
from tau2.data_model.tasks import RewardType
from tau2.data_model.tasks import Task as Tau2Task
from tau2.environment.environment import Environment
from tau2.evaluator.evaluator_action import ActionEvaluator
from tau2.evaluator.evaluator_communicate import CommunicateEvaluator

from envgym.envs.tau2 import domains

GRADED_ENDINGS = (TerminationReason.AGENT_STOP, TerminationReason.USER_STOP)
_CACHE_SIZE = 4096


@dataclasses.dataclass
class Grade:
    """τ²'s reward, its parts by basis (``DB``, ``ENV_ASSERTION``, ``ACTION``, ``COMMUNICATE``) and what each
    check found (JSON-friendly, for ``info``)."""

    reward: float
    breakdown: dict[str, float] = dataclasses.field(default_factory=dict)
    checks: dict[str, Any] = dataclasses.field(default_factory=dict)
    note: str = ""


class _StateCache:
    """Database hashes per task (gold and initial), LRU-bounded and shared by the envs of a process."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str], compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()
        with self._lock:
            self._items[key] = value
            while len(self._items) > _CACHE_SIZE:
                self._items.popitem(last=False)
        return value


_hashes = _StateCache()


def initial_environment(domain: str, task: Tau2Task, solo: bool = False) -> Environment:
    """A fresh environment in the task's initial state, set up as τ²'s orchestrator does."""
    environment = domains.environment(domain, solo)
    state = task.initial_state
    environment.set_state(
        initialization_data=state.initialization_data if state is not None else None,
        initialization_actions=state.initialization_actions if state is not None else None,
        message_history=[],
    )
    return environment


def _task_key(domain: str, task: Tau2Task) -> tuple[str, str]:
    # The content, not the id: a caller may play a changed copy of a task under the same id.
    content = task.model_dump_json(include={"initial_state", "evaluation_criteria"})
    return (domain, hashlib.sha256(content.encode()).hexdigest())


def task_hashes(domain: str, task: Tau2Task) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
    """The agent's and the user's database hashes in the task's initial state (the final state of an episode
    that made no call) and after its gold actions, replayed as τ²'s ``EnvironmentEvaluator`` replays them (without
    a sync between actions; a gold action that fails is skipped, as there)."""

    def compute() -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
        environment = initial_environment(domain, task)
        initial = (environment.get_db_hash(), environment.get_user_db_hash())
        for action in task.evaluation_criteria.actions or []:
            try:
                environment.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
            except Exception:  # τ² logs a failing gold action and goes on; so does the gold state here
                continue
        return initial, (environment.get_db_hash(), environment.get_user_db_hash())

    return _hashes.get(_task_key(domain, task), compute)


def grade(
    domain: str,
    task: Tau2Task,
    trajectory: list[Tau2Message],
    environment: Environment | None,
    termination: TerminationReason,
    *,
    solo: bool = False,
) -> Grade:
    """τ²'s reward for an episode that ended with ``termination`` (module docstring). ``environment``: the
    episode's environment, or ``None`` if no call ever needed one (the state is then the initial one)."""
    if termination not in GRADED_ENDINGS:
        return Grade(0.0, note=f"the episode ended by {termination.value}, which τ² scores 0")
    criteria = task.evaluation_criteria
    if criteria is None:
        return Grade(1.0, note="the task has no evaluation criteria")
    basis = set(criteria.reward_basis)
    if RewardType.NL_ASSERTION in basis:
        raise ValueError(f"task {task.id} rewards natural-language assertions, which need a judge in the reward")
    reward, breakdown, checks = 1.0, {}, {}
    if basis & {RewardType.DB, RewardType.ENV_ASSERTION}:
        part, part_checks = _state_check(domain, task, environment, basis, solo)
        breakdown.update(part_checks.pop("breakdown"))
        checks.update(part_checks)
        reward *= part
    if RewardType.ACTION in basis:
        result = ActionEvaluator.calculate_reward(task=task, full_trajectory=trajectory)
        breakdown["ACTION"] = result.reward
        checks["actions"] = {check.action.action_id: check.action_match for check in result.action_checks or []}
        reward *= result.reward
    if RewardType.COMMUNICATE in basis:
        result = CommunicateEvaluator.calculate_reward(task=task, full_trajectory=trajectory)
        breakdown["COMMUNICATE"] = result.reward
        checks["communicate"] = {check.info: check.met for check in result.communicate_checks or []}
        reward *= result.reward
    return Grade(reward, breakdown, checks)


def _state_check(
    domain: str, task: Tau2Task, environment: Environment | None, basis: set[RewardType], solo: bool
) -> tuple[float, dict[str, Any]]:
    """The DB and ENV_ASSERTION parts, as τ²'s ``EnvironmentEvaluator`` computes them."""
    criteria = task.evaluation_criteria
    if criteria.actions is None and criteria.env_assertions is None:
        return 1.0, {"breakdown": {}, "db_match": True}
    initial, gold = task_hashes(domain, task)
    final = initial if environment is None else (environment.get_db_hash(), environment.get_user_db_hash())
    db_match = final == gold
    assertions = []
    if criteria.env_assertions:
        # Assertions run after the hashes (they may sync the user's device), as in τ².
        checked = environment if environment is not None else initial_environment(domain, task, solo)
        assertions = [checked.run_env_assertion(a, raise_assertion_error=False) for a in criteria.env_assertions]
    breakdown, reward = {}, 1.0
    if RewardType.DB in basis:
        breakdown["DB"] = float(db_match)
        reward *= breakdown["DB"]
    if RewardType.ENV_ASSERTION in basis:
        breakdown["ENV_ASSERTION"] = float(all(assertions))
        reward *= breakdown["ENV_ASSERTION"]
    return reward, {"breakdown": breakdown, "db_match": db_match, "env_assertions": assertions}

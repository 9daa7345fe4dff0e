"""This env's grades beside τ²'s own: gold replays and perturbed trajectories of τ² tasks, each played through
:class:`~envgym.envs.tau2.env.Tau2Env` and graded by it and by τ²'s ``evaluate_simulation(..., ALL)``.

Perturbations of a task's gold plan (those that apply to it):

- ``wrong_argument``: the last write action with arguments gets one argument changed (a string gets ``"X"``
  appended, a number 1 added, a boolean flipped, a list loses its last item);
- ``missing_action``: the last write action is dropped (the last action, if the task writes nothing);
- ``extra_write``: a write no task asks for, made at the end for the task's user (airline: a $100 certificate;
  retail: a new default address); telecom, whose user acts on the phone, makes its last write twice (a second
  toggle flips the setting back). A repeated airline or retail write mostly fails the second time (an order is
  cancelled once) and so changes nothing.

``python -m envgym.envs.tau2.check [--domains airline,retail,telecom] [--split base] [--limit N]`` plays every task
of each domain's split (or the first N) and prints one JSON object: per domain, how many gold replays earned 1 in
both graders, and per perturbation how many trajectories both graders scored the same (and how many they scored
1). τ²'s evaluator imports litellm (about 3 s), so this module imports it only when it grades.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from typing import Any

from tau2.data_model.tasks import Action as Tau2Action
from tau2.data_model.tasks import Task as Tau2Task

from envgym.envs.tau2 import domains
from envgym.envs.tau2.env import Tau2Env
from envgym.envs.tau2.replay import Plan, asks_for
from envgym.users import ReplayUser

PERTURBATIONS = ("wrong_argument", "missing_action", "extra_write")
EXTRA_WRITES = {
    "airline": ("send_certificate", {"amount": 100}),
    "retail": (
        "modify_user_address",
        {
            "address1": "1 Test Street",
            "address2": "",
            "city": "Testville",
            "state": "CA",
            "country": "USA",
            "zip": "90000",
        },
    ),
}


def official_reward(env: Tau2Env) -> float:
    """τ²'s own reward for the episode ``env`` just finished (``evaluate_simulation``, ``EvaluationType.ALL``)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm would fetch its price list at import
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    simulation = env.to_simulation()
    result = evaluate_simulation(simulation, env.task.answer, EvaluationType.ALL, env.solo, env.domain)
    return result.reward


def play(
    domain: str, split: str, index: int, plan: Plan | None = None, *, solo: bool = False
) -> tuple[Tau2Env, dict[str, Any]]:
    """Task ``index`` played to its end by ``plan`` (default: the task's gold plan) with a replay user saying the
    plan's user side; returns the finished env and the last step's ``info``."""
    task = domains.tasks(domain, split)[index]
    plan = plan or Plan.of(task)
    user_tools = [schema["function"]["name"] for schema in domains.user_tools(domain)]
    user = ReplayUser(plan.user_script(), asks=asks_for(user_tools))
    env = Tau2Env(domain=domain, split=split, solo=solo, user=user)
    env.reset(options={"task_index": index})
    for _ in range(env.max_steps):
        action = plan.next_action(plan.progress(env.trajectory), solo=solo, max_calls=env.max_calls_per_turn)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return env, info
    raise RuntimeError(f"{domain} task {index}: the plan did not end the episode in {env.max_steps} turns")


def perturbed(task: Tau2Task, domain: str) -> dict[str, Plan]:
    """The perturbations of the task's gold plan that apply to it (module docstring)."""
    gold = Plan.of(task)
    writes = [i for i, action in enumerate(gold.actions) if action.name in domains.write_tools(domain)]
    plans = {}
    with_arguments = [i for i in writes if gold.actions[i].arguments]
    if with_arguments:
        i = with_arguments[-1]
        plans["wrong_argument"] = _replace(gold, i, [_changed(gold.actions[i])])
    if gold.actions:
        i = writes[-1] if writes else len(gold.actions) - 1
        plans["missing_action"] = _replace(gold, i, [])
    user_id = next((a.arguments["user_id"] for a in gold.actions if "user_id" in a.arguments), None)
    if domain in EXTRA_WRITES and user_id is not None:
        name, arguments = EXTRA_WRITES[domain]
        extra = Tau2Action(action_id="extra_write", name=name, arguments={"user_id": user_id, **arguments})
        plans["extra_write"] = Plan((*gold.actions, extra), gold.communicate, gold.opening)
    elif domain not in EXTRA_WRITES and writes:
        i = writes[-1]
        plans["extra_write"] = _replace(gold, i, [gold.actions[i], gold.actions[i]])
    return plans


def _replace(plan: Plan, index: int, actions: Sequence[Tau2Action]) -> Plan:
    return Plan((*plan.actions[:index], *actions, *plan.actions[index + 1 :]), plan.communicate, plan.opening)


def _changed(action: Tau2Action) -> Tau2Action:
    """``action`` with one argument changed: the first one τ² compares (all are compared when it names none)."""
    compared = action.compare_args if action.compare_args else sorted(action.arguments)
    name = next((key for key in compared if key in action.arguments), sorted(action.arguments)[0])
    value = action.arguments[name]
    if isinstance(value, bool):
        value = not value
    elif isinstance(value, (int, float)):
        value = value + 1
    elif isinstance(value, str):
        value = value + "X"
    elif isinstance(value, list):
        value = value[:-1] if value else [None]
    else:
        value = None
    return action.model_copy(update={"arguments": {**action.arguments, name: value}}, deep=True)


def compare(domain: str, split: str, indices: Sequence[int], *, solo: bool = False) -> dict[str, Any]:
    """Gold replays and perturbations of ``indices``, graded by both; counts and the disagreements."""
    tasks = domains.tasks(domain, split)
    report: dict[str, Any] = {"tasks": len(indices), "gold_full_reward_both": 0, "gold_failures": []}
    report.update({kind: {"played": 0, "agree": 0, "scored_1": 0, "disagreements": []} for kind in PERTURBATIONS})
    for index in indices:
        env, info = play(domain, split, index, solo=solo)
        ours, theirs = info["reward_components"]["tau2"], official_reward(env)
        if ours == theirs == 1.0:
            report["gold_full_reward_both"] += 1
        else:
            report["gold_failures"].append({"task": tasks[index].id, "ours": ours, "tau2": theirs})
        for kind, plan in perturbed(tasks[index], domain).items():
            env, info = play(domain, split, index, plan, solo=solo)
            ours, theirs = info["reward_components"]["tau2"], official_reward(env)
            counts = report[kind]
            counts["played"] += 1
            counts["agree"] += ours == theirs
            counts["scored_1"] += theirs == 1.0
            if ours != theirs:
                counts["disagreements"].append({"task": tasks[index].id, "ours": ours, "tau2": theirs})
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", default=",".join(domains.DOMAINS))
    parser.add_argument("--split", default=None, help="τ²'s split (default: base; telecom's full set with 'full')")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks of each split only")
    parser.add_argument("--solo", action="store_true", help="solo mode (telecom)")
    args = parser.parse_args(argv)
    started, out = time.perf_counter(), {}
    for domain in args.domains.split(","):
        split = args.split or "base"
        count = len(domains.tasks(domain, split))
        out[f"{domain}/{split}"] = compare(domain, split, range(min(count, args.limit or count)), solo=args.solo)
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

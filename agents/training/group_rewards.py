"""Group rewards in the trainer: components of a reward spec computed over the G episodes of a task after the
group's rollouts end (TTRL's majority vote, self-consistency, relative judging, a reward model, self-certainty),
never inside ``Env.step``; and process rewards, scored per step and credited per token
(:mod:`envgym.agents.training.process_rewards`).

:func:`apply_group_rewards` adds each group component to the last turn of every healthy episode, weighted, gated
and recorded like a per-turn component (``turn_reward_components``, ``turn_reward_weights``), so advantages, GDPO
and the ``reward/<name>`` metric see it as any other. :func:`group_reward_metrics` logs ``vote_agreement`` (the
mean share of a group that agrees with its majority answer) and, when the spec holds labels back
(``hold_out_labels``), ``label_accuracy``: the share of episodes the env's own verifier judged correct against the
label the reward never saw, which shows whether label-free training helps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from envgym.agents.training.process_rewards import apply_process_rewards
from envgym.agents.trajectory import Trajectory
from envgym.core import action_text
from envgym.rewards import RewardComponent, RewardSpec, answer_equivalence, group_values


def reward_spec_of(env_kwargs: Mapping[str, Any] | None) -> RewardSpec | None:
    """The reward spec among the env's keyword arguments (``reward``, as recipes put it), validated; None if
    there is none."""
    reward = (env_kwargs or {}).get("reward")
    return None if reward is None else RewardSpec.coerce(reward)


def final_answer(trajectory: Trajectory) -> str | None:
    """The episode's answer: the last ``info["answer"]`` its turns reported (what votes, as in eval's maj@k)."""
    answers = [t.info["answer"] for t in trajectory.episode.turns if t.info.get("answer") is not None]
    return str(answers[-1]) if answers else None


@dataclasses.dataclass
class ScoringContext:
    """What group components beyond votes read: the run's env (its task source gives the labels of
    ``task_indices``, one per group, for judges with a reference), and the policy ``model`` (self-certainty),
    its ``tokenizer`` (process rewards' token spans) and ``device`` (where reward models run)."""

    env: Any
    task_indices: Sequence[int] | None = None
    model: Any = None
    tokenizer: Any = None
    device: Any = "cpu"


def apply_group_rewards(groups: Sequence[Sequence[Trajectory]], spec: RewardSpec, env: Any, *,
                        task_indices: Sequence[int] | None = None, model: Any = None, tokenizer: Any = None,
                        device: Any = "cpu") -> None:
    """Add every group component of ``spec`` to each group's healthy episodes, in place, and score the steps of
    its process components (see :class:`ScoringContext` for the keyword arguments).

    ``env`` is one env of the run (its ``answers_equivalent`` compares answers when a component's
    ``equivalence`` is ``env``). Failed episodes neither vote nor get a value: their answer is not the policy's.
    A component that cannot score (a judge or reward model failing after its retries, a judge reply without a
    score for every answer) makes the episodes it should have scored failed (``Episode.error``), never 0.
    A gated component counts only where its gate's unweighted value on the episode's last turn is > 0."""
    context = ScoringContext(env, task_indices, model, tokenizer, device)
    healthy = [[t for t in group if not t.failed and t.turn_rewards] for group in groups]
    for component in spec.of_kind("group"):
        for group, values in zip(healthy, _values(component, healthy, context)):
            for trajectory, value in zip(group, values):
                if not trajectory.failed:
                    _add_to_last_turn(trajectory, component.name, component.weight,
                                      _gated(trajectory, component.gate, value))
    for component in spec.of_kind("process"):
        if tokenizer is None:
            raise ValueError(f"process component {component.name!r} maps steps to tokens and needs the tokenizer")
        references = [_reference(context, g) for g in range(len(healthy))]
        reference_of = {id(t): references[g] for g, group in enumerate(healthy) for t in group}
        apply_process_rewards(healthy, component, tokenizer, question, lambda t: reference_of[id(t)])


def _values(component: RewardComponent, healthy: list[list[Trajectory]], context: ScoringContext) -> list[list[float]]:
    """The unweighted value of ``component`` for every healthy episode, group by group (failures become errors)."""
    if component.source in ("majority_vote", "self_consistency"):
        same = answer_equivalence(context.env, component.option("equivalence"))
        out = []
        for group in healthy:
            values, logged = group_values(component, [final_answer(t) for t in group], same) if group else ([], {})
            for trajectory in group:
                trajectory.episode.metadata.setdefault("group_rewards", {})[component.name] = logged
            out.append(values)
        return out
    if component.source == "judge_group":
        return [_judge_group(component, group, _reference(context, g)) for g, group in enumerate(healthy)]
    flat = [t for group in healthy for t in group]
    if not flat:
        return [[] for _ in healthy]
    if component.source == "reward_model":
        from envgym.agents.training.reward_models import RewardModelError, shared_reward_model

        try:
            scores = shared_reward_model(component, context.device).score([question(t) for t in flat],
                                                                           [final_response(t) for t in flat])
        except RewardModelError as error:
            _fail(flat, f"reward model {component.name!r} failed: {error}")
            return [[0.0] * len(group) for group in healthy]
    elif component.source == "self_certainty":
        from envgym.agents.training.self_certainty import trajectory_self_certainty

        if context.model is None:
            raise ValueError(f"self_certainty component {component.name!r} scores with the policy model; the "
                             "trainer passes it (it is a training reward)")
        scores = trajectory_self_certainty(context.model, flat, context.device)
    else:
        raise ValueError(f"{component.name!r} (source {component.source!r}) is not a group reward")
    values = iter(scores)
    return [[next(values) for _ in group] for group in healthy]


def _judge_group(component: RewardComponent, group: list[Trajectory], reference: str | None) -> list[float]:
    """RULER-style relative judging: one request scores the group's final responses against each other."""
    from envgym.rewards.wrapper import shared_judge
    from envgym.verifiers.judge import JudgeError

    if not group:
        return []
    try:
        judgement = shared_judge(component).score_group(question(group[0]), [final_response(t) for t in group],
                                                        reference if component.option("reference") else None)
    except JudgeError as error:
        _fail(group, f"judge_group {component.name!r} failed: {error}")
        return [0.0] * len(group)
    if judgement.scores is None:
        _fail(group, f"judge_group {component.name!r} did not score all {len(group)} responses after "
                     f"{judgement.attempts} attempts; its last reply: {judgement.reply[:200]!r}")
        return [0.0] * len(group)
    for trajectory in group:
        trajectory.episode.metadata.setdefault("judge", {})[component.name] = {"cached": judgement.cached}
    return list(judgement.scores)


def _fail(trajectories: Sequence[Trajectory], error: str) -> None:
    for trajectory in trajectories:
        trajectory.episode.error = error


def question(trajectory: Trajectory) -> str:
    """The task's question: the last user message of the episode's prompt."""
    users = [m for m in trajectory.episode.prompt if m.get("role") == "user"]
    return action_text(users[-1]) if users else ""


def final_response(trajectory: Trajectory) -> str:
    """The policy's last turn, as text (what judges and reward models score)."""
    return action_text(trajectory.episode.turns[-1].action) if trajectory.episode.turns else ""


def _reference(context: ScoringContext, group_index: int) -> str | None:
    """The label of the task group ``group_index`` played, from the env's task source; None without one."""
    if context.task_indices is None or group_index >= len(context.task_indices):
        return None
    tasks = getattr(getattr(context.env, "unwrapped", context.env), "tasks", None)
    answer = tasks.get(context.task_indices[group_index]).answer if tasks is not None else None
    return None if answer is None else str(answer)


def _gated(trajectory: Trajectory, gate: str | None, value: float) -> float:
    if gate is None:
        return value
    raw = trajectory.episode.turns[-1].info.get("reward_raw_components") or {}
    return value if raw.get(gate, 0.0) > 0.0 else 0.0


def _add_to_last_turn(trajectory: Trajectory, name: str, weight: float, value: float) -> None:
    weighted = weight * value
    while len(trajectory.turn_reward_weights) < len(trajectory.turn_rewards):
        trajectory.turn_reward_weights.append({})
    trajectory.turn_rewards[-1] += weighted
    trajectory.turn_reward_components[-1][name] = weighted
    trajectory.turn_reward_weights[-1][name] = weight
    turn = trajectory.episode.turns[-1]  # the episode record (samples, JSONL) agrees with what is trained on
    turn.reward += weighted
    turn.reward_components[name] = weighted


def group_reward_metrics(rollouts: Sequence[Sequence[Trajectory]], spec: RewardSpec | None) -> dict[str, float]:
    """``vote_agreement`` (mean over groups) for specs with group components, and ``label_accuracy`` (share of
    healthy episodes the env's verifier judged correct) when the spec holds labels back and the env has them."""
    if spec is None:
        return {}
    out: dict[str, float] = {}
    agreements = []
    for group in rollouts:
        logged = next((t.episode.metadata["group_rewards"] for t in group if "group_rewards" in t.episode.metadata), None)
        if logged:
            agreements.extend(v["vote_agreement"] for v in logged.values() if "vote_agreement" in v)
    if agreements:
        out["vote_agreement"] = sum(agreements) / len(agreements)
    if spec.hold_out_labels:
        verdicts = [_verdict(t) for group in rollouts for t in group if not t.failed]
        verdicts = [v for v in verdicts if v is not None]
        if verdicts:
            out["label_accuracy"] = sum(verdicts) / len(verdicts)
    return out


def _verdict(trajectory: Trajectory) -> bool | None:
    """The env's last ``correct`` verdict in the episode (None: the env judged nothing, e.g. an unlabeled row)."""
    flags = [t.info["correct"] for t in trajectory.episode.turns if "correct" in t.info]
    return bool(flags[-1]) if flags else None

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
from collections.abc import Sequence
from typing import Any

from envgym.agents.training.process_rewards import apply_process_rewards
from envgym.agents.trajectory import Trajectory
from envgym.core import action_text
from envgym.rewards import RewardComponent, RewardSpec, answer_equivalence, group_values


def final_answer(trajectory: Trajectory) -> str | None:
    """The episode's answer: the last ``info["answer"]`` its turns reported (what votes, as in eval's maj@k), or
    None where the env refused it (``action_valid=False``: an unevaluated ``\\boxed{8 - 5}`` where the value is
    asked for): a vote uses the env's own grading rules, so an answer the env would refuse cannot vote."""
    answered = [t for t in trajectory.episode.turns if t.info.get("answer") is not None]
    if not answered or answered[-1].info.get("action_valid") is False:
        return None
    return str(answered[-1].info["answer"])


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


def apply_group_rewards(
    groups: Sequence[Sequence[Trajectory]],
    spec: RewardSpec,
    env: Any,
    *,
    task_indices: Sequence[int] | None = None,
    model: Any = None,
    tokenizer: Any = None,
    device: Any = "cpu",
) -> None:
    """Add every group component of ``spec`` to each group's healthy episodes, in place, and score the steps of
    its process components (see :class:`ScoringContext` for the keyword arguments).

    ``env`` is one env of the run (its ``answers_equivalent`` compares answers when a component's
    ``equivalence`` is ``env``). Failed episodes neither vote nor get a value: their answer is not the policy's.
    A component that cannot score for reasons outside the policy's reach (a judge or reward model failing after
    its retries) makes the episodes it should have scored failed (``Episode.error``), never 0. What the policy
    can cause (a response withheld from the judge, a judge reply the group's responses broke) scores 0 and is
    recorded in the last turn's ``info["reward_failures"]``.
    A gated component counts only where its gate's unweighted value on the episode's last turn is > 0."""
    context = ScoringContext(env, task_indices, model, tokenizer, device)
    healthy = [[t for t in group if not t.failed and t.turn_rewards] for group in groups]
    for component in spec.of_kind("group"):
        for group, values in zip(healthy, _values(component, healthy, context)):
            for trajectory, value in zip(group, values):
                if not trajectory.failed:
                    _add_to_last_turn(
                        trajectory, component.name, component.weight, _gated(trajectory, component.gate, value)
                    )
    for component in spec.of_kind("process"):
        if tokenizer is None:
            raise ValueError(f"process component {component.name!r} maps steps to tokens and needs the tokenizer")
        references = [_reference(context, g) for g in range(len(healthy))]
        reference_of = {id(t): references[g] for g, group in enumerate(healthy) for t in group}
        apply_process_rewards(
            healthy,
            component,
            tokenizer,
            question,
            lambda t, refs=reference_of: refs[id(t)],
            None if spec.hold_out_labels else _verdict_value,
        )


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
    if component.source == "self_certainty":
        return _self_certainty(component, healthy, context)
    flat = [t for group in healthy for t in group]
    if not flat:
        return [[] for _ in healthy]
    if component.source == "reward_model":
        from envgym.agents.training.reward_models import RewardModelError, shared_reward_model

        try:
            scores = shared_reward_model(component, context.device).score(
                [question(t) for t in flat], [final_response(t) for t in flat]
            )
        except RewardModelError as error:
            _fail(flat, f"reward model {component.name!r} failed: {error}")
            return [[0.0] * len(group) for group in healthy]
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
        judgement = shared_judge(component).score_group(
            question(group[0]), [final_response(t) for t in group], reference if component.option("reference") else None
        )
    except JudgeError as error:
        _fail(group, f"judge_group {component.name!r} failed: {error}")
        return [0.0] * len(group)
    for trajectory, withheld in zip(group, judgement.withheld):
        if withheld is not None:
            record_policy_failure(trajectory, component.name, f"withheld from the judge: {withheld}")
    if judgement.scores is None:  # the responses broke the reply: nobody earns, and it is counted
        for trajectory in group:
            record_policy_failure(
                trajectory,
                component.name,
                f"the judge's reply scored not all {len(group)} responses after {judgement.attempts} attempts: "
                f"{judgement.reply[:200]!r}",
            )
        return [0.0] * len(group)
    for trajectory in group:
        trajectory.episode.metadata.setdefault("judge", {})[component.name] = {"cached": judgement.cached}
    return list(judgement.scores)


def _self_certainty(
    component: RewardComponent, healthy: list[list[Trajectory]], context: ScoringContext
) -> list[list[float]]:
    """Intuitor's self-certainty of each episode, and 0 (its floor) for a degenerate, repetitive response."""
    from envgym.agents.training.self_certainty import repetition, trajectory_self_certainty

    if context.model is None:
        raise ValueError(
            f"self_certainty component {component.name!r} scores with the policy model; the "
            "trainer passes it (it is a training reward)"
        )
    flat = [t for group in healthy for t in group]
    scores = iter(trajectory_self_certainty(context.model, flat, context.device) if flat else [])
    out = []
    for group in healthy:
        values = []
        for trajectory in group:
            value, repeated = next(scores), repetition(trajectory)
            if repeated > component.option("max_repetition"):
                record_policy_failure(
                    trajectory, component.name, f"degenerate: {repeated:.0%} of its tokens repeat a 4-gram"
                )
                value = 0.0
            values.append(value)
        out.append(values)
    return out


def _fail(trajectories: Sequence[Trajectory], error: str) -> None:
    for trajectory in trajectories:
        trajectory.episode.error = error


def record_policy_failure(trajectory: Trajectory, component: str, reason: str) -> None:
    """A group component scored its minimum because of the episode's response: recorded on its last turn, where
    per-turn failures are (``info["reward_failures"]``; the trainer logs ``policy_failures``)."""
    if trajectory.episode.turns:
        trajectory.episode.turns[-1].info.setdefault("reward_failures", {})[component] = reason


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
    """For specs with votes, means over groups of ``vote_agreement``, ``group_collapse`` (the largest cluster's
    share), ``distinct_answers`` and ``vote_guarded`` (the share of groups whose collapse withheld the vote); and
    ``label_accuracy`` (share of healthy episodes the env's verifier judged correct) when the spec holds labels
    back and the env has them."""
    if spec is None:
        return {}
    out: dict[str, float] = {}
    logged_by_key: dict[str, list[float]] = {}
    for group in rollouts:
        logged = next(
            (t.episode.metadata["group_rewards"] for t in group if "group_rewards" in t.episode.metadata), None
        )
        for values in (logged or {}).values():
            for key in ("vote_agreement", "group_collapse", "distinct_answers", "vote_guarded"):
                if key in values:
                    logged_by_key.setdefault(key, []).append(values[key])
    out.update({key: sum(values) / len(values) for key, values in logged_by_key.items()})
    if spec.hold_out_labels:
        verdicts = [_verdict(t) for group in rollouts for t in group if not t.failed]
        verdicts = [v for v in verdicts if v is not None]
        if verdicts:
            out["label_accuracy"] = sum(verdicts) / len(verdicts)
    return out


def _verdict_value(trajectory: Trajectory) -> float | None:
    """The env's final verdict as the most a step may earn (1 right, 0 wrong), or None where it gave none."""
    verdict = _verdict(trajectory)
    return None if verdict is None else float(verdict)


def _verdict(trajectory: Trajectory) -> bool | None:
    """The env's last ``correct`` verdict in the episode (None: the env judged nothing, e.g. an unlabeled row)."""
    flags = [t.info["correct"] for t in trajectory.episode.turns if "correct" in t.info]
    return bool(flags[-1]) if flags else None

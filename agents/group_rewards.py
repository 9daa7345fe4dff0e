"""Group rewards in the trainer: components of a reward spec computed over the G episodes of a task after the
group's rollouts end (TTRL's majority vote, self-consistency), never inside ``Env.step``.

:func:`apply_group_rewards` adds each group component to the last turn of every healthy episode, weighted, gated
and recorded like a per-turn component (``turn_reward_components``, ``turn_reward_weights``), so advantages, GDPO
and the ``reward/<name>`` metric see it as any other. :func:`group_reward_metrics` logs ``vote_agreement`` (the
mean share of a group that agrees with its majority answer) and, when the spec holds labels back
(``hold_out_labels``), ``label_accuracy``: the share of episodes the env's own verifier judged correct against the
label the reward never saw, which shows whether label-free training helps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from envgym.agents.trajectory import Trajectory
from envgym.rewards import RewardSpec, answer_equivalence, group_values


def reward_spec_of(env_kwargs: Mapping[str, Any] | None) -> RewardSpec | None:
    """The reward spec among the env's keyword arguments (``reward``, as recipes put it), validated; None if
    there is none."""
    reward = (env_kwargs or {}).get("reward")
    return None if reward is None else RewardSpec.coerce(reward)


def final_answer(trajectory: Trajectory) -> str | None:
    """The episode's answer: the last ``info["answer"]`` its turns reported (what votes, as in eval's maj@k)."""
    answers = [t.info["answer"] for t in trajectory.episode.turns if t.info.get("answer") is not None]
    return str(answers[-1]) if answers else None


def apply_group_rewards(groups: Sequence[Sequence[Trajectory]], spec: RewardSpec, env: Any) -> None:
    """Add every group component of ``spec`` to each group's healthy episodes, in place.

    ``env`` is one env of the run (its ``answers_equivalent`` compares answers when a component's
    ``equivalence`` is ``env``). Failed episodes neither vote nor get a value: their answer is not the policy's.
    A gated component counts only where its gate's unweighted value on the episode's last turn is > 0."""
    components = spec.of_kind("group")
    if not components:
        return
    same = {c.name: answer_equivalence(env, c.option("equivalence")) for c in components}
    for group in groups:
        healthy = [t for t in group if not t.failed and t.turn_rewards]
        if not healthy:
            continue
        answers = [final_answer(t) for t in healthy]
        for component in components:
            values, logged = group_values(component, answers, same[component.name])
            for trajectory, value in zip(healthy, values):
                _add_to_last_turn(trajectory, component.name, component.weight, _gated(trajectory, component.gate, value))
                trajectory.episode.metadata.setdefault("group_rewards", {})[component.name] = logged


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

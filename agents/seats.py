"""Self-play bookkeeping for the agent loop: one multi-agent episode recorded seat by seat.

A :class:`~envgym.multiagent.MultiAgentEnv` returns, after each turn, the messages of the seat that moves next and
every seat's reward in ``info["rewards"]``. The rollout loop plays every seat with the same policy; :class:`Seats`
keeps a separate :class:`~envgym.Episode`, token conversation and message history per seat, so that each seat's
trajectory holds only what that seat saw and sampled (its own tokens, its own loss mask) and its own rewards:

- a seat's prompt is the first messages addressed to it; later messages to it are env tokens (loss mask 0);
- a reward that reaches a seat on another seat's turn (the loser's -1 on the winner's move) is added to that
  seat's last turn, the turn whose action led to it;
- the episode's end (terminated, truncated, a failure, a cut by the loop's limits) ends every seat's record;
- each seat's records carry ``metadata["agent"]`` and a ``group_id`` of their own; the trainer keeps a task's
  episodes of every seat together (:func:`task_groups`: dynamic sampling, group rewards and samplers see the
  task) and splits them by seat for the advantages (:func:`seat_groups`), so every seat's turns are weighed
  against the same seat's G episodes with its own reward.

A seat that never moved (its opponent forfeited on the first turn) has no turns and yields no trajectory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import envgym
from envgym.agents.trajectory import Trajectory
from envgym.core import Action, Message


@dataclasses.dataclass
class SeatRecord:
    """What one seat has seen and done so far."""

    episode: envgym.Episode
    conversation: Any  # a TokenConversation with a token-level policy, else None
    history: list[Message]


class Seats:
    """The seats of one multi-agent episode in the rollout loop (see the module docstring): a lane of the loop
    (:class:`~envgym.agents.rollout.Lane`'s methods) whose ``episode``, ``conversation`` and ``history`` are those of
    the seat that moves next."""

    def __init__(self, first: str, record: Any, new_conversation: Callable[[list[Message]], Any]):
        self.group_id = record.episode.metadata["group_id"]
        self.new_conversation = new_conversation
        self.current = first
        self.records: dict[str, SeatRecord] = {}
        self._seat(first, SeatRecord(record.episode, record.conversation, record.history))

    @property
    def episode(self) -> envgym.Episode:
        return self.records[self.current].episode

    @property
    def conversation(self) -> Any:
        return self.records[self.current].conversation

    @property
    def history(self) -> list[Message]:
        return self.records[self.current].history

    def _seat(self, agent: str, record: SeatRecord) -> SeatRecord:
        record.episode.metadata.update(group_id=f"{self.group_id}#{agent}", agent=agent)
        self.records[agent] = record
        return record

    def record(
        self, action: Action, messages: list[Message], reward: float, terminated: bool, truncated: bool, info: dict
    ) -> None:
        """The acting seat's turn, with its own reward; the env's messages are for the seat that moves next."""
        self.episode.add_turn(action, [], reward, terminated, truncated, info)

    def after_turn(
        self,
        action: Action,
        messages: list[Message],
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        ended: bool,
    ) -> None:
        """Settle the step the current seat just played (rewards that reach other seats, the end of every seat's
        record) and hand the next seat its messages; a failed episode is settled by :meth:`finish`."""
        if self.episode.failed:
            return
        acting = self.current
        self.records[acting].history.append(assistant_message(action))
        for agent, reward in (info.get("rewards") or {}).items():
            record = self.records.get(agent)
            if agent != acting and record is not None and record.episode.turns:
                turn = record.episode.turns[-1]
                turn.reward += float(reward)
                parts = (info.get("agent_reward_components") or {}).get(agent) or {}
                for name, value in parts.items():
                    turn.reward_components[name] = turn.reward_components.get(name, 0.0) + float(value)
        if terminated or truncated:
            for agent, record in self.records.items():
                if agent != acting and record.episode.turns:
                    last = record.episode.turns[-1]
                    last.observation = last.observation + list((info.get("observations") or {}).get(agent, []))
                    last.terminated, last.truncated = bool(terminated), bool(truncated)
            return
        following = info.get("agent", acting)
        record = self.records.get(following)
        if record is None:  # the first time this seat is addressed: these messages are its prompt
            first = self.records[acting].episode
            episode = envgym.Episode(
                env_id=first.env_id,
                task_id=first.task_id,
                prompt=list(messages),
                seed=first.seed,
                metadata=dict(first.metadata),
            )
            record = self._seat(following, SeatRecord(episode, self.new_conversation(messages), list(messages)))
        else:
            record.episode.turns[-1].observation = list(messages)
            record.history.extend(messages)
            if record.conversation is not None:
                record.conversation.add_env_messages(messages)
        self.current = following

    def finish(self) -> list[tuple[envgym.Episode, Any]]:
        """Every seat that moved (or failed), as (episode, conversation), once the loop is done: a failure or a loop
        cut of the episode marks every seat's record."""
        error = next((r.episode.error for r in self.records.values() if r.episode.error), None)
        cut = next(
            (r.episode.metadata["truncated_by"] for r in self.records.values() if "truncated_by" in r.episode.metadata),
            None,
        )
        for record in self.records.values():
            record.episode.error = record.episode.error or error
            if cut is not None:
                record.episode.metadata.setdefault("truncated_by", cut)
                if record.episode.turns and not record.episode.turns[-1].terminated:
                    record.episode.turns[-1].truncated = True
        return [(r.episode, r.conversation) for r in self.records.values() if r.episode.turns or r.episode.failed]


def assistant_message(action: Action) -> Message:
    """An action as the assistant message it adds to a conversation."""
    return action if isinstance(action, dict) else {"role": "assistant", "content": action}


def task_groups(trajectories: list[Trajectory], tasks: int) -> list[list[Trajectory]]:
    """A rollout's trajectories per task (``metadata["group_index"]``), in task order: the G episodes of a
    single-agent env's task, or every seat's episodes of a multi-agent env's task."""
    groups: list[list[Trajectory]] = [[] for _ in range(tasks)]
    for trajectory in trajectories:
        groups[trajectory.episode.metadata["group_index"]].append(trajectory)
    return groups


def seat_groups(groups: list[list[Trajectory]]) -> list[list[Trajectory]]:
    """Each task's group split by ``group_id``: one GRPO group per seat, so every seat's turns are weighed against
    the same seat's G episodes (single-agent groups come back as they were)."""
    split = []
    for group in groups:
        by_id: dict[str, list[Trajectory]] = {}
        for trajectory in group:
            by_id.setdefault(trajectory.group_id, []).append(trajectory)
        split.extend(by_id.values())
    return split

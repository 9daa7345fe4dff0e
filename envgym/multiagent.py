"""Multi-agent episodes: two or more seats take turns in one episode, each with its own view and its own reward.

The shape follows PettingZoo's AEC API (agents act one at a time; ``agents``, ``agent_selection``, per-agent
rewards), but a :class:`MultiAgentEnv` *is* an :class:`~envgym.core.Env`: it registers, wraps, vectorizes, passes
``check_env`` and ``envgym audit`` like any other env. Every ``step`` plays the turn of ``agent_selection``:

- ``messages``: the new messages for the seat that moves next, from that seat's side only (a seat never sees
  another seat's prompt or private data); the first time a seat is addressed they include its prompt. At the
  end of the episode: the acting seat's last feedback.
- ``reward``: the acting seat's reward for this turn, ``info["reward_components"]`` its parts.
- ``info["rewards"]``: every seat's reward for this turn (a loss arrives on the winner's turn), and
  ``info["agent_reward_components"]`` their parts. Seat-aware code (the trainer) reads these.
- ``info["agent"]``: whose messages ``messages`` are (the seat to move next; at the end, the acting seat),
  ``info["acting_agent"]``: who just played; ``info["observations"]`` at the end: every seat's last messages.
- ``terminated``/``truncated`` end the episode for every seat at once.

``reset`` returns the first seat's messages with ``info["agent"]`` and ``info["agents"]`` (all seats).

Self-play is one policy playing every seat (``envgym.agents.rollout`` records each seat's turns as its own
trajectory); single-policy code that ignores seats sees one conversation whose turns alternate between seats'
views, and the acting seat's reward on each turn.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task, reward_total


@dataclasses.dataclass
class SeatTurn:
    """What one seat's turn did, as a :class:`MultiAgentEnv` subclass reports it from ``_play``.

    messages: new messages for each seat (seats left out get none this turn).
    rewards: each seat's reward components for this turn (seats left out get 0).
    next_agent: the seat that moves next; ``None`` when the game is over (terminated).
    info: extra info keys for this step (``action_valid``, ``action_error``, the board...).
    """

    messages: dict[str, list[Message]]
    rewards: dict[str, dict[str, float]]
    next_agent: str | None
    info: dict[str, Any] = dataclasses.field(default_factory=dict)


class MultiAgentEnv(Env):
    """An env whose seats take turns (see the module docstring for what ``step`` returns).

    Set by subclasses:
        agents: the seat names, e.g. ``("X", "O")``.
    Implemented by subclasses:
        ``_reset_seats(task, options) -> (first_agent, messages, info)``: set up the game; ``messages`` are the
            first seat's.
        ``_play(agent, action) -> SeatTurn``: play ``agent``'s validated action.
    """

    agents: tuple[str, ...] = ()
    _agent: str | None = None
    _pending: dict[str, list[Message]]
    _returns: dict[str, float]

    @property
    def agent_selection(self) -> str | None:
        """The seat whose turn it is (``None`` before the first reset and once the episode is over)."""
        return None if self._episode_over else self._agent

    @property
    def cumulative_rewards(self) -> dict[str, float]:
        """Each seat's return so far in this episode."""
        return dict(getattr(self, "_returns", {}))

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        first, messages, info = self._reset_seats(task, options)
        if first not in self.agents:
            raise ValueError(f"{type(self).__name__}._reset_seats named seat {first!r}; the seats are {self.agents}")
        self._agent = first
        self._pending = {agent: [] for agent in self.agents}
        self._returns = {agent: 0.0 for agent in self.agents}
        info.update(agent=first, agents=list(self.agents))
        return messages, info

    def _step(self, action: Action) -> StepResult:
        acting = self._agent
        turn = self._play(acting, action)
        unknown = (set(turn.messages) | set(turn.rewards) | {turn.next_agent}) - set(self.agents) - {None}
        if unknown:
            raise ValueError(f"{type(self).__name__}._play named unknown seats {sorted(unknown)}; seats: {self.agents}")
        for agent, messages in turn.messages.items():
            self._pending[agent].extend(messages)
        components = {agent: {k: float(v) for k, v in turn.rewards.get(agent, {}).items()} for agent in self.agents}
        rewards = {agent: reward_total(parts) for agent, parts in components.items()}
        for agent, reward in rewards.items():
            self._returns[agent] += reward
        info = dict(turn.info)
        info.update(
            acting_agent=acting,
            rewards=rewards,
            reward_components=components[acting],
            agent_reward_components=components,
        )
        terminated = turn.next_agent is None
        if terminated:
            observations = {agent: self._pending[agent] for agent in self.agents}
            self._pending = {agent: [] for agent in self.agents}
            info.update(agent=acting, observations=observations)
            return observations[acting], rewards[acting], True, False, info
        self._agent = turn.next_agent
        messages, self._pending[turn.next_agent] = self._pending[turn.next_agent], []
        info["agent"] = turn.next_agent
        return messages, rewards[acting], False, False, info

    # --- implemented by subclasses -------------------------------------------------------------
    def _reset_seats(self, task: Task | None, options: dict[str, Any]) -> tuple[str, list[Message], dict[str, Any]]:
        """Set up the game for ``task``; return the first seat, its first messages and the info dict."""
        raise NotImplementedError

    def _play(self, agent: str, action: Action) -> SeatTurn:
        """Play ``agent``'s validated action; say what each seat sees and earns, and who moves next."""
        raise NotImplementedError


def is_multi_agent(info: dict[str, Any]) -> bool:
    """Whether a reset's ``info`` comes from a multi-agent env (works through wrappers and vector envs)."""
    return isinstance(info.get("agents"), list) and info.get("agent") in info["agents"]

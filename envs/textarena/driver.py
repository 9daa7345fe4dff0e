"""Drives one TextArena game: its calls, its randomness, and its messages as chat text for each player.

TextArena games draw from Python's global ``random`` (their ``State`` seeds it at reset), so two games in one
process, or anything else that draws from ``random`` between two steps, would change each other's games. Every call
into a game runs under one lock with the game's own ``random`` state swapped in and saved after: a game is then a
function of its seed and its actions alone, whatever runs beside it (threads included). What a game prints to
stdout during a call is dropped.

A player's new messages are what TextArena queued for that player since its last turn (``get_observation``), written
as TextArena's own LLM wrapper writes them (``[GAME] ...``, ``[Player 1] ...``), less the player's own action,
which the agent already holds as its assistant turn.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import io
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

_RANDOM_LOCK = threading.Lock()
# Started games kept per driver, by seed, where starting one is slow: an env replays the same few tasks (GRPO groups,
# audits), and Sokoban takes a quarter of a second to generate its puzzle. Where a start is quick, copying the game
# costs more than starting it again (Set's game copies in 66 ms and starts in 0.2 ms).
CACHED_STARTS = 16
SLOW_START_S = 0.05


@dataclasses.dataclass
class Move:
    """What one action did: who moves next (None: the game is over), whether TextArena refused the action, and at
    the end every player's reward and last messages."""

    next_player: int | None
    invalid_reason: str | None = None
    rewards: dict[int, Any] = dataclasses.field(default_factory=dict)  # TextArena's values, as it set them
    final_messages: dict[int, str] = dataclasses.field(default_factory=dict)
    game_info: dict[int, Any] = dataclasses.field(default_factory=dict)


class GameDriver:
    """One TextArena game (its ``-raw`` registration: no wrappers), played through :meth:`reset` and :meth:`play`."""

    def __init__(self, game_id: str, num_players: int, make: Callable[[str], Any]):
        self.game_id, self.num_players, self._make = game_id, num_players, make
        self._random_state = random.Random().getstate()
        self._starts: collections.OrderedDict[int, tuple[Any, tuple, int, str]] = collections.OrderedDict()

    @contextlib.contextmanager
    def _own_random(self) -> Iterator[None]:
        # Some games print debug lines; stdout may be a protocol (an MCP stdio server, `--json` output), so a game's
        # prints are dropped. The swap is process-wide but brief, and held under the same lock.
        with _RANDOM_LOCK, contextlib.redirect_stdout(io.StringIO()):
            outside = random.getstate()
            random.setstate(self._random_state)
            try:
                yield
            finally:
                self._random_state = random.getstate()
                random.setstate(outside)

    def reset(self, seed: int) -> tuple[int, str]:
        """Start a game from ``seed``; return the first player and its first messages (its prompt).

        A slow seed started before on this driver resumes from a copy of that start (game and random state), which
        is the game a fresh start gives (tested for every adapted game)."""
        if seed in self._starts:
            self._starts.move_to_end(seed)
            game, self._random_state, player, text = self._starts[seed]
            self.game = copy.deepcopy(game)
            return player, text
        start = time.perf_counter()
        with self._own_random():
            self.game = self._make(f"{self.game_id}-raw")
            self.game.reset(num_players=self.num_players, seed=seed)
            player, observation = self.game.get_observation()
        text = self._text(player, observation)
        if time.perf_counter() - start > SLOW_START_S:
            self._starts[seed] = (copy.deepcopy(self.game), self._random_state, player, text)
            if len(self._starts) > CACHED_STARTS:
                self._starts.popitem(last=False)
        return player, text

    def play(self, player: int, action: str) -> tuple[Move, str]:
        """Play ``player``'s action; return what happened and the next player's new messages ("" at the end)."""
        state = self.game.state
        errors_before = getattr(state, "error_count", 0)
        invalid_before = bool(state.game_info.get(player, {}).get("invalid_move"))
        with self._own_random():
            done, _ = self.game.step(action=action)
            if done:
                rewards, game_info = self.game.close()
            else:
                next_player, observation = self.game.get_observation()
        invalid = getattr(state, "error_count", 0) > errors_before or (
            bool(state.game_info.get(player, {}).get("invalid_move")) and not invalid_before
        )
        if not done:
            text = self._text(next_player, observation)
            return Move(next_player, _invalid_reason(text) if invalid else None), text
        pending = {pid: self._text(pid, state.observations.get(pid, [])) for pid in range(self.num_players)}
        return Move(
            next_player=None,
            invalid_reason=_invalid_reason(str(game_info.get(player, {}).get("reason", ""))) if invalid else None,
            rewards={pid: (rewards or {}).get(pid, 0.0) for pid in range(self.num_players)},
            final_messages=pending,
            game_info=dict(game_info or {}),
        ), ""

    def _text(self, player: int, observation: list[tuple[int, str, Any]]) -> str:
        roles = self.game.state.role_mapping
        lines = []
        for sender, message, kind in observation:
            if sender == player and getattr(kind, "name", "") == "PLAYER_ACTION":
                continue  # the player's own action: already the agent's assistant turn
            name = "GAME" if sender == -1 else roles.get(sender, f"Player {sender}")
            lines.append(f"[{name}] {message}".strip())
        return "\n".join(lines)


def _invalid_reason(text: str) -> str:
    """The reason TextArena gave for refusing a move, from its message, else a plain statement."""
    marker = "Reason:"
    if marker in text:
        reason = text.split(marker, 1)[1].split("Please resubmit", 1)[0].strip()
        return reason or "TextArena refused the move"
    return text.strip()[:300] or "TextArena refused the move"

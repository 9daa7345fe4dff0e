"""TicTacToe between two seats, ``X`` and ``O``: self-play when one policy plays both (``opponent="self"``).

Each seat sees the board from its side: its own mark, the opponent's last move, the board with the free cells
numbered. A task is an opening: 0-2 random plies already on the board (drawn by the task's seed, never a
finished game), so tasks differ and the seat to move first may be either mark.

Rewards per seat, as the named component ``outcome``: on the turn the game ends, +1 for the winner, -1 for the
loser, ``draw_reward`` each for a draw; 0 on other turns. An illegal move (no ``<move>`` tag, anything but one
ASCII digit 1-9, a taken cell) forfeits, as against a scripted opponent: the mover loses at -1
(``action_valid=False``, ``info["forfeit"]``). The other seat wins, but a win by forfeit is worth ``draw_reward``,
no more than a draw: one policy plays both seats, and a seat that throws the game must not pay its partner (a
throw would otherwise be a cheaper way to +1 than winning on the board). A seat can still throw with legal
moves; docs/multi-agent.md says what that buys.

:meth:`TicTacToeSelfPlay.reference_action` is a perfect (minimax) move for the seat to move, so reference play
by both seats ends as the opening's game-theoretic value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Action, Message, RewardRange, Task, action_text
from envgym.envs.games.tictactoe import (
    EMPTY,
    TicTacToe,
    free_cells,
    minimax_moves,
    minimax_value,
    other,
    parse_move,
    place,
    render,
    winner,
)
from envgym.multiagent import MultiAgentEnv, SeatTurn
from envgym.tasks import ProceduralTaskSource

MAX_OPENING_PLIES = 2


def rules(mark: str) -> str:
    """What a seat is told the first time it is addressed."""
    return (
        f"Let's play TicTacToe against another player. You play {mark}, your opponent plays {other(mark)}; "
        "X moves first. Get three of your marks in a row, column or diagonal to win. The free cells show their "
        "numbers 1-9. Answer with the cell you take in the form <move>5</move>. An illegal move (no such tag, "
        "a taken cell, anything but a number 1-9) loses the game."
    )


class TicTacToeSelfPlay(MultiAgentEnv):
    description = "TicTacToe between two seats (X, O), both played by the policy; +1 win, -1 loss, 0 draw per seat."
    agents = ("X", "O")
    reward_ranges = {"outcome": RewardRange(-1.0, 1.0)}

    def __init__(self, draw_reward: float = 0.0, max_opening_plies: int = MAX_OPENING_PLIES):
        if not -1.0 <= draw_reward <= 1.0:
            raise ValueError(f"draw_reward must be in [-1, 1] (between a loss and a win), got {draw_reward!r}")
        if not isinstance(max_opening_plies, int) or not 0 <= max_opening_plies <= 4:
            raise ValueError(
                f"max_opening_plies must be an int in [0, 4] (no opening decides the game), got {max_opening_plies!r}"
            )
        self.draw_reward = float(draw_reward)
        self.max_opening_plies = max_opening_plies
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        board, mark = EMPTY * 9, "X"
        for _ in range(int(rng.integers(self.max_opening_plies + 1))):
            cells = free_cells(board)
            board, mark = place(board, cells[int(rng.integers(len(cells)))], mark), other(mark)
        return Task(
            id=f"tictactoe-self-{index}",
            messages=[{"role": "user", "content": rules(mark)}],
            answer=minimax_value(board, mark),
            metadata={"opening": board, "first": mark},
        )

    def _reset_seats(self, task: Task, options: dict[str, Any]) -> tuple[str, list[Message], dict[str, Any]]:
        self.board = task.metadata["opening"]
        self.introduced = {task.metadata["first"]}
        messages = task.prompt()
        messages[-1]["content"] += f"\n\n{render(self.board)}\nYour move."
        return task.metadata["first"], messages, {"board": self.board}

    def reference_action(self) -> Action | None:
        """A perfect move for the seat to move (the first of the minimax moves)."""
        if self.agent_selection is None:
            return None
        return f"<move>{minimax_moves(self.board, self.agent_selection)[0] + 1}</move>"

    def _play(self, agent: str, action: Action) -> SeatTurn:
        opponent = other(agent)
        cell, problem = parse_move(action_text(action), self.board)
        if cell is None:
            return SeatTurn(
                messages={
                    agent: [_user(f"{problem} That is an illegal move, so you forfeit: you lose.")],
                    opponent: [
                        _user(
                            self._greeting(opponent) + "Your opponent made an illegal move and "
                            f"forfeits: you win, and a win by forfeit counts as a draw.\n{render(self.board)}"
                        )
                    ],
                },
                rewards={agent: {"outcome": -1.0}, opponent: {"outcome": self.draw_reward}},
                next_agent=None,
                info={
                    "action_valid": False,
                    "action_error": problem,
                    "forfeit": True,
                    "board": self.board,
                    "outcomes": {agent: "loss", opponent: "win"},
                },
            )
        self.board = place(self.board, cell, agent)
        info: dict[str, Any] = {"action_valid": True, "move": cell + 1, "board": self.board}
        seen = f"{render(self.board)}\n"
        told = self._greeting(opponent) + f"Your opponent ({agent}) took cell {cell + 1}.\n{seen}"
        if winner(self.board) == agent:
            outcomes = {agent: "win", opponent: "loss"}
            rewards = {agent: {"outcome": 1.0}, opponent: {"outcome": -1.0}}
            mover, watcher = "You win!", "You lose."
        elif not free_cells(self.board):
            outcomes = {agent: "draw", opponent: "draw"}
            rewards = {agent: {"outcome": self.draw_reward}, opponent: {"outcome": self.draw_reward}}
            mover = watcher = "It's a draw."
        else:
            return SeatTurn(
                messages={opponent: [_user(told + "Your move.")]},
                rewards={agent: {"outcome": 0.0}},
                next_agent=opponent,
                info=info,
            )
        info["outcomes"] = outcomes
        return SeatTurn(
            messages={agent: [_user(f"You took cell {cell + 1}.\n{seen}{mover}")], opponent: [_user(told + watcher)]},
            rewards=rewards,
            next_agent=None,
            info=info,
        )

    def _greeting(self, mark: str) -> str:
        """The rules, the first time a seat is addressed (its prompt), else nothing."""
        if mark in self.introduced:
            return ""
        self.introduced.add(mark)
        return rules(mark) + "\n\n"


def make_tictactoe(opponent: str = "greedy", **kwargs: Any) -> TicTacToe | TicTacToeSelfPlay:
    """The entry point of ``games/TicTacToe-v0``: ``opponent="self"`` is the two-seat game, any other opponent the
    single-seat game against that scripted player (:class:`~envgym.envs.games.tictactoe.TicTacToe`)."""
    if opponent != "self":
        return TicTacToe(opponent=opponent, **kwargs)
    if "agent_first" in kwargs:
        raise ValueError(
            "agent_first means nothing in self-play (the policy plays both seats); the seat to move "
            "first is set by the task's opening"
        )
    return TicTacToeSelfPlay(**kwargs)


def _user(text: str) -> Message:
    return {"role": "user", "content": text}

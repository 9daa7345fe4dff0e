"""TicTacToe against a scripted opponent of selectable strength.

The agent plays cells 1-9 (reading order) with ``<move>N</move>``; the opponent answers in the same turn.
Opponents: ``random`` (any free cell), ``greedy`` (wins when it can, else blocks the agent's win, else
random) and ``minimax`` (perfect play: never loses; random among equally good moves). Who moves first is
drawn per task unless ``agent_first`` fixes it; the opponent's random choices are seeded by the task, so the
same task and the same moves always get the same replies (GRPO groups).

Rewards per turn, as named components:

- ``outcome``: on the turn the game ends (terminated), +1 for a win, ``draw_reward`` for a draw, -1 for a
  loss; 0 on other turns. Against ``minimax`` the best reachable outcome is a draw.
- ``format``: ``-invalid_penalty`` for a turn without a legal move (no tag, a cell outside 1-9, a taken
  cell); ``action_valid=False``, the board is unchanged and the feedback says what is accepted.

The registry's ``max_turns`` bounds the turns, invalid ones included (``truncated``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total
from envgym.tasks import ProceduralTaskSource

MOVE = re.compile(r"<move>(.*?)</move>", re.DOTALL | re.IGNORECASE)
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
EMPTY = "."
OPPONENTS = ("random", "greedy", "minimax")


def winner(board: str) -> str | None:
    """The mark (``X``/``O``) that owns a full line of the 9-character ``board``, if any."""
    for a, b, c in LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return board[a]
    return None


def free_cells(board: str) -> list[int]:
    """0-based indices of the empty cells."""
    return [i for i, cell in enumerate(board) if cell == EMPTY]


def other(mark: str) -> str:
    return "O" if mark == "X" else "X"


def place(board: str, cell: int, mark: str) -> str:
    """A copy of ``board`` with ``mark`` in ``cell`` (boards are strings so the solver can memoize them)."""
    return board[:cell] + mark + board[cell + 1:]


@functools.lru_cache(maxsize=None)
def minimax_value(board: str, mark: str) -> int:
    """The outcome for ``mark``, who is to move, under perfect play by both sides: 1 win, 0 draw, -1 loss.

    Memoized: TicTacToe has fewer than 6,000 reachable positions, so the whole tree is solved once.
    """
    if winner(board) is not None:
        return -1  # the previous mover completed a line
    cells = free_cells(board)
    if not cells:
        return 0
    return max(-minimax_value(place(board, cell, mark), other(mark)) for cell in cells)


def minimax_moves(board: str, mark: str) -> list[int]:
    """Every 0-based cell whose move keeps ``mark``'s best outcome under perfect play."""
    scores = {cell: -minimax_value(place(board, cell, mark), other(mark)) for cell in free_cells(board)}
    best = max(scores.values())
    return [cell for cell, score in scores.items() if score == best]


def winning_cells(board: str, mark: str) -> list[int]:
    """Free cells that complete a line for ``mark`` right away."""
    return [cell for cell in free_cells(board) if winner(place(board, cell, mark)) == mark]


def render(board: str) -> str:
    """The board as the agent sees it: marks, and the number of each free cell."""
    cells = [mark if mark != EMPTY else str(i + 1) for i, mark in enumerate(board)]
    rows = [f" {cells[r]} | {cells[r + 1]} | {cells[r + 2]}" for r in (0, 3, 6)]
    return "\n---+---+---\n".join(rows)


class TicTacToe(Env):
    description = "TicTacToe against a scripted random, greedy or minimax opponent."

    def __init__(self, opponent: str = "greedy", agent_first: bool | None = None, draw_reward: float = 0.0,
                 invalid_penalty: float = 0.0):
        if opponent not in OPPONENTS:
            raise ValueError(f"unknown opponent {opponent!r}; choose one of {', '.join(OPPONENTS)}")
        if agent_first is not None and not isinstance(agent_first, bool):
            raise ValueError(f"agent_first must be True, False or None (drawn per task), got {agent_first!r}")
        self.opponent, self.agent_first = opponent, agent_first
        self.draw_reward, self.invalid_penalty = float(draw_reward), float(invalid_penalty)
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        agent_first = bool(rng.integers(2)) if self.agent_first is None else self.agent_first
        mark = "X" if agent_first else "O"
        rules = (
            f"Let's play TicTacToe. You play {mark}, I play {other(mark)}; X moves first. Get three of your marks "
            "in a row, column or diagonal to win. The free cells show their numbers 1-9. "
            "Answer with the cell you take in the form <move>5</move>."
        )
        return Task(id=f"tictactoe-{self.opponent}-{index}", messages=[{"role": "user", "content": rules}],
                    metadata={"agent_mark": mark, "opponent": self.opponent,
                              "opponent_seed": int(rng.integers(2**31))})

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.agent_mark = task.metadata["agent_mark"]
        self.opponent_rng = np.random.default_rng(task.metadata["opponent_seed"])
        self.board = EMPTY * 9
        messages = task.prompt()
        opening = "You move first."
        if self.agent_mark == "O":
            cell = self._opponent_move()
            opening = f"I moved first: X in cell {cell + 1}."
        messages[-1]["content"] += f"\n\n{opening}\n{render(self.board)}\nYour move."
        return messages, {"agent_mark": self.agent_mark, "board": self.board}

    def _step(self, action: Action) -> StepResult:
        cell, problem = self._parse_move(action_text(action))
        if cell is None:
            components = {"format": 0.0 - self.invalid_penalty}  # 0.0 - p: no -0.0 when p is 0
            feedback = f"{problem} Reply with a free cell as <move>N</move>.\n{render(self.board)}"
            info = {"action_valid": False, "action_error": problem, "board": self.board, "reward_components": components}
            return [{"role": "user", "content": feedback}], reward_total(components), False, False, info

        self.board = place(self.board, cell, self.agent_mark)
        info: dict[str, Any] = {"action_valid": True, "move": cell + 1}
        lines = [f"You took cell {cell + 1}."]
        outcome = self._outcome()
        if outcome is None:
            reply = self._opponent_move()
            info["opponent_move"] = reply + 1
            lines.append(f"I took cell {reply + 1}.")
            outcome = self._outcome()
        lines.append(render(self.board))
        lines.append({None: "Your move.", "win": "You win!", "loss": "I win.", "draw": "It's a draw."}[outcome])
        score = {None: 0.0, "win": 1.0, "loss": -1.0, "draw": self.draw_reward}[outcome]
        components = {"outcome": score}
        info.update(board=self.board, reward_components=components)
        if outcome is not None:
            info.update(outcome=outcome, correct=outcome == "win")
        messages = [{"role": "user", "content": "\n".join(lines)}]
        return messages, reward_total(components), outcome is not None, False, info

    def _parse_move(self, text: str) -> tuple[int | None, str]:
        moves = MOVE.findall(text)
        if not moves:
            return None, "I could not find a <move>N</move> tag."
        move = moves[-1].strip()
        if not re.fullmatch(r"[1-9]", move):
            return None, f"{move[:20]!r} is not a cell number from 1 to 9."
        cell = int(move) - 1
        if self.board[cell] != EMPTY:
            return None, f"Cell {move} is already taken."
        return cell, ""

    def _outcome(self) -> str | None:
        mark = winner(self.board)
        if mark is not None:
            return "win" if mark == self.agent_mark else "loss"
        return "draw" if not free_cells(self.board) else None

    def _opponent_move(self) -> int:
        mark = other(self.agent_mark)
        if self.opponent == "minimax":
            choices = minimax_moves(self.board, mark)
        elif self.opponent == "greedy":
            choices = (winning_cells(self.board, mark) or winning_cells(self.board, self.agent_mark)
                       or free_cells(self.board))
        else:
            choices = free_cells(self.board)
        cell = choices[int(self.opponent_rng.integers(len(choices)))]
        self.board = place(self.board, cell, mark)
        return cell

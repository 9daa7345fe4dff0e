"""Solvers for reasoning-gym tasks whose entries keep no solution, so ``reference_action()`` has one to play."""

from __future__ import annotations

import collections

_SIZE = 6  # reasoning-gym's rush hour board is 6 x 6; the red car (piece A) leaves on row 2 at the right
_EXIT = 2 * _SIZE + _SIZE - 2


def rush_hour_solution(board_config: str) -> str | None:
    """Moves ("B+1 A+3") that bring piece A to the exit, by breadth-first search over piece positions.

    ``board_config`` is reasoning-gym's 36-character board (``o`` empty, ``x`` wall, a letter per vehicle).
    Vehicles are named as the prompt shows them: the i-th label in sorted order is ``chr(ord("A") + i)``.
    Returns None when no sequence reaches the exit.
    """
    cells: dict[str, list[int]] = collections.defaultdict(list)
    for index, label in enumerate(board_config):
        if label not in "ox":
            cells[label].append(index)
    walls = {index for index, label in enumerate(board_config) if label == "x"}
    pieces = [(cells[label][1] - cells[label][0], len(cells[label])) for label in sorted(cells)]  # (stride, size)
    start = tuple(cells[label][0] for label in sorted(cells))
    parents: dict[tuple[int, ...], tuple[tuple[int, ...], str] | None] = {start: None}
    queue = collections.deque([start])
    while queue:
        state = queue.popleft()
        if state[0] == _EXIT:
            return _path(parents, state)
        occupied = set(walls)
        for (stride, size), head in zip(pieces, state):
            occupied.update(head + stride * k for k in range(size))
        for piece, ((stride, size), head) in enumerate(zip(pieces, state)):
            for direction in (-1, 1):
                steps = 1
                while True:
                    # The cell the piece enters when it moves ``steps`` in ``direction``.
                    entered = head + stride * (-steps if direction < 0 else size - 1 + steps)
                    same_line = entered // _SIZE == head // _SIZE if stride == 1 else 0 <= entered < _SIZE * _SIZE
                    if not same_line or entered < 0 or entered in occupied:
                        break
                    successor = state[:piece] + (head + direction * steps * stride,) + state[piece + 1 :]
                    if successor not in parents:
                        parents[successor] = (state, f"{chr(ord('A') + piece)}{'+' if direction > 0 else '-'}{steps}")
                        queue.append(successor)
                    steps += 1
    return None


def antiderivative(integrand: str, variable: str) -> str:
    """An antiderivative of ``integrand`` (sympy's ``integrate``), written as the integration tasks ask: ``... + C``.

    For the integration entries whose gold is sympy's unevaluated ``Integral(...)`` (about 1 in 8 of
    intermediate_integration's): that is the question restated, which our scorer refuses as an answer.
    """
    import sympy

    from envgym.envs.rg.scorers import sympy_namespace
    from envgym.verifiers.safe_expr import sympy_expression

    names, functions = sympy_namespace(variable)
    return f"{sympy.integrate(sympy_expression(integrand, names, functions), names[variable])} + C"


def _path(parents: dict, state: tuple[int, ...]) -> str:
    moves = []
    while parents[state] is not None:
        state, move = parents[state]
        moves.append(move)
    return " ".join(reversed(moves))

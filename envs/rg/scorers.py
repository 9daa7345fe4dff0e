"""Our scorers for the reasoning-gym tasks whose own scorer executes the answer or is beaten by a generic trick.

Every replacement keeps the task's own grading rule and credit levels where they hold and changes only the hole:

- **Answer executed in the env's process** (``eval`` in n_queens, binary_matrix, spiral_matrix,
  string_insertion; sympy's ``parse_expr`` in countdown, puzzle24, polynomial_multiplication and both
  integration tasks). We parse with :mod:`envgym.verifiers.safe_expr` instead of running the scorer in the
  sandbox: these answers are numbers, lists and short formulas that a whitelist over :mod:`ast` reads exactly,
  in microseconds, where a sandbox run costs a process start and sympy's import per step.
- **Beaten by a generic answer**: puzzle24 never checks the numbers used (any expression worth 24 earns);
  coin_flip gives full credit to a prefix of the probability's digits (``0`` for ``0.3125``) and to ``0`` on
  small probabilities;
  game_of_life_halting gives 1.0 to any non-empty text; advanced_geometry reads the first two numbers of any
  text as the orthocenter; knights_knaves reads (name, role) pairs out of any text, a copied statement too;
  rush_hour and rubiks_cube pick moves out of any text.

``SCORERS`` maps a task to ``score(dataset, answer, entry) -> float``; the env calls it instead of
``dataset.score_answer``. A test checks that every registered task whose scorer's source calls ``eval``,
``exec``, ``parse_expr`` or ``sympify`` is here or excluded.
"""

from __future__ import annotations

import cmath
import random
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from envgym.verifiers.safe_expr import (
    UnsafeExpressionError,
    evaluate_arithmetic,
    number_literals,
    python_literal,
    sympy_expression,
)

Scorer = Callable[[Any, str | None, dict[str, Any]], float]


def _arithmetic_solution(answer: str, numbers: list[int], target: Fraction) -> tuple[bool, bool]:
    """(uses exactly the given numbers, each once; equals ``target``) for an arithmetic answer."""
    used = number_literals(answer)
    uses_given = sorted(used) == sorted(Fraction(number) for number in numbers)
    return uses_given, evaluate_arithmetic(answer) == target


def _countdown(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # reasoning-gym's levels: 0.01 for no usable expression, 0.05 for a wrong one, 1.0 for a solution.
    if answer is None or not answer.strip():
        return 0.01
    try:
        uses_given, hits = _arithmetic_solution(
            answer, entry["metadata"]["numbers"], Fraction(entry["metadata"]["target"])
        )
    except UnsafeExpressionError:
        return 0.01
    return 1.0 if uses_given and hits else 0.05


def _puzzle24(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # reasoning-gym checks only that four numbers in range appear; the task is to use the four given ones.
    if answer is None:
        return 0.01
    try:
        uses_given, hits = _arithmetic_solution(answer, entry["metadata"]["numbers"], Fraction(24))
    except UnsafeExpressionError:
        return 0.01
    return 1.0 if uses_given and hits else 0.01


def _literal_reformatted(render: Callable[[Any, Any], str], credit: float, *, strip: bool = False) -> Scorer:
    """The ``eval`` scorers: 1.0 for the gold text, ``credit`` for a Python literal that renders to it."""

    def score(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
        if not isinstance(answer, str):
            return 0.0
        valid = entry["metadata"].get("valid_answers") or [entry["answer"]]
        valid = [text.strip() for text in valid] if strip else valid
        answer = answer.strip() if strip else answer
        if answer in valid:
            return 1.0
        try:
            return credit if render(dataset, python_literal(answer)) in valid else 0.0
        except (UnsafeExpressionError, TypeError, ValueError, AttributeError):
            return 0.0

    return score


_SYMPY_FUNCTIONS = (
    "sin",
    "cos",
    "tan",
    "cot",
    "sec",
    "csc",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "log",
    "sqrt",
)
_CHECK_POINTS = 5


def sympy_namespace(variable: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The names (the variable, the constant ``C``, pi, E) and functions a formula answer may use."""
    import sympy

    names = {variable: sympy.Symbol(variable), "C": sympy.Symbol("C"), "pi": sympy.pi, "E": sympy.E}
    return names, {name: getattr(sympy, name) for name in _SYMPY_FUNCTIONS}


def _integration(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    """1.0 when the answer's derivative equals the integrand.

    Equality is checked at random complex points rather than with ``sympy.simplify`` (reasoning-gym's way):
    simplify can run for minutes on a crafted formula, evaluation is bounded, and a non-zero expression
    vanishes at random points with probability zero. The points are drawn per call, so they cannot be learned.
    """
    import sympy

    if not isinstance(answer, str):
        return 0.0
    variable = entry["metadata"]["variable"]
    names, functions = sympy_namespace(variable)
    try:
        derivative = sympy.diff(sympy_expression(answer, names, functions), names[variable])
        integrand = sympy_expression(entry["metadata"]["integrand"], names, functions)
    except (UnsafeExpressionError, TypeError, ValueError, ZeroDivisionError):
        return 0.0
    rng = random.SystemRandom()
    for _ in range(_CHECK_POINTS):
        point = {names[variable]: complex(rng.uniform(0.2, 1.5), rng.uniform(0.2, 1.5)), names["C"]: rng.random()}
        try:
            got, want = complex(derivative.evalf(subs=point)), complex(integrand.evalf(subs=point))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return 0.0
        if not (cmath.isfinite(got) and abs(got - want) <= 1e-8 * (1.0 + abs(want))):
            return 0.0
    return 1.0


def _polynomial_multiplication(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # reasoning-gym compares sympy's automatic canonical forms (no expansion): the product must be written out.
    if not isinstance(answer, str):
        return 0.0
    import sympy

    names = {name: sympy.Symbol(name) for name in set(re.findall(r"[A-Za-z_]\w*", entry["answer"]))}
    try:
        return float(sympy_expression(answer, names, {}) == sympy_expression(entry["answer"], names, {}))
    except (UnsafeExpressionError, TypeError, ValueError, ZeroDivisionError):
        return 0.0


def _coin_flip(dataset: Any, answer: str | None, entry: dict[str, Any], tolerance: float = 1e-4) -> float:
    # reasoning-gym also gives credit for a matching prefix of the digits, so "0" earns full marks on "0.3125",
    # and its tolerance is absolute: "0" was within 1e-4 of 15 heads in 15 flips (3.05e-05). Ours is relative.
    try:
        value = Fraction((answer or "").replace(",", "").strip())
    except (ValueError, ZeroDivisionError):
        return 0.0
    gold = Fraction(entry["answer"].replace(",", ""))
    return float(abs(value - gold) <= tolerance * abs(gold))


def _game_of_life_halting(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # reasoning-gym compares bool(answer) with bool(gold): both non-empty strings, so any text earned 1.0.
    return float(isinstance(answer, str) and answer.strip().lower() == str(entry["answer"]).strip().lower())


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_POINT = re.compile(rf"\(?\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\)?")


def _advanced_geometry(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # The orthocenter answer must be one point: reasoning-gym splits any text on commas and reads two numbers.
    if entry["metadata"]["task_type"] == "orthocenter" and not (
        isinstance(answer, str) and _POINT.fullmatch(answer.strip())
    ):
        return 0.0
    return float(dataset.score_answer(answer, entry))


def _knights_knaves(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # reasoning-gym reads (name, role) pairs out of any text, so a statement copied from the puzzle ("if Riley
    # is an altruist then Daniel is an altruist") is read as an assignment; only assignments are answers.
    metadata = entry["metadata"]
    allowed = {str(name).lower() for name in metadata["names"]} | {"is", "a", "an", "and"}
    allowed |= {metadata["knight_knave_terms"][role].lower() for role in ("knight", "knave")}
    if not isinstance(answer, str) or not set(re.findall(r"\w+", answer.lower())) <= allowed:
        return 0.0
    return float(dataset.score_answer(answer, entry))


def _made_of_moves(answer: str | None, move: str) -> bool:
    """Whether every whitespace-separated token of the answer is a move (matches ``move``).

    rush_hour's and rubiks_cube's scorers pick moves out of any text, so the plan among other words earned
    full marks; rubiks_cube also repeats a move as often as its trailing number says (``U99999999`` would
    build a list of 10^8 moves inside the step).
    """
    return isinstance(answer, str) and all(re.fullmatch(move, token) for token in answer.split())


def _rubiks_cube(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    if not _made_of_moves(answer, r"[URFDLBMESurfdlbxyz]w?'?[23]?'?"):
        return 0.0
    return float(dataset.score_answer(answer, entry))


_RUSH_HOUR_MOVE = r"([A-Z])([+-])(\d{1,2})"


def _rush_hour(dataset: Any, answer: str | None, entry: dict[str, Any]) -> float:
    # The plan ends where the red car exits: reasoning-gym checks only the final board, so moves after the
    # solution (a second plan, another task's plan) were full marks too.
    from reasoning_gym.games.rush_hour import Board

    if not answer or not _made_of_moves(answer, _RUSH_HOUR_MOVE):
        return 0.0
    board, moves = Board(entry["metadata"]["board_config"]), re.findall(_RUSH_HOUR_MOVE, answer)
    for position, (vehicle, sign, steps) in enumerate(moves):
        board.move(vehicle, int(steps) if sign == "+" else -int(steps))
        if board.solved:
            return float(position == len(moves) - 1)
    return float(dataset.score_answer(answer, entry))


def _n_queens_board(dataset: Any, board: Any) -> str:
    return dataset._board_to_string(board)


SCORERS: dict[str, Scorer] = {
    "countdown": _countdown,
    "puzzle24": _puzzle24,
    "n_queens": _literal_reformatted(_n_queens_board, 0.5),
    "binary_matrix": _literal_reformatted(lambda dataset, matrix: dataset._matrix_to_str(matrix), 0.1),
    "spiral_matrix": _literal_reformatted(
        lambda dataset, items: " ".join(str(item) for item in items), 0.1, strip=True
    ),
    "string_insertion": _literal_reformatted(lambda dataset, characters: "".join(characters), 0.1),
    "simple_integration": _integration,
    "intermediate_integration": _integration,
    "polynomial_multiplication": _polynomial_multiplication,
    "coin_flip": _coin_flip,
    "game_of_life_halting": _game_of_life_halting,
    "advanced_geometry": _advanced_geometry,
    "knights_knaves": _knights_knaves,
    "rush_hour": _rush_hour,
    "rubiks_cube": _rubiks_cube,
}

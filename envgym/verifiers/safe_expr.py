"""Read a policy's answer as arithmetic, a sympy expression or a Python literal without executing it.

Shared by every env that reads arithmetic from a policy (reasoning-gym's scorers, math/Calculator-v0's tool).
reasoning-gym's own scorers read answers with ``eval`` and sympy's ``parse_expr`` (which ``eval``s too), inside
the env's own process: an answer could read the scorer's frame (the target) or mutate the cached task. These
readers parse with :mod:`ast` and build the value from a whitelist of node types: numbers, ``+ - * / **``,
parentheses and, for sympy, the names and functions the caller allows. Anything else (attributes, subscripts,
other names or calls, lambdas, comprehensions) is refused with :class:`UnsafeExpressionError`. Sizes are
bounded before any work (text length, digits, exponents, intermediate magnitudes), so no answer can make a
step slow.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

MAX_EXPRESSION_CHARS = 2000
MAX_LITERAL_CHARS = 20_000
_MAX_EXPONENT = 100
_MAX_BITS = 4096  # of an intermediate numerator or denominator: 10**1200, far past any task's numbers
_MAX_INTEGER_DIGITS = 400


class UnsafeExpressionError(ValueError):
    """The text is not an expression of the accepted form (or is too large to evaluate)."""


def _parse(text: str) -> ast.expr:
    if not isinstance(text, str):
        raise UnsafeExpressionError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise UnsafeExpressionError(f"expression of {len(text)} characters; at most {MAX_EXPRESSION_CHARS} accepted")
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise UnsafeExpressionError(f"not an expression ({type(error).__name__})") from None


def _number(node: ast.Constant) -> Fraction:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UnsafeExpressionError(f"only numbers are accepted as constants, got {value!r}"[:120])
    if isinstance(value, int) and len(str(abs(value))) > _MAX_INTEGER_DIGITS:
        raise UnsafeExpressionError(f"integer of more than {_MAX_INTEGER_DIGITS} digits")
    if isinstance(value, float) and not math.isfinite(value):
        raise UnsafeExpressionError("non-finite number")
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)  # 0.1 is 1/10, not binary


def _checked(value: Fraction) -> Fraction:
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > _MAX_BITS:
        raise UnsafeExpressionError("intermediate value too large")
    return value


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1 or abs(exponent) > _MAX_EXPONENT:
        raise UnsafeExpressionError(f"exponents must be integers of at most {_MAX_EXPONENT} in size")
    if base == 0 and exponent < 0:
        raise UnsafeExpressionError("division by zero")
    return _checked(base ** int(exponent))


_ARITHMETIC: dict[type, Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Pow: _power,
}


def evaluate_arithmetic(text: str) -> Fraction:
    """The exact value of an arithmetic expression over number literals (``+ - * / **`` and parentheses).

    Division is exact (``Fraction``); division by zero and non-integer or huge exponents are refused.
    """
    return _bounded_depth(_arithmetic, _parse(text))


_MAX_DEPTH = 200


def _bounded_depth(walk: Callable[[ast.expr], Any], tree: ast.expr) -> Any:
    """``walk(tree)``, with a tree nested deeper than ``_MAX_DEPTH`` (``-----...1``) refused, not raised.

    The depth is measured without recursion first: the interpreter's recursion limit is process-wide and other
    code (sympy, test runners) raises it, so a RecursionError alone is not a bound.
    """
    stack, deepest = [(tree, 1)], 1
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > _MAX_DEPTH:
            raise UnsafeExpressionError(f"expression nested more than {_MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    try:
        return walk(tree)
    except RecursionError:
        raise UnsafeExpressionError("expression nested too deeply") from None


def _arithmetic(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant):
        return _number(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise UnsafeExpressionError("division by zero")
            return _checked(left / right)
        if type(node.op) in _ARITHMETIC:
            return _checked(_ARITHMETIC[type(node.op)](left, right))
    raise UnsafeExpressionError(f"{type(node).__name__} is not accepted in an arithmetic expression")


def number_literals(text: str) -> list[Fraction]:
    """The number literals of an accepted arithmetic expression, in order (the numbers a solution *uses*).

    Read from the syntax tree, so ``-3`` is the literal 3 under a minus and ``2.0`` is one literal.
    """
    tree = _parse(text)
    _bounded_depth(_arithmetic, tree)  # refuses anything that is not plain arithmetic
    literals = sorted(
        (node for node in ast.walk(tree) if isinstance(node, ast.Constant)), key=lambda node: node.col_offset
    )
    return [_number(node) for node in literals]


def sympy_expression(text: str, names: Mapping[str, Any], functions: Mapping[str, Callable[..., Any]]) -> Any:
    """A sympy expression built from ``text`` with only ``names`` (symbols, constants) and ``functions``.

    Number literals become exact rationals; exponents must be numeric constants of at most 100 in size.
    """
    import sympy

    def build(node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return sympy.Rational(_number(node).numerator, _number(node).denominator)
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            value = build(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            if node.keywords or not node.args or any(isinstance(arg, ast.Starred) for arg in node.args):
                raise UnsafeExpressionError(f"{node.func.id}() takes positional arguments only")
            return functions[node.func.id](*(build(arg) for arg in node.args))
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                exponent = _arithmetic(node.right)  # a number: keeps sympy from expanding huge powers
                if abs(exponent) > _MAX_EXPONENT:
                    raise UnsafeExpressionError(f"exponents must be at most {_MAX_EXPONENT} in size")
                return build(node.left) ** sympy.Rational(exponent.numerator, exponent.denominator)
            operations = {
                ast.Add: operator.add,
                ast.Sub: operator.sub,
                ast.Mult: operator.mul,
                ast.Div: operator.truediv,
            }
            if type(node.op) in operations:
                return operations[type(node.op)](build(node.left), build(node.right))
        what = node.id if isinstance(node, ast.Name) else type(node).__name__
        raise UnsafeExpressionError(f"{what} is not accepted in this expression")

    return _bounded_depth(build, _parse(text))


def python_literal(text: str) -> Any:
    """``ast.literal_eval`` of a bounded-size text: the list/tuple/number/string an answer writes, never code."""
    if not isinstance(text, str) or len(text) > MAX_LITERAL_CHARS:
        raise UnsafeExpressionError(f"expected a literal of at most {MAX_LITERAL_CHARS} characters")
    try:
        return ast.literal_eval(text.strip())
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as error:
        raise UnsafeExpressionError(f"not a Python literal ({type(error).__name__})") from None

"""Answers read as arithmetic, sympy expressions or literals without ever being executed."""

from fractions import Fraction

import pytest

from envgym.verifiers.safe_expr import (
    UnsafeExpressionError,
    evaluate_arithmetic,
    number_literals,
    python_literal,
    sympy_expression,
)


def test_arithmetic_is_exact():
    assert evaluate_arithmetic("9*3*8/9") == 24
    assert evaluate_arithmetic("(1 + 2) / 3 - 0.1") == Fraction(9, 10)
    assert evaluate_arithmetic("-2**3") == -8


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "x + 1",
        "abs(-3)",
        "(1).real",
        "[1][0]",
        "lambda: 1",
        "1 if 1 else 2",
        "1 or 2",
        "2 ^ 3",
        "True + 1",
        "'a' * 3",
    ],
)
def test_arithmetic_refuses_names_calls_attributes_and_other_nodes(text):
    with pytest.raises(UnsafeExpressionError):
        evaluate_arithmetic(text)


@pytest.mark.parametrize(
    "text", ["9**9**9**9", "2**0.5", "1/0", "0**-1", "1e309", "9" * 500, "1+" * 2000 + "1", "-" * 1999 + "1"]
)
def test_arithmetic_refuses_what_would_be_slow_huge_or_undefined(text):
    with pytest.raises(UnsafeExpressionError):
        evaluate_arithmetic(text)


def test_number_literals_are_the_numbers_the_expression_uses():
    assert number_literals("10*(8 - 5) - 6") == [10, 8, 5, 6]
    assert number_literals("-3 + 2.5") == [3, Fraction(5, 2)]


def test_sympy_expressions_take_only_the_allowed_names_and_functions():
    import sympy

    x = sympy.Symbol("x")
    expression = sympy_expression("-4*(-2*x - 8)**(3/2)/3 + sin(x)", {"x": x}, {"sin": sympy.sin})
    assert (
        sympy.simplify(expression - (-sympy.Rational(4, 3) * (-2 * x - 8) ** sympy.Rational(3, 2) + sympy.sin(x))) == 0
    )
    for text in ["cos(x)", "y", "x.subs", "sin(x=1)", "x or 0", "x**x", "x**1000"]:
        with pytest.raises(UnsafeExpressionError):
            sympy_expression(text, {"x": x}, {"sin": sympy.sin})


def test_python_literals_are_parsed_never_evaluated():
    assert python_literal("[['Q', '_'], ['_', 'Q']]") == [["Q", "_"], ["_", "Q"]]
    for text in ["__import__('os')", "[1] * 3", "x" * 30_000]:
        with pytest.raises(UnsafeExpressionError):
            python_literal(text)


def test_deep_nesting_is_refused_even_under_a_raised_recursion_limit():
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        with pytest.raises(UnsafeExpressionError, match="nested"):
            evaluate_arithmetic("-" * 1999 + "1")
    finally:
        sys.setrecursionlimit(limit)

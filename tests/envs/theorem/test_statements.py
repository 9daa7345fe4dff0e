"""envs/theorem/statements.py: every generated label re-decided by a second, different procedure.

The generator decides with sympy (expansion, summation, minimum/maximum, isprime) or exhaustive residues; here the
same claims are decided by plain-integer brute force: evaluation at many points, trial division, a grid search.
"""

import functools
from fractions import Fraction

import numpy as np
import pytest
import sympy

from envgym.envs.theorem.statements import FAMILIES


def _is_prime(value: int) -> bool:
    return value >= 2 and all(value % d for d in range(2, int(value**0.5) + 1))


def _value(text: str, **at: int) -> Fraction:
    """Our own sstr text (never a policy's) evaluated at integers, exactly."""
    return Fraction(str(sympy.sympify(text, locals={name: sympy.Integer(v) for name, v in at.items()})))


@functools.lru_cache
def _grid_range(c: int) -> tuple[Fraction, Fraction]:
    """Least and greatest x + c/x over x = 1/8, 2/8, ..., 999 7/8 (a grid holding sqrt(c), and far out)."""
    values = [Fraction(i, 8) + Fraction(c) / Fraction(i, 8) for i in range(1, 8 * 1000)]
    return min(values), max(values)


def brute_force(claim: dict) -> bool:
    kind = claim["kind"]
    if kind == "identity":  # integer arithmetic; polynomials of degree <= 3 that agree on 20 points are equal

        def rhs(v):
            return sum(c * v**p for p, c in enumerate(reversed(claim["rhs_coefficients"])))

        return all((v + claim["a"]) ** claim["power"] * (v - claim["b"]) == rhs(v) for v in range(-10, 10))
    if kind == "prime":
        return all(_is_prime(m * m + m + claim["c"]) for m in range(claim["top"] + 1))
    if kind == "sum":  # closed forms are (rational) polynomials of degree <= 4: 12 points decide them
        total = Fraction(0)
        for m in range(1, 13):
            total += _value(claim["summand"], k=m)
            if total != _value(claim["form"], n=m):
                return False
        return True
    if kind == "divides":
        polynomial = sympy.sympify(claim["polynomial"])
        return all(int(polynomial.subs("n", m)) % claim["divisor"] == 0 for m in range(-60, 61))
    if kind == "amgm":
        low, high = _grid_range(claim["c"])
        return low >= claim["bound"] if claim["relation"] == ">=" else high <= claim["bound"]
    raise AssertionError(kind)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_variants_label_agrees_with_brute_force(family):
    for seed in range(25):
        for statement in FAMILIES[family](np.random.default_rng(seed)):
            assert statement.true == brute_force(statement.claim), statement.text


def test_the_textbook_examples_are_labelled_right():
    primes = FAMILIES["prime"]
    texts = {s.text: s.true for seed in range(40) for s in primes(np.random.default_rng(seed))}
    assert texts.get("For every integer n with 0 <= n <= 40, n^2 + n + 41 is prime.", False) is False
    assert any(text.endswith("<= 39, n^2 + n + 41 is prime.") and true for text, true in texts.items())

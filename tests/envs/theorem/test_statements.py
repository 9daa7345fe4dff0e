"""envs/theorem/statements.py: every generated label re-decided by a second, different procedure.

The generator decides with sympy (expansion, summation, minimum/maximum, isprime) or exhaustive residues; here the
same claims are decided by plain-integer brute force: evaluation at many points, trial division, a grid search.
"""

from fractions import Fraction

import numpy as np
import pytest
import sympy

from envgym.envs.theorem.statements import FAMILIES


def _is_prime(value: int) -> bool:
    return value >= 2 and all(value % d for d in range(2, int(value**0.5) + 1))


def _value(srepr: str, **at: int) -> Fraction:
    expression = sympy.sympify(eval(srepr, vars(sympy)))  # our own srepr, not untrusted text
    result = expression.subs({symbol: at[symbol.name] for symbol in expression.free_symbols})
    return Fraction(str(sympy.nsimplify(result)))


def brute_force(claim: dict) -> bool:
    kind = claim["kind"]
    if kind == "identity":  # polynomials of degree <= 3 that agree on 20 points are equal
        return all(_value(claim["lhs"], x=v) == _value(claim["rhs"], x=v) for v in range(-10, 10))
    if kind == "prime":
        return all(_is_prime(m * m + m + claim["c"]) for m in range(claim["top"] + 1))
    if kind == "sum":  # closed forms are polynomials of degree <= 4: 30 points decide them
        return all(sum(_value(claim["summand"], k=j) for j in range(1, m + 1)) == _value(claim["form"], n=m)
                   for m in range(1, 31))
    if kind == "divides":
        polynomial = sympy.sympify(claim["polynomial"])
        return all(int(polynomial.subs("n", m)) % claim["divisor"] == 0 for m in range(-60, 61))
    if kind == "amgm":  # x + c/x on a fine grid including sqrt(c), and far out where it grows without bound
        values = [Fraction(i, 8) + Fraction(claim["c"]) / Fraction(i, 8) for i in range(1, 8 * 1000)]
        bound = claim["bound"]
        return all(v >= bound for v in values) if claim["relation"] == ">=" else all(v <= bound for v in values)
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

"""Informal statements with truth-labelled variants, each label decided exactly (sympy or an exhaustive check).

A *family* draws a base theorem and perturbs it (a changed constant or coefficient, a flipped inequality, a
widened domain); every variant's label is decided again by the family's procedure, never assumed from how it
was made. ``claim`` records what was decided, so tests can re-decide it another way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

x = sympy.Symbol("x", real=True)
_n_int = sympy.Symbol("n", integer=True, positive=True)
_k_int = sympy.Symbol("k", integer=True, positive=True)


@dataclasses.dataclass(frozen=True)
class Statement:
    """One variant: its text, its decided truth, and the claim that was decided (for independent re-checks)."""

    text: str
    true: bool
    topic: str
    difficulty: int
    claim: dict[str, Any]


def _show(expression: sympy.Expr) -> str:
    return sympy.sstr(expression).replace("**", "^")


def _int(rng: np.random.Generator, low: int, high: int) -> int:
    return int(rng.integers(low, high + 1))


def identity_variants(rng: np.random.Generator) -> list[Statement]:
    """``(x + a)^p (x + b)^q = expanded`` for all real x, and the same with one coefficient changed."""
    a, b, power = _int(rng, -5, 5) or 1, _int(rng, 1, 6), _int(rng, 1, 2)
    lhs = (x + a) ** power * (x - b)
    coefficients = sympy.Poly(sympy.expand(lhs), x).all_coeffs()
    which = _int(rng, 1, len(coefficients) - 1)
    changed = list(coefficients)
    changed[which] += _int(rng, 1, 3) * (1 if rng.random() < 0.5 else -1)
    variants = []
    for coefficients_used in (coefficients, changed):
        rhs = sympy.Poly(coefficients_used, x).as_expr()
        true = sympy.expand(lhs - rhs) == 0
        text = f"For every real number x, {_show(lhs)} = {_show(rhs)}."
        variants.append(Statement(text, bool(true), "polynomial identity", power,
                                  {"kind": "identity", "a": a, "b": b, "power": power,
                                   "rhs_coefficients": [int(c) for c in coefficients_used]}))
    return variants


def prime_variants(rng: np.random.Generator) -> list[Statement]:
    """"For all integers n in [0, N], n^2 + n + c is prime": the longest true range, and a widened one."""
    c = [41, 17, 11, 5][_int(rng, 0, 3)]
    longest = next(m for m in range(200) if not sympy.isprime(m * m + m + c)) - 1
    variants = []
    for top in (longest - _int(rng, 0, 3), longest + _int(rng, 1, 5)):
        true = all(sympy.isprime(m * m + m + c) for m in range(0, top + 1))
        variants.append(Statement(f"For every integer n with 0 <= n <= {top}, n^2 + n + {c} is prime.", true,
                                  "number theory", 3, {"kind": "prime", "c": c, "top": top}))
    return variants


SUMS = [  # (summand in k, closed form in n, words)
    (2 * _k_int - 1, _n_int**2, "the sum of the first n odd numbers 1 + 3 + ... + (2n - 1)"),
    (_k_int, _n_int * (_n_int + 1) / 2, "1 + 2 + ... + n"),
    (_k_int**2, _n_int * (_n_int + 1) * (2 * _n_int + 1) / 6, "1^2 + 2^2 + ... + n^2"),
    (_k_int**3, (_n_int * (_n_int + 1) / 2) ** 2, "1^3 + 2^3 + ... + n^3"),
    (2 * _k_int, _n_int * (_n_int + 1), "2 + 4 + ... + 2n"),
]


def sum_variants(rng: np.random.Generator) -> list[Statement]:
    """A closed form of a finite sum for all n >= 1, and the closed form with a constant changed."""
    summand, closed, words = SUMS[_int(rng, 0, len(SUMS) - 1)]
    shift = _int(rng, 1, 2) * (1 if rng.random() < 0.5 else -1)
    variants = []
    for form in (closed, closed + shift, closed * (_n_int + shift) / _n_int):
        form = sympy.factor(form)
        true = sympy.simplify(sympy.summation(summand, (_k_int, 1, _n_int)) - form) == 0
        variants.append(Statement(f"For every integer n >= 1, {words} equals {_show(form)}.", bool(true),
                                  "summation", 2, {"kind": "sum", "summand": sympy.sstr(summand),
                                                   "form": sympy.sstr(form)}))
    return variants


POLYNOMIALS = ["n**3 - n", "n**2 + n", "n**5 - n", "n**3 + 2*n", "n**2 + 1", "n**4 - n**2", "n**3 + 5*n",
               "n**2 - n + 2", "n**7 - n"]


def divisibility_variants(rng: np.random.Generator) -> list[Statement]:
    """``d divides p(n)`` for every integer n, decided over the residues of n modulo d (exact: p(n) mod d depends
    only on n mod d); the variants change d."""
    text = POLYNOMIALS[_int(rng, 0, len(POLYNOMIALS) - 1)]
    polynomial = sympy.sympify(text, locals={"n": _n_int})
    variants = []
    for divisor in range(2, 9):
        true = all(int(polynomial.subs(_n_int, r)) % divisor == 0 for r in range(divisor))
        words = "is even" if divisor == 2 else f"is divisible by {divisor}"
        variants.append(Statement(f"For every integer n, {text.replace('**', '^')} {words}.", true,
                                  "divisibility" if divisor > 2 else "parity", 1,
                                  {"kind": "divides", "polynomial": text, "divisor": divisor}))
    return variants


def amgm_variants(rng: np.random.Generator) -> list[Statement]:
    """AM-GM instances ``x + c/x >= 2 sqrt(c)`` for x > 0, with the bound raised, lowered or the inequality flipped;
    decided by sympy's minimum/maximum over (0, oo)."""
    c = _int(rng, 1, 6) ** 2
    f = x + c / x
    domain = sympy.Interval.open(0, sympy.oo)
    low, high = sympy.minimum(f, x, domain), sympy.maximum(f, x, domain)
    root = int(sympy.sqrt(c))
    variants = []
    for relation, bound in ((">=", 2 * root), (">=", 2 * root + 1), (">=", 2 * root - 1), ("<=", 2 * root)):
        true = bool(low >= bound) if relation == ">=" else bool(high <= bound)
        variants.append(Statement(f"For every real number x > 0, x + {c}/x {relation} {bound}.", true,
                                  "inequality", 2, {"kind": "amgm", "c": c, "relation": relation, "bound": bound}))
    return variants


FAMILIES: dict[str, Callable[[np.random.Generator], list[Statement]]] = {
    "identity": identity_variants, "prime": prime_variants, "sum": sum_variants,
    "divisibility": divisibility_variants, "amgm": amgm_variants,
}


def statement_pair(rng: np.random.Generator, families: list[str]) -> tuple[Statement, Statement]:
    """One true and one false variant of one base theorem (families are re-drawn until both exist)."""
    while True:
        variants = FAMILIES[families[_int(rng, 0, len(families) - 1)]](rng)
        true = [v for v in variants if v.true]
        false = [v for v in variants if not v.true]
        if true and false:
            return true[_int(rng, 0, len(true) - 1)], false[_int(rng, 0, len(false) - 1)]

"""Informal statements with truth-labelled variants, each label decided exactly (sympy or an exhaustive check).

A *family* draws a base theorem and perturbs it (a changed constant or coefficient, a flipped inequality, a
widened domain); every variant's label is decided again by the family's procedure, never assumed from how it
was made. ``claim`` records what was decided, so tests can re-decide it another way.
"""

from __future__ import annotations

import dataclasses
import functools
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
        variants.append(
            Statement(
                text,
                bool(true),
                "polynomial identity",
                power,
                {
                    "kind": "identity",
                    "a": a,
                    "b": b,
                    "power": power,
                    "rhs_coefficients": [int(c) for c in coefficients_used],
                },
            )
        )
    return variants


def prime_variants(rng: np.random.Generator) -> list[Statement]:
    """ "For all integers n in [0, N], n^2 + n + c is prime": the longest true range, and a widened one."""
    c = [41, 17, 11, 5][_int(rng, 0, 3)]
    longest = next(m for m in range(200) if not sympy.isprime(m * m + m + c)) - 1
    variants = []
    for top in (longest - _int(rng, 0, 3), longest + _int(rng, 1, 5)):
        true = all(sympy.isprime(m * m + m + c) for m in range(0, top + 1))
        variants.append(
            Statement(
                f"For every integer n with 0 <= n <= {top}, n^2 + n + {c} is prime.",
                true,
                "number theory",
                3,
                {"kind": "prime", "c": c, "top": top},
            )
        )
    return variants


SUM_SLOPES, SUM_OFFSETS = (1, 2, 3), (0, 1, 2, 3)


def sum_variants(rng: np.random.Generator) -> list[Statement]:
    """``(a + b) + (2a + b) + ... + (an + b) = n(an + c)/2`` for every n >= 1, true for c = a + 2b, and the same
    statement with the c of another (a', b') (one with a different c), written literally: over uniformly drawn
    pairs of settings every a, b and c is as often in a true statement as in a false one, so only the arithmetic
    tells them apart."""
    settings = [(a, b) for a in SUM_SLOPES for b in SUM_OFFSETS]
    while True:
        (a, b), (a2, b2) = (settings[_int(rng, 0, len(settings) - 1)] for _ in range(2))
        if a + 2 * b != a2 + 2 * b2:
            break
    last = f"{a}n + {b}" if b else f"{a}n"
    words = f"{a + b} + {2 * a + b} + ... + ({last})"
    summand = a * _k_int + b
    variants = []
    for c in (a + 2 * b, a2 + 2 * b2):
        form = f"n*({a}*n + {c})/2"
        true = sympy.simplify(sympy.summation(summand, (_k_int, 1, _n_int)) - sympy.sympify(form, locals={"n": _n_int}))
        variants.append(
            Statement(
                f"For every integer n >= 1, {words} equals {form.replace('*', ' * ')}.",
                true == 0,
                "summation",
                2,
                {"kind": "sum", "summand": sympy.sstr(summand), "form": form},
            )
        )
    return variants


POLYNOMIALS = [
    "n**3 - n",
    "n**2 + n",
    "n**5 - n",
    "n**3 + 2*n",
    "n**4 - n**2",
    "n**3 + 5*n",
    "n**2 - n + 2",
    "n**7 - n",
    "n**4 + 2*n**3 - n**2 - 2*n",
    "n**3 + 3*n**2 + 2*n",
    "n**5 - 5*n**3 + 4*n",
    "2*n**3 + 3*n**2 + n",
    "n**6 - n**2",
    "n**3 + 11*n",
]
DIVISORS = range(2, 9)


@functools.lru_cache(maxsize=1)
def _divides_table() -> dict[tuple[str, int], bool]:
    """Whether ``d`` divides ``p(n)`` for every integer n, decided over the residues of n modulo d (exact: p(n)
    mod d depends only on n mod d)."""
    table = {}
    for text in POLYNOMIALS:
        polynomial = sympy.sympify(text, locals={"n": _n_int})
        for divisor in DIVISORS:
            table[text, divisor] = all(int(polynomial.subs(_n_int, r)) % divisor == 0 for r in range(divisor))
    return table


@functools.lru_cache(maxsize=1)
def _rectangles() -> list[tuple[str, int, int]]:
    """``(p, d_true, d_false)`` for every pair of polynomials p, q and divisors d, e with d | p, e ∤ p, e | q and
    d ∤ q: drawing these uniformly makes every divisor as often true as false, and every polynomial appears with
    one true and one false divisor, so neither the number nor the polynomial tells the label."""
    table = _divides_table()
    return [
        (p, d, e)
        for p in POLYNOMIALS
        for q in POLYNOMIALS
        for d in DIVISORS
        for e in DIVISORS
        if p != q and d != e and table[p, d] and not table[p, e] and table[q, e] and not table[q, d]
    ]


def divisibility_variants(rng: np.random.Generator) -> list[Statement]:
    """``d divides p(n)`` for every integer n, one true and one false divisor of one polynomial, drawn so that
    neither the divisor nor the polynomial predicts the label (:func:`_rectangles`)."""
    rectangles = _rectangles()
    text, true_divisor, false_divisor = rectangles[_int(rng, 0, len(rectangles) - 1)]
    variants = []
    for divisor in (true_divisor, false_divisor):
        words = "is even" if divisor == 2 else f"is divisible by {divisor}"
        variants.append(
            Statement(
                f"For every integer n, {text.replace('**', '^')} {words}.",
                _divides_table()[text, divisor],
                "divisibility" if divisor > 2 else "parity",
                1,
                {"kind": "divides", "polynomial": text, "divisor": divisor},
            )
        )
    return variants


def amgm_variants(rng: np.random.Generator) -> list[Statement]:
    """AM-GM instances ``x + c/x >= B`` for x > 0, true for B = 2 sqrt(c) and 2 sqrt(c) - 1, false for one and two
    above, each written either way round (``B <= x + c/x``): the relation and the bound's parity say nothing about
    the label. Decided by sympy's minimum over (0, oo)."""
    c = _int(rng, 1, 6) ** 2
    f = x + c / x
    low = sympy.minimum(f, x, sympy.Interval.open(0, sympy.oo))
    root = int(sympy.sqrt(c))
    variants = []
    for bound in (2 * root - 1, 2 * root, 2 * root + 1, 2 * root + 2):
        for text in (f"x + {c}/x >= {bound}", f"{bound} <= x + {c}/x"):
            variants.append(
                Statement(
                    f"For every real number x > 0, {text}.",
                    bool(low >= bound),
                    "inequality",
                    2,
                    {"kind": "amgm", "c": c, "relation": ">=", "bound": bound},
                )
            )
    return variants


FAMILIES: dict[str, Callable[[np.random.Generator], list[Statement]]] = {
    "identity": identity_variants,
    "prime": prime_variants,
    "sum": sum_variants,
    "divisibility": divisibility_variants,
    "amgm": amgm_variants,
}


def statement_pair(rng: np.random.Generator, families: list[str]) -> tuple[Statement, Statement]:
    """One true and one false variant of one base theorem (families are re-drawn until both exist)."""
    while True:
        variants = FAMILIES[families[_int(rng, 0, len(families) - 1)]](rng)
        true = [v for v in variants if v.true]
        false = [v for v in variants if not v.true]
        if true and false:
            return true[_int(rng, 0, len(true) - 1)], false[_int(rng, 0, len(false) - 1)]

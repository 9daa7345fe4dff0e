"""The sympy side of the math verifier: parse one normalized expression, relation or set, and decide equality.

Imported only inside the symbolic worker processes (:mod:`envgym.verifiers._symbolic_worker`), where a
comparison that runs too long is killed from outside. :func:`leaf_equal` is the leaf of
:class:`envgym.verifiers.math_structure.Comparison`: structure (lists, tuples, sets, ``±``, assignments) is
already split off, so it sees one expression or relation per side, or an inequality against an interval.

How equality is decided, and why it cannot be gamed:
- the whole answer must parse (simple LaTeX through sympy's own parser, the rest through latex2sympy); an
  answer that does not parse, or parses to an undefined value (``zoo``, ``nan``), equals nothing;
- expressions with variables are compared at random rational points drawn per comparison from the operating
  system's entropy (never fixed, public points): any point where they differ proves them unequal, agreement at
  every point means equal; where evaluation cannot decide (``f(x)``, sums with symbolic bounds), ``a - b``
  must expand to 0;
- closed forms without variables are evaluated to 60 significant digits: equal when they agree to 40;
- a decimal literal against a closed form (``1.41421356`` vs ``\\sqrt2``) follows the decimal rule of
  :mod:`envgym.verifiers.math_normalize`; decimals inside expressions are read as the exact rationals they write;
- relations: ``a op b`` and ``c op' d`` are equal when (after flipping ``<`` to ``>``) the operators match and
  ``a - b = k (c - d)`` for a constant ``k`` (``k > 0`` for inequalities); inequalities in one variable are also
  equal when they describe the same set of reals.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

import sympy
from sympy.core.function import AppliedUndef

from envgym.verifiers.math_normalize import parse_number, values_equal
from envgym.verifiers.math_parts import is_relation, split_top, union_parts, wrapped

_RANDOM = random.SystemRandom()
_POINTS = 3
_MAX_DRAWS = 12
_DIGITS = 60
_EQUAL_BELOW = sympy.Float("1e-40")
_UNEQUAL_ABOVE = sympy.Float("1e-20")

_PLAIN = re.compile(r"^[0-9A-Za-z+\-*/^().=\s]+$")
_FUNCTIONS = ("sqrt", "pi", "sin", "cos", "tan", "log", "ln", "exp")
_WORD = re.compile(r"[A-Za-z]+")
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LATEX_REWRITES = (
    (re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}"), r"((\1)/(\2))"),
    (re.compile(r"\\sqrt\[([^\[\]{}]*)\]\{([^{}]*)\}"), r"((\2)^(1/(\1)))"),
    (re.compile(r"\\sqrt\{([^{}]*)\}"), r" sqrt(\1)"),
    (re.compile(r"\^\{([^{}]*)\}"), r"^(\1)"),
)
_LATEX_NAMES = re.compile(r"\\(pi|sin|cos|tan|ln|exp|cdot|times)(?![A-Za-z])")
_DECIMAL = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])")
_UNEVALUATED = (sympy.Sum, sympy.Product, sympy.Integral, sympy.Limit, sympy.Derivative)
_INFINITIES = {"\\infty": sympy.oo, "+\\infty": sympy.oo, "-\\infty": -sympy.oo}


class Unparseable(ValueError):
    """The answer does not parse into a defined value (it then equals nothing)."""


# --- parsing ----------------------------------------------------------------------------------------


def _as_plain(text: str) -> str | None:
    """Simple LaTeX (fractions, roots, powers, pi, cdot) rewritten as sympy input, or None when the text
    holds anything else (then latex2sympy reads it). sympy's parser is ~10x faster."""
    previous = None
    while previous != text:
        previous = text
        for pattern, replacement in _LATEX_REWRITES:
            text = pattern.sub(replacement, text)
    text = _LATEX_NAMES.sub(lambda m: "*" if m.group(1) in ("cdot", "times") else f" {m.group(1)} ", text)
    if not _PLAIN.match(text) or text.count("=") > 1:
        return None
    found = _WORD.findall(text)
    if any(w in _FUNCTIONS for w in found) and any(w not in _FUNCTIONS and len(w) > 1 for w in found):
        return None  # "xsqrt" and the like: too easy to misread
    return text


def _parse_plain(text: str) -> sympy.Basic:
    """sympy's parser with implicit multiplication. Every name is one letter from a fixed table (``e`` is
    Euler's number, ``i`` the imaginary unit) or a known function, so the ``eval`` inside parse_expr reaches
    nothing else."""
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication,
        parse_expr,
        rationalize,
        standard_transformations,
    )

    names = {c: sympy.Symbol(c) for c in _LETTERS}
    names.update(
        e=sympy.E,
        i=sympy.I,
        sqrt=sympy.sqrt,
        pi=sympy.pi,
        sin=sympy.sin,
        cos=sympy.cos,
        tan=sympy.tan,
        log=sympy.log,
        ln=sympy.log,
        exp=sympy.exp,
    )
    # rationalize: 10.5 is read as 21/2 before anything is evaluated (sqrt(10.5) would become a float at once).
    transformations = standard_transformations + (implicit_multiplication, convert_xor, rationalize)
    # xy -> x*y: multi-letter names other than the known functions never reach eval.
    text = _WORD.sub(lambda m: m.group() if m.group() in _FUNCTIONS else "*".join(m.group()), text)
    sides = [parse_expr(side, local_dict=names, transformations=transformations) for side in text.split("=")]
    return sympy.Eq(*sides, evaluate=False) if len(sides) == 2 else sides[0]


def _decimal_as_fraction(match: re.Match[str]) -> str:
    """``10.5`` as ``{\\frac{105}{10}}``."""
    whole, fraction = match.groups()
    return f"{{\\frac{{{whole}{fraction}}}{{1{'0' * len(fraction)}}}}}"


def parse(text: str) -> sympy.Basic:
    """One answer as a sympy object; raises :class:`Unparseable` if it does not parse to a defined value."""
    parsed = None
    plain = _as_plain(text)
    if plain is not None:
        try:
            parsed = _parse_plain(plain)
        except Exception:  # sympy's parser rejects it: latex2sympy gets its turn
            parsed = None
    if parsed is None:
        from latex2sympy2_extended import latex2sympy

        try:  # decimals as exact fractions before latex2sympy evaluates anything with them
            parsed = latex2sympy(_DECIMAL.sub(_decimal_as_fraction, text))
        except Exception as error:
            raise Unparseable(f"cannot parse {text!r}: {error}") from None
    if isinstance(parsed, sympy.logic.boolalg.BooleanAtom) or not isinstance(parsed, (sympy.Basic, sympy.MatrixBase)):
        raise Unparseable(f"{text!r} is not a value")
    if isinstance(parsed, sympy.Basic) and parsed.has(sympy.zoo, sympy.nan):
        raise Unparseable(f"{text!r} is undefined")
    return _exact_decimals(parsed)


def _exact_decimals(expression):
    """Decimals inside an expression as the exact rationals they write (``0.5x`` is ``x/2``)."""
    if isinstance(expression, sympy.Basic) and expression.atoms(sympy.Float):
        return expression.xreplace({f: sympy.Rational(str(f)) for f in expression.atoms(sympy.Float)})
    return expression


def _parse_set(text: str) -> sympy.Set:
    """An interval, ``\\{...\\}`` set or union of them, built from their parts (``(a, b)`` is read as an
    interval here: the other side is an inequality)."""
    parts = []
    for part in union_parts(text):
        shape = wrapped(part)
        if shape is None:
            parsed = parse(part)
            if not isinstance(parsed, sympy.Set):
                raise Unparseable(f"{part!r} is not a set")
            parts.append(parsed)
            continue
        opening, inner, closing = shape
        items = split_top(inner, re.compile(r"\s*,\s*"))
        if opening == "{":
            parts.append(sympy.FiniteSet(*(parse(item) for item in items if item)))
        elif len(items) == 2:
            start, end = (_INFINITIES.get(item.replace(" ", "")) or parse(item) for item in items)
            parts.append(sympy.Interval(start, end, left_open=opening == "(", right_open=closing == ")"))
        else:
            raise Unparseable(f"{part!r} is not an interval")
    return sympy.Union(*parts)


# --- equality ---------------------------------------------------------------------------------------


def leaf_equal(pred: str, gold: str) -> bool:
    """Whether two normalized, structure-free answers are equal (see the module docstring)."""
    try:
        if is_relation(gold) and not is_relation(pred):
            return _sets_equal(_relation_set(parse(gold)), _parse_set(pred))
        decimal = _decimal_against_closed_form(pred, gold)
        if decimal is not None:
            return decimal
        pred_parsed, gold_parsed = parse(pred), parse(gold)
        if _equal(pred_parsed, gold_parsed):
            return True
        pred_complex, gold_complex = _imaginary_unit(pred_parsed), _imaginary_unit(gold_parsed)
        if pred_complex != pred_parsed or gold_complex != gold_parsed:
            return _equal(pred_complex, gold_complex)
        return False
    except (Unparseable, TypeError, ValueError, ArithmeticError, AttributeError, NotImplementedError):
        return False


def _decimal_against_closed_form(pred: str, gold: str) -> bool | None:
    """A decimal literal against an expression without variables: the decimal rule on its 60-digit value."""
    for literal, other in ((pred, gold), (gold, pred)):
        number = parse_number(literal)
        if number is None or number.significant_digits is None or parse_number(other) is not None:
            continue
        value = parse(other)
        if not isinstance(value, sympy.Expr) or value.free_symbols:
            return None
        numeric = sympy.N(value, _DIGITS)
        if not numeric.is_real:
            return False
        closed = Fraction(str(numeric))
        if abs(closed - number.value) <= abs(closed) * Fraction(1, 10**40):
            return True
        return values_equal(number.value, number, closed, None)
    return None


def _imaginary_unit(expression):
    """latex2sympy reads ``i`` as a variable; read a free ``i`` as the imaginary unit (``(1+i)^2`` = ``2i``)."""
    if isinstance(expression, sympy.Basic):
        for symbol in expression.free_symbols:
            if symbol.name == "i":
                return expression.subs(symbol, sympy.I)
    return expression


def _equal(pred, gold) -> bool:
    if _relations(pred) is not None or _relations(gold) is not None:
        return _relations_equal(pred, gold)
    if isinstance(pred, (sympy.MatrixBase, sympy.MatrixExpr)) or isinstance(gold, (sympy.MatrixBase, sympy.MatrixExpr)):
        return _matrices_equal(pred, gold)
    if isinstance(pred, sympy.Set) or isinstance(gold, sympy.Set):
        return isinstance(pred, sympy.Set) and isinstance(gold, sympy.Set) and _sets_equal(pred, gold)
    if isinstance(pred, sympy.Tuple) or isinstance(gold, sympy.Tuple):
        return (
            isinstance(pred, sympy.Tuple)
            and isinstance(gold, sympy.Tuple)
            and len(pred) == len(gold)
            and all(_equal(p, g) for p, g in zip(pred, gold))
        )
    if not (isinstance(pred, sympy.Expr) and isinstance(gold, sympy.Expr)):
        return pred == gold
    return expressions_equal(pred, gold)


def expressions_equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Equal as functions of their variables (random points) or as numbers; where evaluation cannot tell
    (undefined functions such as ``f(x)``, sums with symbolic bounds), equal only if ``a - b`` expands to 0."""
    if a == b:
        return True
    difference = a - b
    if not difference.has(AppliedUndef, *_UNEVALUATED):
        verdict = _at_random_points(difference, b)
        if verdict is not None:
            return verdict
    try:
        return sympy.expand(difference) == 0
    except Exception:  # sympy cannot expand it: not shown equal
        return False


def _at_random_points(difference: sympy.Expr, reference: sympy.Expr) -> bool | None:
    """True if ``difference`` is ~0 at ``_POINTS`` random points, False if it is clearly not at one of them,
    None if evaluation cannot tell (undefined functions, sums with symbolic bounds, only undefined points)."""
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    agreeing = 0
    for _ in range(_MAX_DRAWS if symbols else 1):
        point = {s: _random_rational() for s in symbols}
        verdict = _zero_at(difference, reference, point)
        if verdict is False:
            return False
        if verdict is True:
            agreeing += 1
            if agreeing >= (_POINTS if symbols else 1):
                return True
    return None


def _random_rational() -> sympy.Rational:
    """A random rational in about [-10, 10], drawn from the system's entropy (unpredictable by the policy)."""
    denominator = _RANDOM.randint(2, 997)
    return sympy.Rational(_RANDOM.randint(-10 * denominator, 10 * denominator), denominator)


def _zero_at(difference: sympy.Expr, reference: sympy.Expr, point: dict) -> bool | None:
    value = difference.xreplace(point) if point else difference
    if value.is_Rational:
        return value == 0
    scale_value = reference.xreplace(point) if point else reference
    try:
        numeric = sympy.N(value, _DIGITS)
        scale = sympy.N(sympy.Abs(scale_value), 15)
    except Exception:  # not numerically evaluable here
        return None
    if not numeric.is_number or numeric.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) or not scale.is_number:
        return None
    if scale.has(sympy.nan, sympy.zoo, sympy.oo):
        return None
    size = sympy.Abs(numeric)
    bound = max(sympy.Float(1), scale)
    if size <= _EQUAL_BELOW * bound:
        return True
    if size > _UNEQUAL_ABOVE * bound:
        return False
    return None


def _matrices_equal(pred, gold) -> bool:
    pred, gold = (m.doit() if hasattr(m, "doit") else m for m in (pred, gold))
    if not (isinstance(pred, sympy.MatrixBase) and isinstance(gold, sympy.MatrixBase)) or pred.shape != gold.shape:
        return False
    return all(expressions_equal(_exact_decimals(p), _exact_decimals(g)) for p, g in zip(pred, gold))


def _sets_equal(pred: sympy.Set, gold: sympy.Set) -> bool:
    if pred == gold:
        return True
    if isinstance(pred, sympy.FiniteSet) and isinstance(gold, sympy.FiniteSet):
        if len(pred) != len(gold):
            return False
        unused = list(gold.args)
        for item in pred.args:
            match = next((g for g in unused if _equal(item, g)), None)
            if match is None:
                return False
            unused.remove(match)
        return True
    try:
        return bool(pred.symmetric_difference(gold).is_empty)
    except Exception:  # sympy cannot decide it: not shown equal
        return False


# --- relations --------------------------------------------------------------------------------------

_CANONICAL = {
    sympy.StrictGreaterThan: (">", 1),
    sympy.GreaterThan: (">=", 1),
    sympy.StrictLessThan: (">", -1),
    sympy.LessThan: (">=", -1),
    sympy.Equality: ("=", 1),
    sympy.Unequality: ("!=", 1),
}


def _relations(expression) -> list[sympy.Rel] | None:
    """The relations of a relation or of an ``And`` of relations (a chain), in written order; else None."""
    if isinstance(expression, sympy.Rel):
        return [expression]
    if isinstance(expression, sympy.And):
        parts = list(getattr(expression, "_unsorted_args", expression.args))
        if parts and all(isinstance(p, sympy.Rel) for p in parts):
            return parts
    return None


def _relations_equal(pred, gold) -> bool:
    pred_parts, gold_parts = _relations(pred), _relations(gold)
    if pred_parts is None or gold_parts is None:
        return False
    if len(pred_parts) == len(gold_parts) and all(_relation_equal(p, g) for p, g in zip(pred_parts, gold_parts)):
        return True
    symbols = pred.free_symbols | gold.free_symbols
    if len(symbols) == 1 and not any(isinstance(p, sympy.Equality) for p in pred_parts + gold_parts):
        try:
            return _sets_equal(_relation_set(pred), _relation_set(gold))
        except (Unparseable, TypeError, ValueError, NotImplementedError):
            return False
    return False


def _relation_equal(pred: sympy.Rel, gold: sympy.Rel) -> bool:
    """``a op b`` vs ``c op d``: same operator after flipping, and ``a - b = k (c - d)`` for a constant k."""
    pred_op, pred_sign = _CANONICAL[type(pred)]
    gold_op, gold_sign = _CANONICAL[type(gold)]
    if pred_op != gold_op:
        return False
    pred_side = _exact_decimals(pred_sign * (pred.lhs - pred.rhs))
    gold_side = _exact_decimals(gold_sign * (gold.lhs - gold.rhs))
    if pred_side == gold_side:
        return True
    ratio = _constant_ratio(pred_side, gold_side)
    if ratio is None or ratio == 0:
        return False
    return ratio > 0 or pred_op in ("=", "!=")


def _constant_ratio(a: sympy.Expr, b: sympy.Expr):
    """k with ``a = k b`` if there is such a constant (checked at random points), else None."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    for _ in range(_MAX_DRAWS):
        point = {s: _random_rational() for s in symbols}
        try:
            at_a, at_b = sympy.nsimplify(a.xreplace(point)), sympy.nsimplify(b.xreplace(point))
        except Exception:  # not evaluable at this point
            continue
        if at_b.is_number and at_b != 0 and at_a.is_number:
            ratio = sympy.nsimplify(at_a / at_b)
            return ratio if expressions_equal(a, ratio * b) else None
    return None


def _relation_set(relation) -> sympy.Set:
    """The set of reals a one-variable relation (or chain) describes; ``f(x)`` counts as the variable."""
    relation = relation.replace(lambda e: isinstance(e, AppliedUndef), lambda e: sympy.Symbol(str(e.func)))
    symbols = relation.free_symbols
    if len(symbols) != 1:
        raise Unparseable("only one-variable relations describe a set of reals")
    (symbol,) = symbols
    real = sympy.Symbol(symbol.name, real=True)
    return _exact_decimals(relation.xreplace({symbol: real})).as_set()

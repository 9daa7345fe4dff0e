"""The structure of an answer (lists, sets, tuples, intervals, unions, matrices, ``±``, equations, relations)
and how two normalized answers compare, part by part.

One algorithm runs twice: in the calling process with no leaf comparison (:func:`fast_compare`: exact numbers,
letters and words only, ``None`` when some part needs sympy), and inside the symbolic workers with a sympy leaf
that always decides. So ``\\{1\\pm\\sqrt5, -2\\}``, tuples of expressions and lists of assignments are split here,
the same way in both places, and sympy only ever sees one expression or one relation at a time.

Conventions decided here (each is a labelled pair or a Math-Verify case):
- ``\\{...\\}`` is an unordered set; a bare list (``1, 2``, ``1; 2``, ``1 and 2``) is unordered unless
  ``Conventions.lists`` is ``"ordered"``, and read in the gold's order against a labelled gold (``x = 3, y = 4``);
  repeats count once unless the gold repeats an item (multiplicity follows the gold); ``(a, b)`` and ``[a, b)``
  are ordered and their brackets must match; a set never equals an ordered tuple; a list compared with a tuple
  is read in order, and never equals an interval (``[a, b]``, ``(a, b]``);
- ``a \\pm b`` is the set ``{a+b, a-b}``;
- a single-name assignment (``x = 3``, ``(p, q) = (3, 2)``, ``f(x) = 1``) equals its right side, but two
  assignments must name the same variable (``y = 3`` != ``x = 3``); an equation that is not an assignment
  (``7 = 11a + c``) never equals a bare value; a chain (``x = 5 + 5 + 1 = 11``, ``\\sqrt{4} = 2``) means its
  last value only if every side equals it (``0 = 16`` equals nothing), and ``16 \\approx 0`` holds for nothing;
- ``x \\in S`` means ``S``; an inequality in the gold answer may be answered with the interval it describes,
  not the other way round (Math-Verify's default);
- a unit after a value (:mod:`envgym.verifiers.math_units`, a whitelist) is ignored unless both sides carry
  different units (``5 m`` vs ``5 cm``); other trailing words stay part of the answer;
- numbers compare under :class:`envgym.verifiers.math_conventions.Conventions` (percent, tolerance);
- a bare ``1,22`` is the decimal 1.22 when compared with a decimal written with a point (``1.22``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Callable, Optional

from envgym.verifiers.math_conventions import DEFAULT, Conventions, numbers_equal
from envgym.verifiers.math_normalize import decimal_comma, parse_number
from envgym.verifiers.math_units import unit_split

Verdict = Optional[bool]
Leaf = Callable[[str, str], bool]

_LIST_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and|or)\b|,|;|\b(?:and|or)\b)\s*", re.IGNORECASE)
_COMMA = re.compile(r"\s*,\s*")
_SEMICOLON = re.compile(r"\s*;\s*")
_EQUALS = re.compile(r"(?<![<>!\\])=")
_APPROX = re.compile(r"\\approx(?![A-Za-z])")
_PLUS_MINUS = re.compile(r"\\pm(?![A-Za-z])")
_CUP = re.compile(r"\\cup(?![A-Za-z])")
_RELATION = re.compile(r"<|>|\\leq(?![A-Za-z])|\\geq(?![A-Za-z])|\\neq(?![A-Za-z])")
_MEMBERSHIP = re.compile(r"^(?P<name>[^=<>]+?)\s*\\in(?![A-Za-z])\s*(?P<set>.+)$")
_RATIO = re.compile(r":")
_MATRIX = re.compile(r"^\\begin\{pmatrix\}(?P<body>(?:(?!\\begin|\\end).)*)\\end\{pmatrix\}$", re.DOTALL)
_LETTER = re.compile(r"^\(?([A-Za-z])\)?\.?$")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z '\-]*$")
_GREEK = re.compile(r"\\(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|kappa|lambda|mu|nu|xi|rho"
                    r"|sigma|tau|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Sigma|Phi|Psi|Omega)(?![A-Za-z])")
_MATH_WORDS = {"sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "sqrt", "pi", "det", "max", "min",
               "mod", "gcd", "lcm", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "infty", "inf", "oo"}
_ARTICLES = {"a", "an", "the"}


# --- splitting --------------------------------------------------------------------------------------


def split_top(text: str, separator: re.Pattern[str]) -> list[str]:
    """Split on matches of ``separator`` outside any brackets (``\\{`` and ``\\}`` count as brackets)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        char = text[i]
        if char == "\\" and text[i + 1 : i + 2] in ("{", "}"):
            depth += 1 if text[i + 1] == "{" else -1
            i += 2
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and (match := separator.match(text, i)) and match.end() > i:
            parts.append(text[start:i])
            start = i = match.end()
            continue
        i += 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


def wrapped(text: str) -> tuple[str, str, str] | None:
    """``(open, inner, close)`` if one bracket pair wraps the whole text (``[1,2)`` counts), else None."""
    if text.startswith("\\{") and text.endswith("\\}"):
        opening, closing, inner = "{", "}", text[2:-2]
    elif len(text) >= 2 and text[0] in "([" and text[-1] in ")]":
        opening, closing, inner = text[0], text[-1], text[1:-1]
    else:
        return None
    depth = 0
    for i, char in enumerate(inner):
        if char == "\\" and inner[i + 1 : i + 2] in ("{", "}"):
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}" and not (i > 0 and inner[i - 1] == "\\"):
            depth -= 1
            if depth < 0:
                return None
    return (opening, inner, closing) if depth == 0 else None


def sequence(text: str) -> tuple[str, list[str]] | None:
    """``(kind, items)`` for sets (``set``), bare lists (``list``) and tuples/intervals (``"(]"`` etc.)."""
    shape = wrapped(text)
    if shape is not None:
        opening, inner, closing = shape
        separator = _COMMA if "," in inner else _SEMICOLON
        items = split_top(inner, separator)
        if opening == "{":
            return "set", [] if items == [""] else _distinct(_expand_plus_minus(items))  # a set has no repeats
        return (opening + closing, items) if len(items) >= 2 else None
    separator = _LIST_SEPARATOR if words(text) is None else _SEMICOLON
    items = split_top(text, separator)
    if len(items) < 2 or not all(items):
        return None
    if len(split_top(text, _SEMICOLON)) > 1:  # p=5, q=2; p=7, q=2 is two pairs
        items = [_assignments_as_tuple(group) for group in split_top(text, _SEMICOLON)]
    return "list", _expand_plus_minus(items)  # repeats kept: multiplicity follows the gold


def _expand_plus_minus(items: list[str]) -> list[str]:
    """In a set or list, ``1 \\pm \\sqrt5`` is two items."""
    return [expanded for item in items for expanded in (plus_minus(item) or [item])]


def _distinct(items: list[str]) -> list[str]:
    """Items without repeats (``(3,17)`` written twice is one solution), in written order."""
    return list({_squash(item): item for item in reversed(items)}.values())[::-1]


def _assignments_as_tuple(group: str) -> str:
    parts = split_top(group, _COMMA)
    assignments = [equation(part) for part in parts]
    if len(parts) > 1 and all(a is not None and a[0] == "assign" for a in assignments):
        return "(" + ", ".join(a[2] for a in assignments) + ")"
    return group


def union_parts(text: str) -> list[str]:
    """The parts of ``A \\cup B \\cup ...`` (one part if there is no top-level union)."""
    return split_top(text, _CUP)


def matrix(text: str) -> list[list[str]] | None:
    match = _MATRIX.match(text)
    if match is None:
        return None
    rows = [row for row in re.split(r"\\\\", match.group("body")) if row.strip()]
    return [[cell.strip() for cell in row.split("&")] for row in rows]


def plus_minus(text: str) -> list[str] | None:
    """An answer with one ``\\pm`` as its two values (``a \\pm b`` is ``a + b`` and ``a - b``; the sign applies to
    the term after it, wherever it stands, e.g. ``\\frac{1 \\pm \\sqrt5}{2}``); None without exactly one."""
    if len(_PLUS_MINUS.findall(text)) != 1:
        return None
    return [_PLUS_MINUS.sub(lambda _: sign, text) for sign in ("+", "-")]


# --- equations and relations ------------------------------------------------------------------------


def is_name(text: str) -> bool:
    """Whether ``text`` names something rather than computes it: ``x``, ``a_{37}``, ``f(x)``, ``(p, q)``,
    ``|AB|``, ``A:B``, ``\\frac{NO}{BO}``, ``\\theta`` (no digits or operators outside subscripts/arguments)."""
    rest = re.sub(r"_\{[^{}]*\}|_\\?\w+", "", text)
    rest = re.sub(r"(?<=[A-Za-z}])\([^()]*\)", "", rest)
    rest = rest.replace("\\frac", "")
    rest = _GREEK.sub("a", rest)
    rest = re.sub(r"[\s{}()|:,']", "", rest)
    return bool(rest) and re.fullmatch(r"[A-Za-z]+", rest) is not None


def equation(text: str) -> tuple[str, str, str] | tuple[str, str] | None:
    """How an answer with ``=`` (or ``\\approx``) reads: ``("assign", name, value)``, ``("value", value)``
    for chains and computations whose left side is not a name, ``("equation", text)`` otherwise; None
    without a top-level ``=``."""
    if len(split_top(text, _COMMA)) > 1 or len(split_top(text, _SEMICOLON)) > 1:
        return None  # x = 3, y = 4 is a list of equations
    approx = split_top(text, _APPROX)
    if len(approx) > 1:  # x \approx 11 means 11; 1/3 \approx 0.33 means the exact 1/3
        if not _roughly_equal(approx[0], approx[-1]):
            return "equation", text  # 16 \approx 0 holds for nothing
        text = f"{approx[0]} = {approx[-1]}" if is_name(approx[0]) else approx[0]
    parts = split_top(text, _EQUALS)
    if len(parts) < 2 or not all(parts):
        return None
    if is_name(parts[0]):
        return "assign", parts[0], parts[-1]
    if len(parts) > 2 or not any(_has_variable(part) for part in parts):
        return "value", parts[-1]
    return "equation", text


def chain_sides(text: str) -> list[str]:
    """The sides of an answer's chain of equalities that must all be equal for it to hold, value last:
    ``0 = 16`` -> ``["0", "16"]``, ``x = 5 + 5 + 1 = 11`` -> ``["5 + 5 + 1", "11"]``, ``x = 3`` -> ``["3"]``."""
    parts = split_top(text, _EQUALS)
    return parts[1:] if is_name(parts[0]) else parts


def _roughly_equal(left: str, right: str) -> bool:
    """Whether ``left \approx right`` can hold: two plain numbers must agree to about the precision written
    (one unit of the last digit, or 1%); anything else is left to the comparison."""
    a, b = parse_number(left), parse_number(right)
    if a is None or b is None or isinstance(a.value, float) or isinstance(b.value, float) or a.percent or b.percent:
        return True
    unit = max(Fraction(1, 10 ** (n.fractional_digits or 0)) for n in (a, b))
    return abs(a.value - b.value) <= max(unit, abs(b.value) / 100)


def _assigns_a_sequence(text: str) -> bool:
    found = equation(text)
    return found is not None and found[0] != "equation" and sequence(found[-1]) is not None


def _has_variable(text: str) -> bool:
    return re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text)) is not None


def is_relation(text: str) -> bool:
    return len(split_top(text, _RELATION)) > 1


def membership(text: str) -> str:
    """``x \\in S`` as ``S``."""
    match = _MEMBERSHIP.match(text)
    return match.group("set") if match and is_name(match.group("name")) else text


# --- scalars ----------------------------------------------------------------------------------------


def words(text: str) -> str | None:
    """Lower-cased plain words without articles and punctuation, or None if the text is not plain words
    (single letters are variables: ``a-b`` is algebra, not text)."""
    if not _WORDS.match(text):
        return None
    tokens = text.lower().split()
    parts = [part for token in tokens if token not in _ARTICLES for part in re.split(r"[\-']", token)]
    if not parts or any(len(part) < 2 or part in _MATH_WORDS for part in parts):
        return None
    return " ".join(token for token in tokens if token not in _ARTICLES)


def _squash(text: str) -> str:
    return text.replace(" ", "")


# --- comparison -------------------------------------------------------------------------------------


class Comparison:
    """Compares two normalized answers part by part; ``leaf`` decides parts that are neither numbers, letters
    nor words (None: such a part makes the verdict None)."""

    def __init__(self, leaf: Leaf | None = None, conventions: Conventions = DEFAULT):
        self.leaf, self.conventions = leaf, conventions

    def compare(self, pred: str, gold: str) -> Verdict:
        if not pred or not gold:
            return False
        if _squash(pred) == _squash(gold):
            return True
        pred, gold = membership(pred), membership(gold)

        pred_value, pred_unit = unit_split(pred)
        gold_value, gold_unit = unit_split(gold)
        if pred_unit and gold_unit and pred_unit != gold_unit:
            return False
        if (pred_unit or gold_unit) and (pred_value, gold_value) != (pred, gold):
            return self.compare(pred_value, gold_value)

        pred_number, gold_number = parse_number(pred), parse_number(gold)
        if pred_number is not None and gold_number is not None:
            return numbers_equal(pred_number, gold_number, self.conventions)
        if pred_number is not None and "." in pred and (comma := decimal_comma(gold)) is not None:
            return numbers_equal(pred_number, comma, self.conventions)
        if gold_number is not None and "." in gold and (comma := decimal_comma(pred)) is not None:
            return numbers_equal(comma, gold_number, self.conventions)

        pred_letter, gold_letter = _LETTER.match(pred), _LETTER.match(gold)
        if pred_letter and gold_letter:
            return pred_letter.group(1).upper() == gold_letter.group(1).upper()

        structured = self._structures(pred, gold, pred_number is not None or gold_number is not None)
        if structured != "scalar":
            return structured
        return self._scalars(pred, gold)

    def _structures(self, pred: str, gold: str, has_number: bool) -> Verdict | str:
        """The verdict on two answers of which at least one has structure, or ``"scalar"`` if neither has."""
        pred_sequence, gold_sequence = sequence(pred), sequence(gold)
        pred_pm = plus_minus(pred) if pred_sequence is None else None
        gold_pm = plus_minus(gold) if gold_sequence is None else None
        if pred_pm or gold_pm:
            return self._unordered(*_by_multiplicity(pred_pm or self._items(pred), gold_pm or self._items(gold)))

        pred_matrix, gold_matrix = matrix(pred), matrix(gold)
        if pred_matrix is not None and gold_matrix is not None:
            if [len(r) for r in pred_matrix] != [len(r) for r in gold_matrix]:
                return False
            return self._ordered([c for r in pred_matrix for c in r], [c for r in gold_matrix for c in r])

        pred_union, gold_union = union_parts(pred), union_parts(gold)
        pred_is_set = len(pred_union) > 1 or (pred_sequence is not None and pred_sequence[0] != "list")
        gold_is_set = len(gold_union) > 1 or (gold_sequence is not None and gold_sequence[0] != "list")
        if is_relation(gold) and pred_is_set:
            return self._leaf(pred, gold)  # an inequality answered with its interval: sympy compares the sets
        if is_relation(pred) and gold_is_set:
            return False

        if len(pred_union) > 1 or len(gold_union) > 1:
            if all(wrapped(p) for p in pred_union + gold_union):
                return self._unordered(pred_union, gold_union)
            return self._leaf(pred, gold)

        if pred_sequence is not None and gold_sequence is not None:
            (pred_kind, pred_items), (gold_kind, gold_items) = pred_sequence, gold_sequence
            if (pred_kind == "list" and _is_interval(gold_kind, gold_items)) or (
                    gold_kind == "list" and _is_interval(pred_kind, pred_items)):
                return False  # 2, 3 is two numbers, [2, 3] the reals between them
            if gold_kind == "list" and _labelled(gold_items) and not _labelled(pred_items):
                # x = 3, y = 4 answered without labels: in the gold's order (a set has none)
                return False if pred_kind == "set" else self._ordered(pred_items, gold_items)
            unordered = {"set", "list"}
            if pred_kind in unordered and gold_kind in unordered:
                if gold_kind == "list" and pred_kind == "list" and self.conventions.lists == "ordered":
                    return self._ordered(pred_items, gold_items)
                return self._unordered(*_by_multiplicity(pred_items, gold_items))
            if "set" in (pred_kind, gold_kind):
                return False
            if "list" not in (pred_kind, gold_kind) and pred_kind != gold_kind:
                return False
            return self._ordered(pred_items, gold_items)
        if (pred_sequence is None) != (gold_sequence is None):
            # A number, or any single expression, never equals a tuple, list or set of several items; an
            # assignment of a tuple, (p, q) = (3, 2), is decided as an equation below.
            single = pred if pred_sequence is None else gold
            if has_number or not _assigns_a_sequence(single):
                return False
        if pred_matrix is not None or gold_matrix is not None:
            return self._leaf(pred, gold)  # a product or sum of matrices against a matrix
        return "scalar"

    def _scalars(self, pred: str, gold: str) -> Verdict:
        pred_equation, gold_equation = equation(pred), equation(gold)
        if pred_equation is not None or gold_equation is not None:
            return self._equations(pred, gold, pred_equation, gold_equation)

        pred_ratio, gold_ratio = split_top(pred, _RATIO), split_top(gold, _RATIO)
        if len(pred_ratio) > 1 or len(gold_ratio) > 1:  # 7:32, 12:00
            return self._ordered(pred_ratio, gold_ratio)

        if is_relation(pred) or is_relation(gold):
            return self._leaf(pred, gold) if is_relation(pred) and is_relation(gold) else False

        pred_words, gold_words = words(pred), words(gold)
        if pred_words is not None and gold_words is not None:
            if pred_words == gold_words:
                return True
            # Short letter strings may be products of variables ("ab" = "ba"): sympy decides those.
            if max(len(t) for t in (pred_words + " " + gold_words).split()) >= 3:
                return False
        return self._leaf(pred, gold)

    def _equations(self, pred: str, gold: str, pred_equation: tuple | None, gold_equation: tuple | None) -> Verdict:
        if pred_equation is not None and pred_equation[0] == "value":
            return self._holding(self.compare(pred_equation[1], gold), pred)
        if gold_equation is not None and gold_equation[0] == "value":
            return self.compare(pred, gold_equation[1])
        pred_kind = pred_equation[0] if pred_equation else None
        gold_kind = gold_equation[0] if gold_equation else None
        if pred_kind == "assign" and gold_kind == "assign":
            if _squash(pred_equation[1]) != _squash(gold_equation[1]):
                return False  # y = 3 is not x = 3
            return self._holding(self.compare(pred_equation[2], gold_equation[2]), pred)
        if pred_kind == "assign" and gold_kind is None:
            return self._holding(self.compare(pred_equation[2], gold), pred)
        if gold_kind == "assign" and pred_kind is None:
            return self.compare(pred, gold_equation[2])
        if pred_kind is None or gold_kind is None:
            return False  # 7 = 11a + c is not 11a + c
        return self._leaf(pred, gold)  # two equations: sympy compares their solution sets

    def _holding(self, verdict: Verdict, pred: str) -> Verdict:
        """``verdict`` on an answer's value, given only if its chain of equalities holds (``\\sqrt{4} = 2`` does,
        ``0 = 16`` holds for nothing): a relation is checked, never read as its last side."""
        sides = chain_sides(pred)
        verdicts = [verdict]
        for side in sides[:-1]:
            if verdicts[-1] is False:
                return False  # lazily: with a sympy leaf every side costs milliseconds
            verdicts.append(self.compare(side, sides[-1]))
        return _all_of(verdicts)

    def _items(self, text: str) -> list[str]:
        found = sequence(text)
        return found[1] if found is not None and found[0] in ("set", "list") else [text]

    def _leaf(self, pred: str, gold: str) -> Verdict:
        return self.leaf(pred, gold) if self.leaf is not None else None

    def _ordered(self, pred: list[str], gold: list[str]) -> Verdict:
        if len(pred) != len(gold):
            return False
        return _all_of([self.compare(p, g) for p, g in zip(pred, gold)])

    def _unordered(self, pred: list[str], gold: list[str]) -> Verdict:
        if len(pred) != len(gold):
            return False
        unused = list(range(len(gold)))
        for item in pred:
            undecided = False
            for j in unused:  # lazily: with a sympy leaf every comparison costs milliseconds
                verdict = self.compare(item, gold[j])
                if verdict is True:
                    unused.remove(j)
                    break
                undecided = undecided or verdict is None
            else:
                # Unmatched for sure only if every remaining candidate is surely unequal.
                return None if undecided else False
        return True


def _labelled(items: list[str]) -> bool:
    """Whether every item of a list names what it is (``x = 3, y = 4``)."""
    return all((found := equation(item)) is not None and found[0] == "assign" for item in items)


def _is_interval(kind: str, items: list[str]) -> bool:
    return kind in ("[]", "[)", "(]") and len(items) == 2


def _by_multiplicity(pred: list[str], gold: list[str]) -> tuple[list[str], list[str]]:
    """Multiplicity follows the gold: a gold with a repeated item (``2, 3, 3``, roots with multiplicity) is a
    multiset that must be matched item for item; otherwise both sides are sets (a root written twice counts once)."""
    if len(_distinct(gold)) < len(gold):
        return pred, gold
    return _distinct(pred), gold


def _all_of(verdicts: list[Verdict]) -> Verdict:
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None


def fast_compare(pred: str, gold: str, conventions: Conventions = DEFAULT) -> Verdict:
    """Compare two normalized answers without sympy: True/False when certain, None when sympy must decide."""
    return Comparison(conventions=conventions).compare(pred, gold)

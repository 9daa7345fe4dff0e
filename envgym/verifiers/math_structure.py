"""How two normalized answers compare, part by part (the parts are read by :mod:`envgym.verifiers.math_parts`).

One algorithm runs twice: in the calling process with no leaf comparison (:func:`fast_compare`: exact numbers,
letters and words only, ``None`` when some part needs sympy), and inside the symbolic workers with a sympy leaf
that always decides. So ``\\{1\\pm\\sqrt5, -2\\}``, tuples of expressions and lists of assignments are split the same
way in both places, and sympy only ever sees one expression or one relation at a time.

Conventions decided here (each is a labelled pair, a Math-Verify case or a test):
- ``\\{...\\}`` is an unordered set; a bare list (``1, 2``, ``1; 2``, ``1 and 2``) is unordered unless
  ``Conventions.lists`` is ``"ordered"``, and read in the gold's order against a labelled gold (``x = 3, y = 4``);
  repeats count once unless the gold repeats an item (multiplicity follows the gold); ``(a, b)`` and ``[a, b)``
  are ordered and their brackets must match; a set never equals an ordered tuple; a list compared with a tuple
  is read in order, and never equals an interval (``[a, b]``, ``(a, b]``);
- a matrix of one row or one column is a vector: it equals a tuple, bracketed or bare list of the same items in
  the same order (``\\begin{pmatrix}1\\\\2\\end{pmatrix}`` = ``(1, 2)``), never a set;
- ``a \\pm b`` is the set ``{a+b, a-b}``;
- a single-name assignment (``x = 3``, ``(p, q) = (3, 2)``, ``f(x) = 1``) equals its right side, but two
  assignments must name the same variable (``y = 3`` != ``x = 3``); an equation that is not an assignment
  (``7 = 11a + c``) never equals a bare value; a chain (``x = 5 + 5 + 1 = 11``, ``\\sqrt{4} = 2``) means its
  last value only if every side equals it (``0 = 16`` equals nothing), and ``16 \\approx 0`` holds for nothing;
- ``x \\in S`` means ``S``; an inequality in the gold answer may be answered with the interval it describes,
  not the other way round (Math-Verify's default);
- a unit after a value (:mod:`envgym.verifiers.math_units`, a whitelist) is ignored unless both sides carry
  different units (``5 m`` vs ``5 cm``); plain words naming what was counted (``33 eggs``) are ignored against a
  number (:func:`envgym.verifiers.math_words.counted_number`); other trailing words stay part of the answer;
- clock times compare as times of day (``20:34:00`` = ``20:34`` = ``8:34 P.M.``) when either side writes seconds or
  a.m./p.m.; otherwise ``7:32`` is compared part by part;
- numbers compare under :class:`envgym.verifiers.math_conventions.Conventions` (percent, tolerance, mixed numbers);
- a bare ``1,22`` is the decimal 1.22 when compared with a decimal written with a point (``1.22``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from envgym.verifiers.math_conventions import DEFAULT, Conventions, numbers_equal
from envgym.verifiers.math_normalize import decimal_comma, parse_number
from envgym.verifiers.math_parts import (
    assigns_a_sequence,
    chain_sides,
    distinct,
    equation,
    is_relation,
    matrix,
    membership,
    plus_minus,
    sequence,
    split_top,
    squash,
    union_parts,
    words,
    wrapped,
)
from envgym.verifiers.math_units import clock_time, unit_split
from envgym.verifiers.math_words import counted_number

_RATIO = re.compile(r":")
_LETTER = re.compile(r"^\(?([A-Za-z])\)?\.?$")
Verdict = bool | None
Leaf = Callable[[str, str], bool]


# --- comparison -------------------------------------------------------------------------------------


class Comparison:
    """Compares two normalized answers part by part; ``leaf`` decides parts that are neither numbers, letters
    nor words (None: such a part makes the verdict None)."""

    def __init__(self, leaf: Leaf | None = None, conventions: Conventions = DEFAULT):
        self.leaf, self.conventions = leaf, conventions

    def compare(self, pred: str, gold: str) -> Verdict:
        if not pred or not gold:
            return False
        if squash(pred) == squash(gold):
            return True
        pred, gold = membership(pred), membership(gold)

        pred_value, pred_unit = unit_split(pred)
        gold_value, gold_unit = unit_split(gold)
        if pred_unit and gold_unit and pred_unit != gold_unit:
            return False
        if (pred_unit or gold_unit) and (pred_value, gold_value) != (pred, gold):
            return self.compare(pred_value, gold_value)

        mixed = self.conventions.mixed_numbers
        pred_number, gold_number = parse_number(pred, mixed), parse_number(gold, mixed)
        if pred_number is not None and gold_number is not None:
            return numbers_equal(pred_number, gold_number, self.conventions)
        if (pred_number is None) != (gold_number is None):  # "33 eggs" against 33: the number of what was counted
            counted = counted_number(pred if pred_number is None else gold)
            if counted is not None:
                return self.compare(counted, gold) if pred_number is None else self.compare(pred, counted)
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
        if (pred_matrix is None) != (gold_matrix is None):
            vector = _vector(pred_matrix or gold_matrix)
            listed = gold_sequence if pred_matrix is not None else pred_sequence
            if vector is not None and listed is not None and listed[0] in ("()", "[]", "list"):
                return self._ordered(*((vector, listed[1]) if pred_matrix is not None else (listed[1], vector)))

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
                gold_kind == "list" and _is_interval(pred_kind, pred_items)
            ):
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
            if has_number or not assigns_a_sequence(single):
                return False
        if pred_matrix is not None or gold_matrix is not None:
            return self._leaf(pred, gold)  # a product or sum of matrices against a matrix
        return "scalar"

    def _scalars(self, pred: str, gold: str) -> Verdict:
        pred_equation, gold_equation = equation(pred), equation(gold)
        if pred_equation is not None or gold_equation is not None:
            return self._equations(pred, gold, pred_equation, gold_equation)

        pred_time, gold_time = clock_time(pred), clock_time(gold)
        if pred_time is not None and gold_time is not None and (pred_time[1] or gold_time[1]):
            return pred_time[0] == gold_time[0]  # 20:34:00 = 8:34 p.m.; without seconds or a.m./p.m., a ratio too

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
            if squash(pred_equation[1]) != squash(gold_equation[1]):
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


def _vector(cells: list[list[str]]) -> list[str] | None:
    """The items of a matrix of one row or one column (of two items or more), else None."""
    items = [cell for row in cells for cell in row]
    if len(items) >= 2 and (len(cells) == 1 or all(len(row) == 1 for row in cells)):
        return items
    return None


def _labelled(items: list[str]) -> bool:
    """Whether every item of a list names what it is (``x = 3, y = 4``)."""
    return all((found := equation(item)) is not None and found[0] == "assign" for item in items)


def _is_interval(kind: str, items: list[str]) -> bool:
    return kind in ("[]", "[)", "(]") and len(items) == 2


def _by_multiplicity(pred: list[str], gold: list[str]) -> tuple[list[str], list[str]]:
    """Multiplicity follows the gold: a gold with a repeated item (``2, 3, 3``, roots with multiplicity) is a
    multiset that must be matched item for item; otherwise both sides are sets (a root written twice counts once)."""
    if len(distinct(gold)) < len(gold):
        return pred, gold
    return distinct(pred), gold


def _all_of(verdicts: list[Verdict]) -> Verdict:
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None


def fast_compare(pred: str, gold: str, conventions: Conventions = DEFAULT) -> Verdict:
    """Compare two normalized answers without sympy: True/False when certain, None when sympy must decide."""
    return Comparison(conventions=conventions).compare(pred, gold)

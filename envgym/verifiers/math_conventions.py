"""The conventions on which graders disagree, as options, and how two plain numbers compare under them.

Every choice here is documented (with why) in docs/verifiers.md, "Conventions". The defaults are the ones that
give no answer more credit than it states: a percent sign means what it says, and a list compares as the gold
is written.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

from envgym.verifiers.math_normalize import Number, values_equal

LISTS = ("unordered", "ordered")
PERCENT = ("value", "unit", "either")


@dataclasses.dataclass(frozen=True)
class Conventions:
    """How answers are read where graders' conventions conflict.

    lists: a gold written as a bare list (``2, 5``) is ``"unordered"`` (the solutions, in any order; the default)
        or ``"ordered"`` (a sequence). Sets (``\\{...\\}``) are always unordered and tuples (``(a, b)``) always
        ordered; a labelled gold (``x = 3, y = 4``) is answered in its order or with the same labels.
    percent: ``"value"`` (default): ``x\\%`` is the number x/100 (``25\\%`` = ``0.25``, ``0.5\\%`` != ``0.5``), and
        a gold written as a percentage also accepts its figure (gold ``25\\%``, answer ``25``); ``"unit"``: the sign
        is dropped on both sides (``25\\%`` = ``25`` != ``0.25``); ``"either"``: ``x\\%`` equals both x and x/100
        (Math-Verify's reading; it lets an answer hedge between two values).
    tolerance: decimals stand for the values they round to: a decimal with 6 or more significant digits
        (``0.333333`` = 1/3), and a more precise decimal against a gold given to a few decimals that rounds to it
        under every rounding rule (gold ``3.14``: ``3.1416`` yes; ``3.145``, a tie, no). ``False``: every number
        is exact (the answer asked for is an exact value).
    mixed_numbers: a whole number followed by a proper fraction (``3\\frac{1}{2}``, ``3128 1/2``) is a mixed number
        (``True``, the default: 3.5 and 3128.5) or a product (``False``: ``3 1/2`` is 3/2, sympy's reading).
    """

    lists: str = "unordered"
    percent: str = "value"
    tolerance: bool = True
    mixed_numbers: bool = True

    def __post_init__(self) -> None:
        if self.lists not in LISTS:
            raise ValueError(f"lists must be one of {LISTS}, got {self.lists!r}")
        if self.percent not in PERCENT:
            raise ValueError(f"percent must be one of {PERCENT}, got {self.percent!r}")
        if not isinstance(self.tolerance, bool):
            raise ValueError(f"tolerance must be True or False, got {self.tolerance!r}")
        if not isinstance(self.mixed_numbers, bool):
            raise ValueError(f"mixed_numbers must be True or False, got {self.mixed_numbers!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


DEFAULT = Conventions()


def numbers_equal(pred: Number, gold: Number, conventions: Conventions = DEFAULT) -> bool:
    """Whether the answer ``pred`` equals the gold ``gold``, both plain numbers (see :class:`Conventions`)."""
    for x, y in _readings(pred, gold, conventions.percent):
        if conventions.tolerance:
            if values_equal(x, pred, y, gold) or _rounds_to_gold(x, pred, y, gold):
                return True
        elif x == y:
            return True
    return False


def _readings(pred: Number, gold: Number, percent: str) -> list[tuple[Fraction | float, Fraction | float]]:
    """The (answer, gold) value pairs that count as a match under the ``percent`` convention."""

    def value(number: Number) -> Fraction | float:
        return number.value / 100 if number.percent and isinstance(number.value, Fraction) else number.value

    if percent == "unit":
        return [(pred.value, gold.value)]
    if percent == "either":
        return [(x, y) for x in pred.candidates() for y in gold.candidates()]
    readings = [(value(pred), value(gold))]
    if gold.percent and not pred.percent:  # gold 25%, answer 25: the figure in percent
        readings.append((pred.value, gold.value))
    return readings


def _rounds_to_gold(x: Fraction | float, pred: Number, y: Fraction | float, gold: Number) -> bool:
    """A gold decimal with ``d >= 1`` fractional digits and 2+ significant digits (``3.14``) is met by a more
    precise decimal answer that rounds to it at ``d`` digits under every rounding rule (``3.1416``), i.e. lies
    strictly within half a unit of the gold's last digit: a tie (``3.145``) rounds up or to even, to 3.15 or 3.14
    depending on the rule, so it could be written for either neighbour and is accepted for neither. Exact answers
    (``22/7``, ``\\pi``) and answers no more precise than the gold must equal it."""
    if isinstance(x, float) or isinstance(y, float) or pred.percent or gold.percent:
        return False
    if gold.fractional_digits is None or pred.fractional_digits is None:
        return False
    if (
        gold.fractional_digits < 1
        or (gold.significant_digits or 0) < 2
        or pred.fractional_digits <= gold.fractional_digits
    ):
        return False
    return abs(x - y) * 2 < Fraction(1, 10**gold.fractional_digits)

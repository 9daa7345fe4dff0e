"""The form of an answer, where the form is part of the task.

"Compute", "simplify" and "evaluate" tasks ask for a value, not for a way to get it: copying the question's
expression into the box (``Compute 85 - 51 + 30`` -> ``\\boxed{85 - 51 + 30}``) is right in value and wrong as an
answer, because the verifier, not the policy, would do the computing. With ``form="literal"``,
:func:`envgym.verifiers.math.grade` first requires a *simplified literal*:

- an integer (``-7``, ``1,000``), a fraction in lowest terms with a denominator above 1 (``-7/3``,
  ``\\frac{-7}{3}``, ``-\\frac{7}{3}``; not ``14/6`` nor ``4/1``) or a terminating decimal (``0.75``);
- or a tuple, list or set of them (``(1/2, 3)``, ``-2, 5``), each item possibly named (``x = 3``, ``x = 3, y = 4``);
- never an operation (``85 - 51 + 30``, ``2^{10}``, ``\\sqrt{4}``, ``1e3``), a percentage, a unit, words, or an
  equation or chain (``30 + 34 = 64``).

Under this form numbers are also compared exactly (no rounding tolerance): a decimal counts only where it *is*
the gold value (``0.75`` for ``3/4``; ``0.333333`` is not ``1/3``).
"""

from __future__ import annotations

import math
import re

from envgym.verifiers.math_normalize import normalize
from envgym.verifiers.math_parts import equation, sequence, split_top

FORMS = ("any", "literal")

_INTEGER = re.compile(r"[+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)")
_DECIMAL = re.compile(r"[+-]?[0-9]*\.[0-9]+")
_FRACTION = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<num>[+-]?[0-9]+)\s*/\s*(?P<den>[0-9]+)"
    r"|\\frac\{(?P<tex_num>[+-]?[0-9]+)\}\{(?P<tex_den>[0-9]+)\})"
)
_EQUALS = re.compile(r"(?<![<>!\\])=")


def literal_error(answer: str) -> str | None:
    """Why ``answer`` is not a simplified literal (see the module docstring), or None if it is one."""
    return _error(normalize(answer))


def _error(text: str) -> str | None:
    if _INTEGER.fullmatch(text) or _DECIMAL.fullmatch(text):
        return None
    fraction = _FRACTION.fullmatch(text)
    if fraction is not None:
        numerator = int(fraction.group("num") or fraction.group("tex_num"))
        denominator = int(fraction.group("den") or fraction.group("tex_den"))
        if denominator > 1 and math.gcd(numerator, denominator) == 1:
            return None
        return f"{text!r} is a fraction not in lowest terms; write it reduced (or as an integer)"
    found = sequence(text)
    if found is not None:
        for item in found[1]:
            error = _error(item)
            if error is not None:
                return error
        return None
    assigned = equation(text)
    if assigned is not None and assigned[0] == "assign" and len(split_top(text, _EQUALS)) == 2:
        return _error(assigned[2])
    if assigned is not None:
        return f"{text!r} is an equation or a chain of equalities; the task asks for the value alone"
    return (
        f"{text!r} is not a simplified value: the task asks for an integer, a fraction in lowest terms or a "
        "decimal, not an expression to evaluate"
    )

"""How an answer splits into parts: lists, sets, tuples and intervals, unions, matrices, ``±``, equations and
chains, relations, plain words. No comparison happens here (:mod:`envgym.verifiers.math_structure` compares the
parts); the same splitting runs in the calling process and in the symbolic workers.
"""

from __future__ import annotations

import re
from fractions import Fraction

from envgym.verifiers.math_normalize import parse_number
from envgym.verifiers.math_words import MATH_WORDS

_LIST_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and|or)\b|,|;|\b(?:and|or)\b)\s*", re.IGNORECASE)
_COMMA = re.compile(r"\s*,\s*")
_SEMICOLON = re.compile(r"\s*;\s*")
_EQUALS = re.compile(r"(?<![<>!\\])=")
_APPROX = re.compile(r"\\approx(?![A-Za-z])")
_PLUS_MINUS = re.compile(r"\\pm(?![A-Za-z])")
_CUP = re.compile(r"\\cup(?![A-Za-z])")
_RELATION = re.compile(r"<|>|\\leq(?![A-Za-z])|\\geq(?![A-Za-z])|\\neq(?![A-Za-z])")
_MEMBERSHIP = re.compile(r"^(?P<name>[^=<>]+?)\s*\\in(?![A-Za-z])\s*(?P<set>.+)$")
_MATRIX = re.compile(r"^\\begin\{pmatrix\}(?P<body>(?:(?!\\begin|\\end).)*)\\end\{pmatrix\}$", re.DOTALL)
_WORDS = re.compile(r"^[A-Za-z][A-Za-z '\-]*$")
_GREEK = re.compile(
    r"\\(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|kappa|lambda|mu|nu|xi|rho"
    r"|sigma|tau|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Sigma|Phi|Psi|Omega)(?![A-Za-z])"
)
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
            return "set", [] if items == [""] else distinct(_expand_plus_minus(items))  # a set has no repeats
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


def distinct(items: list[str]) -> list[str]:
    """Items without repeats (``(3,17)`` written twice is one solution), in written order."""
    return list({squash(item): item for item in reversed(items)}.values())[::-1]


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
    return [_PLUS_MINUS.sub(lambda _, sign=sign: sign, text) for sign in ("+", "-")]


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


def assigns_a_sequence(text: str) -> bool:
    found = equation(text)
    return found is not None and found[0] != "equation" and sequence(found[-1]) is not None


def _has_variable(text: str) -> bool:
    return re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text)) is not None


def is_relation(text: str) -> bool:
    return len(split_top(text, _RELATION)) > 1


def membership(text: str) -> str:
    """``x \\in S`` as ``S``; a relation written in parentheses (``(35 + 70 = 105)``) as the relation."""
    shape = wrapped(text)
    if shape is not None and shape[0] == "(" and shape[2] == ")" and len(split_top(shape[1], _EQUALS)) > 1:
        text = shape[1].strip()
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
    if not parts or any(len(part) < 2 or part in MATH_WORDS for part in parts):
        return None
    return " ".join(token for token in tokens if token not in _ARTICLES)


def squash(text: str) -> str:
    return text.replace(" ", "")

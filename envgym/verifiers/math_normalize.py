"""Normalization and exact numbers for the math verifier (no sympy, microseconds per answer).

:func:`normalize` turns an extracted answer into a canonical string: delimiters, spacing commands, ``\\text{}``
wrappers, degrees, currency and thousands separators in all their LaTeX forms (``1,000``, ``1{,}000``,
``1,\\!000``, ``1\\,000``, ``1 000``) go; fractions, roots, relations (``>=``, ``\\ge``, ``≥`` are all
``\\geq``) and matrix environments get one spelling. :func:`parse_number` reads plain real numbers exactly
(``fractions.Fraction``). Structure (lists, sets, intervals, equations) is :mod:`envgym.verifiers.math_structure`.

Number conventions (each is a labelled pair in ``math_pairs.jsonl`` or a Math-Verify case):
- ``x%`` carries its sign (``Number.percent``); what it equals is ``Conventions.percent``
  (:mod:`envgym.verifiers.math_conventions`);
- only ASCII digits are digits (``١٦`` and ``１６`` are not 16: every number pattern is ``re.ASCII``);
- a decimal with at least ``MIN_SIGNIFICANT_DIGITS`` significant digits stands for the values that round or
  truncate to it (``0.333333`` and ``0.666667`` are 1/3 and 2/3; ``1.0000001`` is not 1), a relative tolerance
  of at most 1e-5; shorter decimals are exact (``0.3333`` != 1/3, ``0.000000`` != ``0.000001``: no absolute
  tolerance, so 0 equals only 0);
- ``204_5`` is a number in base 5 (= 54);
- numbers with more than ``MAX_DIGITS`` digits (``9^{9^{9}}``) are never expanded.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from envgym.verifiers.math_words import spoken_number

MAX_ANSWER_CHARS = 1000
"""Longer answers are not compared (they are returned unequal at once): no real final answer is this long,
and the cap bounds the work any input can cause."""

MAX_DIGITS = 10_000
MAX_FACTORIAL = 3000  # 3000! has 9,131 digits
MIN_SIGNIFICANT_DIGITS = 6

_UNICODE = {
    "\u2212": "-",
    "\u2013": "-",
    "\u00d7": "\\times ",
    "\u22c5": "\\cdot ",
    "\u00b7": "\\cdot ",
    "\u03c0": "\\pi ",
    "\u221e": "\\infty ",
    "\u221a": "\\sqrt",
    "\u00b0": "^\\circ",
    "\u2264": "\\leq ",
    "\u2265": "\\geq ",
    "\u2260": "\\neq ",
    "\u222a": "\\cup ",
    "\u00bd": "1/2",
    "\u00b2": "^2",
    "\u00b3": "^3",
    "\u2208": "\\in ",
}
# Answers copied out of JSON are often escaped twice (\\frac); a LaTeX line break is never followed by these.
_DOUBLE_ESCAPED = re.compile(
    r"(?<!\\)\\\\(?=(?:[dtc]?frac|left|right|sqrt|leq?|geq?|neq?|lt|gt|pm|mp|cdot|times|div|pi|infty|in|cup|cap"
    r"|text|mathrm|mathbf|boxed|approx)(?![A-Za-z]))"
)
# A chat template's end-of-turn token ends the response: nothing after it was generated as part of the answer.
# Tokens that end one message of several (<|end|> between gpt-oss channels, Llama's <|eom_id|> before a tool
# result) are not among them: the answer may come after them.
END_OF_TURN = re.compile(
    r"<\|(?:im_end|eot_id|endoftext|end_of_text|return|end_of_turn)\|>|</s>|<eos>|<end_of_turn>"
    r"|<\uff5cend\u2581of\u2581sentence\uff5c>"
)
# ``,\!`` is LaTeX's comma without space, written only between digit groups (``1,\!000``, MATH's
# ``56,\!01,\!78``), so it joins digits whatever the group size.
_DIGIT_GROUP_COMMA = re.compile(r"(?<=\d),\s*\\!\s*(?=\d)", re.ASCII)
_THOUSANDS_LATEX = re.compile(r"(?<=\d)\s*(?:\{,\s*\}|,\s*\\!|\\!\s*,|\\,|\{\\,\})\s*(?=\d{3}(?!\d))", re.ASCII)
_DROP = re.compile(
    r"\\left|\\right|\\displaystyle|\\textstyle|(?<!\\)\\(?:!|,|;|:| )|~|\\quad|\\qquad|\^\{\\circ\}|\^\\circ|\\circ"
    r"|\\degree|\\\$|\$|\\mathstrut|\\middle"
)
_TEXT_COMMAND = re.compile(
    r"\\(?:text|textbf|textit|textrm|textnormal|textup|texttt|textsf|emph|mathrm|mathbf|mathit|mathsf|mathtt"
    r"|mbox|hbox|operatorname|mathcal|mathbb|mathfrak|mathscr|boldsymbol|bm)\s*\{"
)
_RELATIONS = (
    (re.compile(r">=|\\geqslant(?![A-Za-z])|\\geq?(?![A-Za-z])"), " \\geq "),
    (re.compile(r"<=|\\leqslant(?![A-Za-z])|\\leq?(?![A-Za-z])"), " \\leq "),
    (re.compile(r"!=|\\neq?(?![A-Za-z])"), " \\neq "),
    (re.compile(r"\\lt(?![A-Za-z])"), " < "),
    (re.compile(r"\\gt(?![A-Za-z])"), " > "),
)
_MATRIX_ENVIRONMENT = re.compile(
    r"\\begin\{(?:[bB]?matrix|smallmatrix|array\}\{[^{}]*)\}(.*?)\\end\{(?:[bB]?matrix|smallmatrix|array)\}", re.DOTALL
)
_BRACKETED_MATRIX = re.compile(r"^[(\[]\s*(\\begin\{pmatrix\}(?:(?!\\begin).)*\\end\{pmatrix\})\s*[)\]]$", re.DOTALL)
_FRAC_SHORT = re.compile(r"\\frac\s*(\d)\s*(\d)", re.ASCII)
_FRAC_HALF_BRACED = re.compile(r"\\frac\s*(\d)\s*\{|\\frac\s*(\{[^{}]*\})\s*(\d)", re.ASCII)
_FRAC_NAME = re.compile(r"\\[dtc]frac")
_SQRT_SHORT = re.compile(r"\\sqrt\s*(\d+)", re.ASCII)
_UNIT_WORDS = re.compile(r"(?<=\d)\s*(?:dollars?|percent(?:age)?|pct)\b", re.ASCII)

_DECIMAL = r"(?:\d+(?:\.\d*)?|\.\d+)"
_NUMBER = re.compile(
    rf"^(?P<mantissa>{_DECIMAL})(?:[eE](?P<exp>[+-]?\d+)|\s*(?:\\times|\\cdot|\*)\s*10\^\{{?(?P<exp10>[+-]?\d+)\}}?)?$",
    re.ASCII,
)
_POWER_OF_TEN = re.compile(r"^10\^\{?(?P<exp>[+-]?\d+)\}?$", re.ASCII)
_INT_POWER = re.compile(r"^(?P<base>\d+)\^\{?(?P<exp>\d+)\}?$", re.ASCII)
_FRACTION = re.compile(rf"^\\frac\{{(?P<num>[+-]?{_DECIMAL})\}}\{{(?P<den>[+-]?{_DECIMAL})\}}$", re.ASCII)
_SLASH = re.compile(rf"^(?P<num>{_DECIMAL})\s*/\s*(?P<den>[+-]?{_DECIMAL})$", re.ASCII)
_MIXED = re.compile(
    r"^(?P<whole>\d+)(?:\s*\\frac\{(?P<num>\d+)\}\{(?P<den>\d+)\}|\s+(?P<slash_num>\d+)\s*/\s*(?P<slash_den>\d+))$",
    re.ASCII,
)
_BASE = re.compile(r"^(?P<digits>[0-9A-Fa-f]+)_\{?(?P<base>\d{1,2})\}?$", re.ASCII)
_THOUSANDS = re.compile(r"^[1-9]\d{0,2}(?:(?:,\d{3})+|(?: \d{3})+)(?:\.\d+)?$", re.ASCII)
_INFINITY = {"\\infty", "inf", "infinity", "oo", "infty"}
_POWER = re.compile(r"(\d+)\s*\^\s*\{?\s*(\d+)(?:\s*\^\s*\{?\s*(\d+))?", re.ASCII)
_FACTORIAL = re.compile(r"(\d+)\s*!", re.ASCII)


def find_braced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the ``{...}`` group opening at ``text[start]`` and the index after it (None if unbalanced)."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        char = text[i]
        if char == "\\":  # an escaped brace (\{ or \}) does not count
            continue
        if char == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif char == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return None


def _unwrap_command(text: str, pattern: re.Pattern[str], before: str = "") -> str:
    """Replace ``\\cmd{content}`` with ``before + content`` for every match of ``pattern`` (which ends at the ``{``)."""
    while (match := pattern.search(text)) is not None:
        found = find_braced(text, match.end() - 1)
        if found is None:
            return text
        content, end = found
        text = text[: match.start()] + before + content + text[end:]
    return text


def _strip_wrappers(text: str) -> str:
    """Remove a ``\\boxed{}`` or math delimiters around the whole answer (repeatedly: ``$\\boxed{5}$``)."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip()
        boxed = re.match(r"^\\(?:boxed|fbox)\s*\{", text)
        if boxed:
            found = find_braced(text, boxed.end() - 1)
            if found is not None and found[1] == len(text):
                text = found[0]
        text = re.sub(r"^\$+|(?<!\\)\$+$|^\\\(|\\\)$|^\\\[|\\\]$", "", text)
        bold = re.fullmatch(r"\*\*(.+)\*\*", text, re.DOTALL)  # Markdown bold: **42**
        if bold and "**" not in bold.group(1):
            text = bold.group(1)
    return text


def _brace_fraction(match: re.Match[str]) -> str:
    """``\\frac3{4}`` and ``\\frac{3}4`` as ``\\frac{3}{4}``."""
    if match.group(1):
        return f"\\frac{{{match.group(1)}}}{{"
    return f"\\frac{match.group(2)}{{{match.group(3)}}}"


def normalize(answer: str) -> str:
    """A canonical string for an extracted answer (see the module docstring for what changes)."""
    text = END_OF_TURN.split(answer, maxsplit=1)[0]
    text = _DOUBLE_ESCAPED.sub(r"\\", text)
    text = _strip_wrappers(text)
    for old, new in _UNICODE.items():
        text = text.replace(old, new)
    text = _DIGIT_GROUP_COMMA.sub("", text)
    text = _THOUSANDS_LATEX.sub("", text)
    text = text.replace("{,}", ",")
    text = _DROP.sub(" ", text)
    text = _unwrap_command(text, _TEXT_COMMAND, before=" ")
    text = text.replace("\\%", "%")
    for pattern, spelling in _RELATIONS:
        text = pattern.sub(lambda _, spelling=spelling: spelling, text)
    text = _MATRIX_ENVIRONMENT.sub(r"\\begin{pmatrix}\1\\end{pmatrix}", text)
    text = _BRACKETED_MATRIX.sub(r"\1", text.strip())  # \left[\begin{array}...\end{array}\right] is the matrix
    text = _FRAC_NAME.sub(r"\\frac", text)
    text = _FRAC_SHORT.sub(r"\\frac{\1}{\2}", text)
    text = _FRAC_HALF_BRACED.sub(_brace_fraction, text)
    text = _SQRT_SHORT.sub(r"\\sqrt{\1}", text)
    # e^{2} -> e^2, a_{3} -> a_3; not 2^{6}3^{5}, which would read as 2^{63^5}
    text = re.sub(r"([\^_])\{(\w)\}(?![0-9A-Za-z])", r"\1\2", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = _UNIT_WORDS.sub(lambda m: "" if "dollar" in m.group() else "%", text).strip()
    if text.endswith("."):  # a sentence's full stop ("5." or "Blue.")
        text = text[:-1].rstrip()
    text = re.sub(r"(?<!\\)\\+$", "", text).rstrip()  # a stray line break or backslash at the end ("185\\")
    while len(text) > 2 and text[0] == "{" and find_braced(text, 0) == (text[1:-1], len(text)):
        text = text[1:-1].strip()
    return text


# --- values -----------------------------------------------------------------------------------------


class Number:
    """A real number with how it was written: ``fractional_digits`` and ``significant_digits`` for decimal
    literals (None if exact), and whether it carried a percent sign."""

    __slots__ = ("value", "fractional_digits", "significant_digits", "percent")

    def __init__(
        self,
        value: Fraction | float,
        fractional_digits: int | None = None,
        significant_digits: int | None = None,
        percent: bool = False,
    ):
        self.value, self.fractional_digits, self.percent = value, fractional_digits, percent
        self.significant_digits = significant_digits

    def candidates(self) -> list[Fraction | float]:
        if self.percent and isinstance(self.value, Fraction):
            return [self.value, self.value / 100]
        return [self.value]


def _decimal(text: str, exponent: str | None = None) -> Number | None:
    exp = int(exponent) if exponent else 0
    if abs(exp) > MAX_DIGITS or len(text) > MAX_DIGITS:
        return None
    value = Fraction(text) * Fraction(10) ** exp
    if "." not in text:
        return Number(value)
    digits = len(text.split(".")[1])
    significant = len(text.replace(".", "").lstrip("0"))
    return Number(value, max(digits - exp, 0), significant)


def parse_number(text: str, mixed_numbers: bool = True) -> Number | None:
    """A plain real number written as an integer, decimal, fraction, mixed number (``3\\frac{1}{2}``,
    ``3128 1/2``; with ``mixed_numbers=False`` those are products, left to sympy), percentage, power, base-b
    numeral, in scientific notation or in words (``five``); None for anything else."""
    text = text.strip()
    percent = text.endswith("%")
    if percent:
        text = text[:-1].strip()
    sign = 1
    while text[:1] in ("-", "+"):
        if text[0] == "-":
            sign = -sign
        text = text[1:].strip()
    if text.startswith("(") and text.endswith(")") and "," not in text:
        inner = parse_number(text[1:-1], mixed_numbers)
        if inner is None or percent:
            return None
        inner.value = sign * inner.value
        return inner
    number = _parse_unsigned(text, mixed_numbers)
    if number is None:
        return None
    number.value = sign * number.value
    number.percent = percent
    return number


def _parse_unsigned(text: str, mixed_numbers: bool) -> Number | None:
    if _THOUSANDS.match(text):
        text = text.replace(",", "").replace(" ", "")
    if text.lower() in _INFINITY:
        return Number(float("inf"))
    if match := _NUMBER.match(text):
        return _decimal(match.group("mantissa"), match.group("exp") or match.group("exp10"))
    if match := _POWER_OF_TEN.match(text):
        return _decimal("1", match.group("exp"))
    if match := _INT_POWER.match(text):
        base, exp = int(match.group("base")), int(match.group("exp"))
        if base > 1 and exp * len(match.group("base")) > MAX_DIGITS:
            return None
        return Number(Fraction(base**exp))
    if match := _FRACTION.match(text) or _SLASH.match(text):
        num, den = Fraction(match.group("num")), Fraction(match.group("den"))
        return None if den == 0 else Number(num / den)
    if mixed_numbers and (match := _MIXED.match(text)):
        whole = int(match.group("whole"))
        num, den = (int(match.group(k) or match.group(f"slash_{k}")) for k in ("num", "den"))
        if 0 < num < den:
            return Number(whole + Fraction(num, den))
    if (match := _BASE.match(text)) and 2 <= int(match.group("base")) <= 16:
        try:
            return Number(Fraction(int(match.group("digits"), int(match.group("base")))))
        except ValueError:  # a digit the base does not have: not a numeral
            return None
    spoken = spoken_number(text)
    return None if spoken is None else Number(Fraction(spoken))


def values_equal(x: Fraction | float, x_number: Number | None, y: Fraction | float, y_number: Number | None) -> bool:
    """``x == y``, or one side is a decimal literal with at least ``MIN_SIGNIFICANT_DIGITS`` significant digits
    that the other value rounds or truncates to (``x_number``/``y_number`` say how each was written)."""
    if isinstance(x, float) or isinstance(y, float):  # infinities
        return x == y
    if x == y:
        return True
    return _written_for(x, x_number, y) or _written_for(y, y_number, x)


def _written_for(literal: Fraction, number: Number | None, value: Fraction) -> bool:
    """Whether the decimal ``literal`` is ``value`` rounded or truncated to the literal's last digit: ``value``
    lies in [literal - unit/2, literal + unit) away from zero, one unit being 10^-(fractional digits)."""
    if number is None or number.significant_digits is None or number.significant_digits < MIN_SIGNIFICANT_DIGITS:
        return False
    unit = Fraction(1, 10**number.fractional_digits)
    sign = -1 if literal < 0 else 1
    offset = sign * (value - literal)  # how far value lies beyond the literal, away from zero
    return -unit / 2 <= offset < unit


def decimal_comma(text: str) -> Number | None:
    """``1,22`` or ``1000,99`` read as a decimal with a comma, where the comma cannot be a thousands separator
    (the part after it is not a group of three digits, or the part before it is 0); None otherwise."""
    match = re.fullmatch(r"(-?)([0-9]+),([0-9]+)", text.strip())
    if match is None or (len(match.group(3)) == 3 and match.group(2) != "0"):
        return None
    return parse_number(f"{match.group(1)}{match.group(2)}.{match.group(3)}")


def too_large(text: str) -> bool:
    """Whether ``text`` holds an integer power (or power tower) with more than ``MAX_DIGITS`` digits, which
    sympy would try to expand (``9^{9^{9}}`` has 370 million digits; brackets do not hide one: ``9^{(9^9)}``), or
    the factorial of a number above ``MAX_FACTORIAL``."""
    if any(int(n) > MAX_FACTORIAL for n in _FACTORIAL.findall(text)):
        return True
    unbracketed = _without_brackets(re.sub(r"\\left|\\right", "", text))
    for base, exponent, tower in _POWER.findall(text) + _POWER.findall(unbracketed):
        digits_per_unit = math.log10(int(base)) if int(base) > 1 else 0.0
        if tower:
            if int(tower) * math.log10(max(int(exponent), 1)) > 7:
                return digits_per_unit > 0
            exponent = str(int(exponent) ** int(tower))
        if int(exponent) * digits_per_unit > MAX_DIGITS:
            return True
    return False


def _without_brackets(text: str) -> str:
    """``text`` without brackets and without the spaces inside them, so that no bracket or space hides a power
    tower (``9^{(9^9)}``, ``9^{9 9^9}``); spaces outside brackets stay, and a closing bracket followed by a digit
    or letter becomes one, since there they end an exponent (``2^6 3^5`` and ``2^{6}3^{5}`` are products, not
    ``2^{63^5}``)."""
    kept, depth = [], 0
    for i, char in enumerate(text):
        if char in "({":
            depth += 1
        elif char in ")}":
            depth = max(depth - 1, 0)
            if depth == 0 and text[i + 1 : i + 2].isalnum():
                kept.append(" ")  # 2^{6}3^{5}: the group ended the exponent
        elif not (char.isspace() and depth > 0):
            kept.append(char)
    return "".join(kept)

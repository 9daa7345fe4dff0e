"""Words in math answers: numbers written as words (``five``, ``twenty-one``) and the plain words that may follow a
number without changing it (``33 eggs``), as opposed to words that qualify or change it (``16 or more``,
``5 thousand``, ``3 fourths``).

Both readings are strict on purpose: a number in words must be spelled whole (``five hundred`` is 500, never 5;
``five apples`` is no spoken number), and a counted noun is accepted only when no word of the phrase could change
the value or hedge it, so no phrase earns more than the number it states.
"""

from __future__ import annotations

import re

QUALIFIERS = frozenset(
    {
        "or",
        "and",
        "nor",
        "not",
        "no",
        "never",
        "more",
        "less",
        "fewer",
        "least",
        "most",
        "than",
        "about",
        "around",
        "approximately",
        "roughly",
        "nearly",
        "almost",
        "over",
        "under",
        "above",
        "below",
        "maybe",
        "perhaps",
        "possibly",
        "probably",
        "plus",
        "minus",
        "times",
        "to",
        "is",
        "are",
        "was",
        "were",
        "wrong",
        "incorrect",
        "false",
        "either",
        "but",
        "if",
        "unless",
        "except",
        "up",
        "ish",
        "give",
        "take",
        "per",
        "percent",
        "each",
        "nope",
        "nah",
        "none",
        "neither",
        "cannot",
        "impossible",
        "undefined",
        "invalid",
        "unsure",
        "guess",
        "likely",
        "unlikely",
        "estimate",
        "estimated",
        "approx",
        "approximate",
        "minimum",
        "maximum",
        "atleast",
        "upto",
    }
)
"""Words that qualify, hedge or deny the number before them ("16 or more", "16 is not right", "about 16",
"16 nope"); any word with "n't" ("isn't") counts too."""

VALUE_WORDS = frozenset(
    {
        "hundred",
        "hundreds",
        "thousand",
        "thousands",
        "million",
        "millions",
        "billion",
        "billions",
        "trillion",
        "dozen",
        "dozens",
        "score",
        "gross",
        "lakh",
        "crore",
        "bn",
        "mn",
        "half",
        "halves",
        "third",
        "thirds",
        "quarter",
        "quarters",
        "squared",
        "cubed",
        "factorial",
        "percentage",
        "pct",
        "permille",
        "point",
        "choose",
        "divided",
        "raised",
        "power",
        "powers",
        "root",
        "inverse",
        "reciprocal",
        "negative",
        "repeating",
        "recurring",
        "decimal",
        "fraction",
        "am",
        "pm",
    }
)
"""Words that change the value of the number before them (``5 thousand``, ``3 halves``, ``5 squared``); ordinal
fractions (``3 fourths``, ``7 hundredths``) are caught by their ending."""

MATH_WORDS = frozenset(
    {
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "log",
        "ln",
        "exp",
        "sqrt",
        "pi",
        "det",
        "max",
        "min",
        "mod",
        "gcd",
        "lcm",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "infty",
        "inf",
        "oo",
    }
)
"""Function and constant names: a word made of them is algebra, not text."""

ANSWER_MARKERS = (
    r"\banswer\s*(?:is|:|：)"  # English ("final answer ... is" is matched on its own)
    # "the result is" also opens intermediate steps ("the result is then doubled"): only before a value
    r"|\bresult\s*(?:is|:|：)(?=\s*[-$\\(0-9])"
    r"|\b(?:la\s+)?r[ée]ponse(?:\s+finale)?\s*(?:est|:|：)"  # French
    r"|\b(?:die\s+)?antwort\s*(?:ist|lautet|:|：)"  # German
    r"|\b(?:la\s+)?respuesta(?:\s+final)?\s*(?:es|:|：)"  # Spanish
    r"|\b(?:a\s+)?resposta(?:\s+final)?\s*(?:é|:|：)"  # Portuguese
    r"|\b(?:la\s+)?risposta(?:\s+finale)?\s*(?:è|:|：)"  # Italian
    r"|\bответ\s*(?::|：|—|-|равен|будет)"  # Russian
    r"|答案\s*(?:是|为|為|:|：)|答え\s*(?:は|:|：)"  # Chinese, Japanese
    r"|정답\s*(?:은|:|：)|답\s*(?::|：)"  # Korean
    r"|الإجابة\s*(?:هي)?\s*(?::|：)|उत्तर\s*(?:है)?\s*(?::|：)"  # Arabic, Hindi
)
"""The phrases that introduce a final answer ("the answer is", "Answer:") in the languages models answer in most
often; what follows the phrase is the answer. Matched case-insensitively. Words that also head a worked solution
("Solution:", "Lösung:", "解答：") are not markers: the first number after them is a step, not the answer."""

_ONES = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {word: 10 * (i + 2) for i, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_SPOKEN = re.compile(r"[A-Za-z]+(?:[\s\-]+[A-Za-z]+)*")
_COUNTED = re.compile(
    r"(?P<number>-?\$?[0-9][0-9,]*(?:\.[0-9]+)?(?:/[0-9]+)?)\s+(?P<words>[A-Za-z][A-Za-z'\-]*(?:\s+[A-Za-z][A-Za-z'\-]*){0,2})"
    r"\s*\.?"
)
_ORDINAL_FRACTION = re.compile(r"(?:th|ths)$")  # fourths, tenths, hundredths, sixteenths


def spoken_number(text: str) -> int | None:
    """The integer ``text`` spells in English words (``five``, ``twenty-one``, ``one hundred and five``,
    ``minus three``), or None if ``text`` is not exactly a number in words."""
    text = text.strip()
    if not _SPOKEN.fullmatch(text):
        return None
    tokens = re.split(r"[\s\-]+", text.lower())
    sign = 1
    if tokens[0] in ("minus", "negative") and len(tokens) > 1:
        sign, tokens = -1, tokens[1:]
    if tokens == ["zero"]:
        return 0
    total, i, previous_scale = 0, 0, None
    while i < len(tokens):
        group = _below_thousand(tokens, i)
        if group is None:
            return None
        value, i = group
        scale = _SCALES.get(tokens[i]) if i < len(tokens) else None
        if scale is None:
            if i != len(tokens):
                return None
            return sign * (total + value)
        if previous_scale is not None and scale >= previous_scale:
            return None  # "one thousand one million" is no number
        total, previous_scale, i = total + value * scale, scale, i + 1
    return sign * total


def _below_thousand(tokens: list[str], i: int) -> tuple[int, int] | None:
    """A group below a thousand starting at ``tokens[i]`` (``three hundred and twelve``) and the index after it."""
    value, start = 0, i
    if i + 1 < len(tokens) and 1 <= _ONES.get(tokens[i], 0) <= 9 and tokens[i + 1] == "hundred":
        value, i = 100 * _ONES[tokens[i]], i + 2
        if i + 1 < len(tokens) and tokens[i] == "and" and (tokens[i + 1] in _TENS or _ONES.get(tokens[i + 1], 0) > 0):
            i += 1
    if i < len(tokens) and tokens[i] in _TENS:
        value, i = value + _TENS[tokens[i]], i + 1
        if i < len(tokens) and 1 <= _ONES.get(tokens[i], 0) <= 9:
            value, i = value + _ONES[tokens[i]], i + 1
    elif i < len(tokens) and _ONES.get(tokens[i], 0) > 0:
        value, i = value + _ONES[tokens[i]], i + 1
    return (value, i) if i > start else None


def counted_number(text: str) -> str | None:
    """The number of a number followed by up to three plain words that name what was counted (``33 eggs`` ->
    ``33``, ``42 square`` -> ``42``), or None when there are no such words or one of them qualifies or changes the
    number (``16 or more``, ``16 is not right``, ``5 thousand``, ``3 fourths``, ``5 pi``, ``2 x``)."""
    match = _COUNTED.fullmatch(text.strip())
    if match is None:
        return None
    words = [word for token in match.group("words").lower().split() for word in token.split("-")]
    for word in words:
        if len(word) < 2 or word in QUALIFIERS or word in VALUE_WORDS or word in MATH_WORDS or "n't" in word:
            return None
        if _ORDINAL_FRACTION.search(word) or any(spoken_number(form) is not None for form in _singulars(word)):
            return None  # 3 fourths, 10 tens, 5 twos
    return match.group("number")


def _singulars(word: str) -> list[str]:
    """``word`` and the singular forms it may be the plural of (``tens`` -> ``ten``, ``twenties`` -> ``twenty``)."""
    forms = [word]
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s"):
        forms.append(word[:-1])
    return forms

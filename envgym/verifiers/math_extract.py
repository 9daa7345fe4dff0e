"""Where the final answer is in a model response: ``\\boxed{}``, Minerva's "The final answer is X. I hope it is
correct.", ``#### X``, "the answer is X", and (opt-in) the last math span or the last number.

Formats are tried in order; a tuple of formats is one tier in which the answer written last wins (a model that
boxes an intermediate value and then states "The final answer is 7. I hope it is correct." means 7). Several
``\\boxed{}`` written together (``\\boxed{1}, \\boxed{2}``, ``\\boxed{1} and \\boxed{2}``) are one answer, the
list ``1, 2``; boxes separated by prose are not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Callable, Union

from envgym.verifiers.math_normalize import find_braced

FormatSpec = Union[str, Sequence[str]]
ANSWER_FORMATS: tuple[FormatSpec, ...] = (("boxed", "minerva"), "gsm8k", "answer_is")
"""The default: the last ``\\boxed{}`` or Minerva answer (whichever is written later), then ``#### x``, then
"the answer is x". These are explicit final-answer markers; a response without one has no answer."""

LENIENT_FORMATS: tuple[FormatSpec, ...] = (*ANSWER_FORMATS, ("last_math", "last_number"))
"""The default plus Math-Verify's unanchored fallback: the last math span or number, whichever comes last.
Useful for grading short answers and gold fields; in RL it rewards answers buried in prose."""

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*(\{)?")
_GSM8K = re.compile(r"####\s*(?P<answer>[^\n]+)")
# Minerva's prompt format ends every solution with this sentence; "I hope" marks where the answer stops.
_MINERVA = re.compile(r"final answer is\s*:?\s*(?P<answer>[^\n]*?)\s*\.?\s*I hope", re.IGNORECASE)
_FINAL_ANSWER_IS = re.compile(r"final answer\b(?:(?!I hope)[^\n]){0,100}?\s+is\s*:?\s*(?P<answer>[^\n]+)",
                              re.IGNORECASE)
_ANSWER_IS = re.compile(r"\banswer\s*(?:is|:)\s*:?\s*(?P<answer>[^\n]+)", re.IGNORECASE)
_MATH_SPAN = re.compile(
    r"(?<!\\)\$\$(?P<display_dollar>.+?)(?<!\\)\$\$"
    r"|(?<!\\)\\\[(?P<display_bracket>.+?)(?<!\\)\\\]"
    r"|(?<![\\\d])\$(?P<inline_dollar>(?:\\\$|[^\n$])+?)(?<!\\)\$"
    r"|(?<!\\)\\\((?P<inline_paren>(?:[^\n\\]|\\(?!\)))+?)(?<!\\)\\\)"
    r"|(?P<fraction>-?\\[dt]?frac\{-?\d+(?:[.,]\d+)?\}\{-?\d+(?:[.,]\d+)?\})",  # a bare \frac{1}{2} outside $...$
    re.DOTALL,
)
_PERCENT_AFTER = re.compile(r"\s*(?:\\?%|percent(?:age)?\b|pct\b)", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w.,\\^_{])-?[$€£¥₹]?"
    r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|[1-9]\d{0,2}(?: \d{3})+(?:\.\d+)?(?!\d)"  # 1,000.5 and 1 000
    r"|\d+(?:[.,]\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?|\.\d+)"  # 12, 2,74 (decimal comma), 2/3, .5
    r"(?:\s*(?:%|percent(?:age)?\b|pct\b))?"
)
_LABEL = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?\s*=\s*$")  # "y_2 =" just before the next box names it
_CONTINUATION = re.compile(r"\b(?:so|thus|hence|therefore|then|is|are|was|equals?|gives?|get|we|which|that|but|not)\b|=",
                           re.IGNORECASE)
_FIRST_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?")
_SHORT_ANSWER_WORDS = 4


def extract_answer(text: str, formats: Sequence[FormatSpec] = ANSWER_FORMATS) -> str | None:
    """The final answer in a model response, or None if there is none.

    Only the text after the last ``</think>`` is searched (an unclosed ``<think>`` means no answer yet).
    ``formats`` are tried in order; a tuple of format names is one tier where the answer written last wins.
    Names: ``"boxed"`` (the last ``\\boxed{}``/``\\fbox{}``, braces matched; adjacent boxes form one list),
    ``"minerva"`` ("The final answer is X. I hope it is correct."), ``"gsm8k"`` (the last ``#### x``),
    ``"answer_is"`` ("final answer: ... is x", "the answer is x", "Answer: x"), ``"last_math"`` (the last
    ``$..$``, ``$$..$$``, ``\\(..\\)`` or ``\\[..\\]``), ``"last_number"`` (the last number). See
    ``ANSWER_FORMATS`` (the default) and ``LENIENT_FORMATS``.
    """
    tiers = [(spec,) if isinstance(spec, str) else tuple(spec) for spec in formats]
    unknown = {name for tier in tiers for name in tier} - set(_EXTRACTORS)
    if unknown:
        raise ValueError(f"unknown answer formats {sorted(unknown)}; known: {sorted(_EXTRACTORS)}")
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    elif "<think>" in text:
        return None
    for tier in tiers:
        found = [match for name in tier if (match := _EXTRACTORS[name](text)) is not None]
        if found:
            return max(found, key=lambda match: match[1])[0]
    return None


Match = tuple[str, int]
"""An extracted answer and the position in the text where it ends (the later one wins within a tier)."""


def _boxes(text: str) -> list[tuple[str, int, int]]:
    """Every ``\\boxed{...}`` as ``(content, start, end)``, braces matched."""
    boxes = []
    for match in _BOXED.finditer(text):
        if match.group(1):
            found = find_braced(text, match.end() - 1)
            if found is not None:
                boxes.append((found[0].strip(), match.start(), found[1]))
        else:  # \boxed 5
            token = re.match(r"\s*([^\s$]+)", text[match.end():])
            if token:
                boxes.append((token.group(1), match.start(), match.end() + token.end()))
    return boxes


def _joins(between: str) -> bool:
    """Whether the text between two answers joins them into one list: only punctuation, math delimiters and
    spacing, or a short phrase with "and"/"or" ("\\quad \\text{and} \\quad", "papers and") that does not go
    on with the argument ("and hence the area is" separates an intermediate result from the answer)."""
    between = _LABEL.sub("", between.strip())
    stripped = re.sub(r"\\(?:quad|qquad|text|[()\[\]$,;!: ])|[{}$]", " ", between)
    if not re.search(r"[A-Za-z]", stripped):
        return True
    return (len(stripped) <= 40 and re.search(r"\b(?:and|or)\b", stripped, re.IGNORECASE) is not None
            and _CONTINUATION.search(stripped) is None)


def _grouped(items: list[tuple[str, int, int]], text: str) -> Match | None:
    """The last item and the items before it that ``_joins`` to it, as one comma-separated answer."""
    if not items:
        return None
    group = [items[-1]]
    for item in reversed(items[:-1]):
        if item[2] > group[0][1] or not _joins(text[item[2] : group[0][1]]):
            break
        group.insert(0, item)
    contents = list(dict.fromkeys(content for content, _, _ in group if content))  # \boxed{3} \boxed{3} is 3
    if not contents:
        return None
    return ", ".join(contents), group[-1][2]


def _extract_boxed(text: str) -> Match | None:
    return _grouped(_boxes(text), text)


def _math_spans(text: str) -> list[tuple[str, int, int]]:
    spans = []
    for match in _MATH_SPAN.finditer(text):
        content = next(group for group in match.groups() if group is not None).strip()
        percent = _PERCENT_AFTER.match(text, match.end())
        end = match.end()
        if percent and "%" not in content[-2:]:
            content, end = content + "\\%", percent.end()
        if content:
            spans.append((content, match.start(), end))
    return spans


def _answer_value(rest: str) -> str | None:
    """The answer at the start of ``rest`` (the text after "the answer is"): its math span (and those joined
    to it), else the words up to the end of the sentence, else the first number in them."""
    rest = re.sub(r'^(?:\s|\*|\\?")+', "", rest)
    span = _MATH_SPAN.search(rest)
    if span is not None and span.start() <= 50:
        spans = [s for s in _math_spans(rest) if s[1] >= span.start()]
        grouped = _grouped_forward(spans, rest)
        if grouped:
            return grouped
    sentence = re.split(r"\.(?:\s|$)|\n|\s+I hope\b", rest, maxsplit=1)[0].strip().strip('*"').rstrip(".").strip()
    if not sentence:
        return None
    if len(sentence.split()) <= _SHORT_ANSWER_WORDS or not re.search(r"\d", sentence):
        return sentence
    number = _FIRST_NUMBER.search(sentence)
    return number.group() if number else sentence


def _grouped_forward(spans: list[tuple[str, int, int]], text: str) -> str | None:
    """The first span and those after it that ``_joins`` to it ("$1$, $2$ and $3$")."""
    if not spans:
        return None
    group = [spans[0]]
    for span in spans[1:]:
        if not _joins(text[group[-1][2] : span[1]]):
            break
        group.append(span)
    return ", ".join(content for content, _, _ in group)


def _extract_minerva(text: str) -> Match | None:
    matches = list(_MINERVA.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    answer = _answer_value(last.group("answer"))
    return (answer, last.end()) if answer else None


def _extract_gsm8k(text: str) -> Match | None:
    matches = list(_GSM8K.finditer(text))
    return (matches[-1].group("answer").strip(), matches[-1].end()) if matches else None


def _extract_answer_is(text: str) -> Match | None:
    matches = list(_FINAL_ANSWER_IS.finditer(text)) or list(_ANSWER_IS.finditer(text))
    for match in reversed(matches):
        answer = _answer_value(match.group("answer"))
        if answer:
            return answer, match.end()
    return None


def _extract_last_math(text: str) -> Match | None:
    return _grouped(_math_spans(text), text)


def _extract_last_number(text: str) -> Match | None:
    numbers = list(_NUMBER.finditer(text))
    if not numbers:
        return None
    last = numbers[-1]
    return last.group().strip(), last.end()


_EXTRACTORS: dict[str, Callable[[str], Match | None]] = {
    "boxed": _extract_boxed,
    "minerva": _extract_minerva,
    "gsm8k": _extract_gsm8k,
    "answer_is": _extract_answer_is,
    "last_math": _extract_last_math,
    "last_number": _extract_last_number,
}

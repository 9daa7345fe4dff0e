"""Where the final answer is in a model response: ``\\boxed{}``, Minerva's "The final answer is X. I hope it is
correct.", ``#### X``, ``<answer>X</answer>``, "the answer is X" (also "the result is X", "答案：X", "Ответ: X" and
the like in other languages), the last display math, a response that is nothing but its answer, and (opt-in) the
last math span or the last number.

Formats are tried in order; a tuple of formats is one tier in which the answer written last wins (a model that
boxes an intermediate value and then states "The final answer is 7. I hope it is correct." means 7). Several
``\\boxed{}`` written together (``\\boxed{1}, \\boxed{2}``, ``\\boxed{1} and \\boxed{2}``, ``\\boxed{3} or maybe
\\boxed{4}``) are one answer, the list ``1, 2``; boxes separated by prose are not (the later one revises the
earlier). Extraction is linear in the response and reads at most its last ``MAX_SCAN_CHARS`` characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from envgym.verifiers.math_normalize import END_OF_TURN
from envgym.verifiers.math_words import ANSWER_MARKERS, counted_number

FormatSpec = str | Sequence[str]
MARKED_FORMATS: tuple[FormatSpec, ...] = (("boxed", "minerva"), "gsm8k", ("answer_tag", "answer_is"))
"""Explicit final-answer markers: the last ``\\boxed{}`` or Minerva answer (whichever is written later), then
``#### x``, then an ``<answer>`` tag or "the answer is x" (the later)."""

ANSWER_FORMATS: tuple[FormatSpec, ...] = (*MARKED_FORMATS, ("display_math", "whole"))
"""The default: the explicit markers, then the last display math (``\\[x\\]``, ``$$x$$``) of a response that
has none, or the whole response when it is nothing but an answer (``$\\log_2 8 = 3$``, ``42``, ``33 eggs.``).
A response with none of these has no answer."""

STRICT_FORMATS: tuple[FormatSpec, ...] = ("boxed",)
"""Only ``\\boxed{}``, the format the math envs' prompts ask for: for training where following the format is part
of the reward (an answer in any other form is no answer)."""

LENIENT_FORMATS: tuple[FormatSpec, ...] = (*MARKED_FORMATS, ("display_math", "last_math", "last_number"))
"""The markers, then Math-Verify's unanchored fallback: the last math span or number, whichever comes last.
Useful for grading short answers and gold fields; in RL it rewards answers buried in prose."""

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*(\{)?")
_GSM8K = re.compile(r"####\s*(?P<answer>[^\n]+)")
# Minerva's prompt format ends every solution with this sentence; "I hope" marks where the answer stops.
_MINERVA = re.compile(r"final answer is\s*:?\s*(?P<answer>[^\n]{0,1000}?)\s*\.?\s*I hope", re.IGNORECASE)
_MINERVA_START = re.compile(r"final answer is", re.IGNORECASE)
_MINERVA_TRIES = 3
# Markers only (the answer is the rest of the line), so that a later marker on the same line is found too:
# "The result is $3$, so the answer is $4$." means 4.
_FINAL_ANSWER_IS = re.compile(r"final answer\b(?:(?!I hope)[^\n]){0,100}?\s+is\s*:?\s*", re.IGNORECASE)
_ANSWER_IS = re.compile(rf"(?:{ANSWER_MARKERS})\s*[:：]?\s*", re.IGNORECASE)
# A response that is nothing but its answer: one math span, or a number and what it counts ("33 eggs.").
_WHOLE_NUMBER = re.compile(r"-?\$?[0-9][0-9,]*(?:\.[0-9]+)?(?:/[0-9]+)?%?")
_MAX_WHOLE_CHARS = 200
# A bare \frac{1}{2} outside any math span is an answer too (digits only, so the match is short).
_BARE_FRACTION = re.compile(r"-?\\[dt]?frac\{-?\d+(?:[.,]\d+)?\}\{-?\d+(?:[.,]\d+)?\}")
# Math delimiters and line ends, found in one pass; an escaped dollar (\$) is text.
_DELIMITER = re.compile(r"(?<!\\)(?:\$\$|\$|\\\[|\\\]|\\\(|\\\))|\n")
_CLOSER = {"$$": "$$", "\\[": "\\]", "$": "$", "\\(": "\\)"}
_DISPLAY = ("$$", "\\[")
_PERCENT_AFTER = re.compile(r"\s*(?:\\?%|percent(?:age)?\b|pct\b)", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w.,\\^_{])-?[$€£¥₹]?"
    r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|[1-9]\d{0,2}(?: \d{3})+(?:\.\d+)?(?!\d)"  # 1,000.5 and 1 000
    r"|\d+(?:[.,]\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?|\.\d+)"  # 12, 2,74 (decimal comma), 2/3, .5
    r"(?:\s*(?:%|percent(?:age)?\b|pct\b))?"
)
_LABEL = re.compile(r"[A-Za-z](?:_\{?\w+\}?)?\s*=\s*$")  # "y_2 =" just before the next box names it
_CONTINUATION = re.compile(
    r"\b(?:so|thus|hence|therefore|then|is|are|was|equals?|gives?|get|we|which|that|but|not)\b|=", re.IGNORECASE
)
_FIRST_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?")
_SHORT_ANSWER_WORDS = 4


MAX_SCAN_CHARS = 20_000
"""Only the last this-many characters of a response (after ``</think>``) are searched for its answer: the final
answer is at the end, and the bound makes extraction cost the same for a 100 KB response as for a 20 KB one."""

_MAX_PHRASE_CHARS = 1000  # how far after "the answer is" / "final answer is" the answer may run


def extract_answer(text: str, formats: Sequence[FormatSpec] = ANSWER_FORMATS) -> str | None:
    """The final answer in a model response, or None if there is none.

    Only the text after the last ``</think>`` and before an end-of-turn token is searched (an unclosed
    ``<think>`` means no answer yet, except an ``<answer>`` tag after it), and of it only the last
    ``MAX_SCAN_CHARS`` characters; every extractor is linear in that text, so no response can
    make extraction slow. ``formats`` are tried in order; a tuple of format names is one tier where the answer
    written last wins. Names: ``"boxed"`` (the last ``\\boxed{}``/``\\fbox{}``, braces matched; adjacent boxes
    form one list), ``"minerva"`` ("The final answer is X. I hope it is correct."), ``"gsm8k"`` (the last
    ``#### x``), ``"answer_tag"`` (the last ``<answer>x</answer>``), ``"answer_is"`` ("final answer: ... is x",
    "the answer is x", "Answer: x", "the result is x", the same in other languages: ``ANSWER_MARKERS``),
    ``"display_math"`` (the last ``$$..$$`` or ``\\[..\\]``), ``"whole"`` (a response that is nothing but its
    answer: one math span or a number, possibly with what it counts), ``"last_math"``
    (the last ``$..$``, ``$$..$$``, ``\\(..\\)`` or ``\\[..\\]``), ``"last_number"`` (the last number). See
    ``ANSWER_FORMATS`` (the default), ``STRICT_FORMATS`` and ``LENIENT_FORMATS``.
    """
    tiers = [(spec,) if isinstance(spec, str) else tuple(spec) for spec in formats]
    unknown = {name for tier in tiers for name in tier} - set(_EXTRACTORS)
    if unknown:
        raise ValueError(f"unknown answer formats {sorted(unknown)}; known: {sorted(_EXTRACTORS)}")
    body = final_text(text)
    if body is None:
        # An unclosed <think> has no answer yet, except one stated in an <answer> tag after it.
        if not any("answer_tag" in tier for tier in tiers):
            return None
        found = _extract_answer_tag(_after_last_think(text))
        return found[0] if found else None
    text = body
    for tier in tiers:
        found = [match for name in tier if (match := _EXTRACTORS[name](text)) is not None]
        if found:
            return max(found, key=lambda match: match[1])[0]
    return None


def final_text(text: str) -> str | None:
    """The part of a response that may hold its final answer: before the first end-of-turn token
    (``<|im_end|>``, ``<|eot_id|>``, ``</s>``: nothing after it was generated as the answer), after the last
    ``</think>``, at most the last ``MAX_SCAN_CHARS`` characters; None while a ``<think>`` is still open."""
    text = END_OF_TURN.split(text, maxsplit=1)[0]
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    if "<think>" in text:  # opened and never closed, also after an earlier thought was closed
        return None
    return text[-MAX_SCAN_CHARS:]


def _after_last_think(text: str) -> str:
    """The text after the last ``<think>`` (before any end-of-turn token), its last ``MAX_SCAN_CHARS`` characters."""
    return END_OF_TURN.split(text, maxsplit=1)[0].rsplit("<think>", 1)[-1][-MAX_SCAN_CHARS:]


Match = tuple[str, int]
"""An extracted answer and the position in the text where it ends (the later one wins within a tier)."""


def brace_pairs(text: str) -> dict[int, int]:
    """For every ``{`` of ``text`` that is closed, the index of its ``}`` (escaped braces do not count); one
    pass, so that finding many boxes never rescans the text."""
    pairs, stack = {}, []
    for i, char in enumerate(text):
        if char in "{}" and i > 0 and text[i - 1] == "\\":
            continue
        if char == "{":
            stack.append(i)
        elif char == "}" and stack:
            pairs[stack.pop()] = i
    return pairs


def _boxes(text: str) -> list[tuple[str, int, int]]:
    """Every ``\\boxed{...}`` as ``(content, start, end)``, braces matched."""
    boxes, pairs = [], None
    for match in _BOXED.finditer(text):
        if match.group(1):
            pairs = brace_pairs(text) if pairs is None else pairs
            close = pairs.get(match.end() - 1)
            if close is not None:
                boxes.append((text[match.end() : close].strip(), match.start(), close + 1))
        else:  # \boxed 5
            token = _UNBRACED_BOX.match(text, match.end())
            if token:
                boxes.append((token.group(1), match.start(), token.end()))
    return boxes


_UNBRACED_BOX = re.compile(r"\s*([^\s$]{1,100})")
# A hedge between two answers makes them one list of candidates (which never equals a single value).
_HEDGES = re.compile(r"\b(?:or|alternatively|otherwise|maybe|perhaps|possibly)\b", re.IGNORECASE)


def _joins(between: str) -> bool:
    """Whether the text between two answers joins them into one list: only punctuation, math delimiters and
    spacing, or a short phrase with "and", "or" or a hedge ("\\quad \\text{and} \\quad", "papers and",
    "or maybe") that does not go on with the argument ("and hence the area is" separates an intermediate result
    from the answer)."""
    between = _LABEL.sub("", between.strip())
    stripped = re.sub(r"\\(?:quad|qquad|text|[()\[\]$,;!: ])|[{}$]", " ", between)
    if not re.search(r"[A-Za-z]", stripped):
        return True
    if len(stripped) > 40 or _CONTINUATION.search(stripped) is not None:
        return False
    return re.search(r"\band\b", stripped, re.IGNORECASE) is not None or _HEDGES.search(stripped) is not None


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


def _delimited_spans(text: str) -> list[tuple[str, int, int, bool]]:
    """Every ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]`` as ``(content, start, end, display)``, in one pass
    over the delimiters (inline math never spans lines; an unclosed span is not math)."""
    spans: list[tuple[str, int, int, bool]] = []
    opened: tuple[str, int, int] | None = None  # (delimiter, start, content start)
    for token in _DELIMITER.finditer(text):
        delimiter, position = token.group(), token.start()
        if delimiter == "\n":
            if opened is not None and opened[0] not in _DISPLAY:
                opened = None
            continue
        if opened is not None:
            kind, start, content_start = opened
            closes = delimiter == _CLOSER[kind] or (kind == "$" and delimiter == "$$")
            if not closes:
                continue
            content = text[content_start:position].strip()
            if content:
                spans.append((content, start, position + len(_CLOSER[kind]), kind in _DISPLAY))
            opened = None
            if kind == "$" and delimiter == "$$":  # "$a$$b$": the second dollar opens the next span
                opened = ("$", position + 1, position + 2)
            continue
        if delimiter in _CLOSER and not (delimiter == "$" and position > 0 and text[position - 1].isdigit()):
            opened = (delimiter, position, token.end())
    return spans


def _math_spans(text: str, display_only: bool = False) -> list[tuple[str, int, int]]:
    spans = [
        (content, start, end) for content, start, end, display in _delimited_spans(text) if display or not display_only
    ]
    if not display_only:
        inside = iter(spans)
        covered = next(inside, None)
        bare = []
        for match in _BARE_FRACTION.finditer(text):
            while covered is not None and covered[2] <= match.start():
                covered = next(inside, None)
            if covered is None or match.end() <= covered[1]:
                bare.append((match.group(), match.start(), match.end()))
        spans = sorted(spans + bare, key=lambda span: span[1])
    found = []
    for content, start, end in spans:
        percent = _PERCENT_AFTER.match(text, end)
        if percent and "%" not in content[-2:]:
            content, end = content + "\\%", percent.end()
        found.append((content, start, end))
    return found


def _answer_value(rest: str) -> str | None:
    """The answer at the start of ``rest`` (the text after "the answer is"): its math span (and those joined
    to it), else the words up to the end of the sentence, else the first number in them."""
    rest = re.sub(r'^(?:\s|\*|\\?")+', "", rest[:_MAX_PHRASE_CHARS])
    spans = _math_spans(rest)
    if spans and spans[0][1] <= 50:
        grouped = _grouped_forward(spans, rest)
        if grouped:
            return grouped
    sentence = re.split(r"\.(?:\s|$)|。|\n|\s+I hope\b", rest, maxsplit=1)[0].strip().strip('*"').rstrip(".").strip()
    if not sentence:
        return None
    counted = counted_number(sentence)
    if counted is not None:
        return counted  # "the answer is 18 apples": the number of what was counted
    if len(sentence.split()) <= _SHORT_ANSWER_WORDS or not re.search(r"\d", sentence):
        return sentence
    if not re.search(r"[^\W\d_]", sentence):  # no letters in any script: math ("(35 + 70 = 105)"), not prose
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
    # Only the last few "final answer is" can be the final answer: matching the sentence from each of thousands
    # would rescan the line thousands of times.
    starts = [match.start() for match in _MINERVA_START.finditer(text)]
    for start in reversed(starts[-_MINERVA_TRIES:]):
        found = _MINERVA.match(text, start)
        if found is not None:
            answer = _answer_value(found.group("answer"))
            return (answer, found.end()) if answer else None
    return None


def _extract_gsm8k(text: str) -> Match | None:
    last = None
    for last in _GSM8K.finditer(text):  # noqa: B007 -- keeps the last match
        pass
    return (last.group("answer").strip(), last.end()) if last else None


def _extract_answer_tag(text: str) -> Match | None:
    end = text.rfind("</answer>")
    start = text.rfind("<answer>", 0, end) if end >= 0 else -1
    if start < 0:
        return None
    content = text[start + len("<answer>") : end].strip()
    return (content, end + len("</answer>")) if content else None


def _extract_answer_is(text: str) -> Match | None:
    markers = list(_FINAL_ANSWER_IS.finditer(text)) or list(_ANSWER_IS.finditer(text))
    for marker in reversed(markers):
        line_end = text.find("\n", marker.end())
        line_end = len(text) if line_end < 0 else line_end
        answer = _answer_value(text[marker.end() : line_end])
        if answer:
            return answer, line_end
    return None


def _extract_display_math(text: str) -> Match | None:
    return _grouped(_math_spans(text, display_only=True), text)


def _extract_last_math(text: str) -> Match | None:
    return _grouped(_math_spans(text), text)


def _extract_whole(text: str) -> Match | None:
    """The response itself when it is nothing but an answer: one math span (``$\\log_2 8 = 3$``) or a number,
    possibly with what it counts (``33 eggs.``); trailing full stops do not count."""
    stripped = text.strip()
    if len(stripped) > _MAX_WHOLE_CHARS:
        return None
    core = stripped.rstrip(".。").strip()
    spans = _delimited_spans(core)
    if len(spans) == 1 and spans[0][1] == 0 and spans[0][2] == len(core):
        return spans[0][0], len(text)
    if _WHOLE_NUMBER.fullmatch(core):
        return core, len(text)
    counted = counted_number(core)
    return (counted, len(text)) if counted is not None else None


def _extract_last_number(text: str) -> Match | None:
    last = None
    for last in _NUMBER.finditer(text):  # noqa: B007 -- keeps the last match
        pass
    return (last.group().strip(), last.end()) if last else None


_EXTRACTORS: dict[str, Callable[[str], Match | None]] = {
    "boxed": _extract_boxed,
    "minerva": _extract_minerva,
    "gsm8k": _extract_gsm8k,
    "answer_tag": _extract_answer_tag,
    "answer_is": _extract_answer_is,
    "display_math": _extract_display_math,
    "last_math": _extract_last_math,
    "last_number": _extract_last_number,
    "whole": _extract_whole,
}

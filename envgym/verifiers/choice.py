"""Multiple-choice letters and numeric answers with a tolerance.

``extract_choice`` finds the letter a response commits to, in its common phrasings: an explicit "the answer is
(B)" / "Answer: B" (or "答案：B", "Réponse : B", "Ответ: B" and the other markers of
:data:`envgym.verifiers.math_words.ANSWER_MARKERS`) first, then a letter named as an option ("Option C is
correct"), then a letter marked alone (``(B)``, ``B)`` at the start of a line, ``**B**``, ``**B.**``,
``**B. 42**``, ``\\boxed{B}``, ``B。`` opening the response), then a response that is just a letter. A
letter inside ordinary words ("A good question") never counts, and a hedge never commits: "the answer is A or
B", a response that marks two different letters, ``\\boxed{A}`` and later ``**C**`` have no answer.
"""

from __future__ import annotations

import math
import re

from envgym.verifiers.math_words import ANSWER_MARKERS

# What may follow "the answer is" before the letter: quotes, emphasis, brackets, "option"/"choice".
_EXPLICIT = re.compile(
    rf"(?:\b(?:choice|option)\s*(?:is|:|：)|{ANSWER_MARKERS})\s*[:：]?(?P<rest>[^\n]{{0,80}})", re.IGNORECASE
)
# What may stand between "the answer is" and the letter: punctuation, "option", and words that only insist
# ("for sure D", "definitely D"); a hedge ("A or B") is caught because both letters are in the run.
_COMMITTED_RUN = re.compile(
    r"(?:[\s*\"'`(\[{}).:,/：（）【】。]|\\boxed\{|\\text\{|\b(?:option|choice|or|and)\b"
    r"|\b(?:for sure|definitely|clearly|certainly|surely|obviously|indeed)\b|\b[A-Za-z]\b)*",
    re.IGNORECASE,
)
_NAMED = re.compile(r"\b(?i:option|choice)\s+\(?([A-Z])\)?(?![A-Za-z])")  # "Option C is correct."
# A bold letter may carry its option's text after a ")", "." or ":" (**C. 42**), never after a plain space
# (**A good question**).
_MARKED = re.compile(
    r"\(([A-Z])\)|\*\*\s*\(?([A-Z])\)?[.:]?\s*\*\*|\*\*\s*\(?([A-Z])(?:\)|[.:])\s+[^*\n]{1,80}\*\*"
    r"|\\boxed\{\s*(?:\\text\{)?\(?([A-Z])\)?\}?\s*\}|^\s*([A-Z])\)|\A\s*\(?([A-Z])\)?\s*。",
    re.MULTILINE,
)


def extract_choice(text: str, letters: str = "ABCDE") -> str | None:
    """The chosen letter (upper case) among ``letters``, or None if the response commits to none or to several."""
    if not letters.isalpha():
        raise ValueError(f"letters must be letters, e.g. 'ABCD', got {letters!r}")
    allowed = set(letters.upper())
    explicit = list(_EXPLICIT.finditer(text))
    if explicit:
        found = _letters_in_run(explicit[-1].group("rest"))
        if found:
            return found.pop() if len(found) == 1 and found <= allowed else None
    named = {match.group(1) for match in _NAMED.finditer(text)}
    if named:
        return named.pop() if len(named) == 1 and named <= allowed else None
    marked = {next(group for group in match.groups() if group) for match in _MARKED.finditer(text)} & allowed
    if marked:
        return marked.pop() if len(marked) == 1 else None
    bare = re.fullmatch(r"\s*\(?([A-Za-z])[\).:]?\s*", text)
    return bare.group(1).upper() if bare and bare.group(1).upper() in allowed else None


def _letters_in_run(rest: str) -> set[str]:
    """The letters at the start of ``rest`` before any other word ("(B) because" -> {B}; "A or B" -> {A, B});
    a lower-case letter counts only when it stands alone ("Answer: b", not "the answer is a prime")."""
    run = _COMMITTED_RUN.match(rest).group()
    candidates = re.findall(r"(?<![A-Za-z\\])([A-Za-z])(?![A-Za-z])", re.sub(r"\\(?:boxed|text)", " ", run))
    words_after = rest[len(run) :].strip()
    found = set()
    for letter in candidates:
        if letter.isupper() or (not words_after and len(candidates) == 1):
            found.add(letter.upper())
    return found


def choice_correct(response: str, gold: str, letters: str = "ABCDE") -> float:
    """1.0 if the response's chosen letter is ``gold``, else 0.0."""
    return float(extract_choice(response, letters) == gold.strip().strip("()").upper())


def numeric_close(prediction: str | float, gold: str | float, *, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Whether two numbers agree within a tolerance (strings may use thousands separators); False for
    anything that is not a number, NaN or an infinity."""
    try:
        a, b = (float(str(x).replace(",", "").strip()) for x in (prediction, gold))
    except ValueError:
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)

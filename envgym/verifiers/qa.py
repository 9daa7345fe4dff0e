"""Short-answer QA scoring: SQuAD's normalization, exact match and token F1, against several golds.

Normalization (as in the official SQuAD v1.1 script): lower-case, drop punctuation, drop the articles
a/an/the, collapse whitespace. With several gold answers the best score over them counts.

Token F1 differs from SQuAD's on purpose: it gives partial credit to *one* answer that is part of the gold,
never to several answers at once. With SQuAD's F1, a reply listing ``k`` candidates of the gold's length, one of
them right, earns ``2 / (k + 1)`` (0.67 for two), more than the ``1 / k`` an honest single guess earns on
average, so a policy learns to hedge. Here a prediction scores 0 against a gold when

- it is longer than the gold (in normalized tokens): every extra token could be another candidate;
- it separates items as a list does (``,`` ``;`` ``/`` ``|`` ``&`` a line break, or the words ``or``, ``and``,
  ``nor``, ``either``, ``and/or``) and the gold has no such separator.

So a shorter part of the gold still earns its F1 (``Barack Obama`` for ``President Barack Hussein Obama``),
and listing every name of the right kind earns nothing.
"""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Iterable

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LIST_SEPARATORS = re.compile(r"[,;/|&\n]|\b(?:or|and|nor|either)\b", re.IGNORECASE)


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _golds(golds: str | Iterable[str]) -> list[str]:
    golds = [golds] if isinstance(golds, str) else list(golds)
    if not golds or not all(isinstance(g, str) for g in golds):
        raise ValueError(f"golds must be a string or a non-empty list of strings, got {golds!r}")
    return golds


def exact_match(prediction: str, golds: str | Iterable[str]) -> float:
    """1.0 if the normalized prediction equals any normalized gold, else 0.0."""
    predicted = normalize_answer(prediction)
    return float(any(predicted == normalize_answer(gold) for gold in _golds(golds)))


def list_separators(text: str) -> set[str]:
    """The list separators in ``text`` (lower-cased words, or the characters themselves)."""
    return {separator.lower() for separator in _LIST_SEPARATORS.findall(text)}


def is_candidate_list(prediction: str, gold: str) -> bool:
    """Whether ``prediction`` separates items the way a list does where ``gold`` does not."""
    return bool(list_separators(prediction) - list_separators(gold))


def token_f1(prediction: str, golds: str | Iterable[str]) -> float:
    """The best token-level F1 between the normalized prediction and any gold (bag-of-tokens overlap), where a
    prediction longer than the gold or listing candidates scores 0 against it (see the module docstring)."""
    golds = _golds(golds)
    predicted = normalize_answer(prediction).split()
    best = 0.0
    for gold in golds:
        expected = normalize_answer(gold).split()
        if not predicted or not expected:
            best = max(best, float(predicted == expected))
            continue
        if len(predicted) > len(expected) or is_candidate_list(prediction, gold):
            continue
        common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
        if common:
            precision, recall = common / len(predicted), common / len(expected)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best

"""The library of string functions that ``strings/Compose-v0`` composes, and the split of their pairs.

Every function is deterministic and total on ASCII letters (the only characters inputs and outputs hold), and
none is the identity on every input, so a composition changes its input (the env re-draws inputs where one does
not). ``lowercase`` is left out on purpose: inputs are lower case, so it would be the identity at depth 1.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

import numpy as np

VOWELS = set("aeiouAEIOU")


@dataclasses.dataclass(frozen=True)
class StringFunction:
    """One named transformation and the sentence that defines it in a prompt."""

    name: str
    definition: str
    apply: Callable[[str], str]


def _shift(ch: str, by: int) -> str:
    base = ord("a") if ch.islower() else ord("A")
    return chr(base + (ord(ch) - base + by) % 26)


def _atbash(ch: str) -> str:
    base = ord("a") if ch.islower() else ord("A")
    return chr(base + 25 - (ord(ch) - base))


def _interleave_halves(s: str) -> str:
    half = (len(s) + 1) // 2
    first, second = s[:half], s[half:]
    return "".join(a + b for a, b in itertools.zip_longest(first, second, fillvalue=""))


def _swap_pairs(s: str) -> str:
    return "".join(s[i + 1] + s[i] if i + 1 < len(s) else s[i] for i in range(0, len(s), 2))


FUNCTIONS: tuple[StringFunction, ...] = (
    StringFunction("reverse", "reverse the order of the characters", lambda s: s[::-1]),
    StringFunction("uppercase", "make every letter upper case", str.upper),
    StringFunction("swapcase", "make lower-case letters upper case and upper-case letters lower case", str.swapcase),
    StringFunction(
        "rotate_left_2",
        "move the first two characters to the end (a string shorter than 2 is unchanged)",
        lambda s: s[2:] + s[:2] if len(s) >= 2 else s,
    ),
    StringFunction("rotate_right_1", "move the last character to the front", lambda s: s[-1:] + s[:-1]),
    StringFunction(
        "remove_vowels",
        "delete every vowel (a, e, i, o, u in either case)",
        lambda s: "".join(ch for ch in s if ch not in VOWELS),
    ),
    StringFunction(
        "duplicate_each", "write every character twice in place (abc -> aabbcc)", lambda s: "".join(ch * 2 for ch in s)
    ),
    StringFunction(
        "caesar_1",
        "replace every letter by the next one in the alphabet, z -> a, keeping its case",
        lambda s: "".join(_shift(ch, 1) for ch in s),
    ),
    StringFunction(
        "caesar_back_3",
        "replace every letter by the one three places earlier, a -> x, keeping its case",
        lambda s: "".join(_shift(ch, -3) for ch in s),
    ),
    StringFunction(
        "atbash",
        "replace every letter by its mirror in the alphabet (a <-> z, b <-> y), keeping its case",
        lambda s: "".join(_atbash(ch) for ch in s),
    ),
    StringFunction(
        "sort_chars", "sort the characters by ASCII code (upper case before lower case)", lambda s: "".join(sorted(s))
    ),
    StringFunction(
        "interleave_halves",
        "split into a first half (the longer one if the length is odd) and a second "
        "half, then alternate their characters, starting with the first half (abcde -> adbec)",
        _interleave_halves,
    ),
    StringFunction("mirror", "append the reversed string to the string (abc -> abccba)", lambda s: s + s[::-1]),
    StringFunction("double", "write the string twice (abc -> abcabc)", lambda s: s + s),
    StringFunction("drop_first", "delete the first character", lambda s: s[1:]),
    StringFunction("drop_last", "delete the last character", lambda s: s[:-1]),
    StringFunction(
        "swap_pairs", "swap the 1st and 2nd characters, the 3rd and 4th, and so on (a last odd one stays)", _swap_pairs
    ),
    StringFunction(
        "dedupe",
        "delete every character that already occurred earlier in the string (case-sensitive)",
        lambda s: "".join(ch for i, ch in enumerate(s) if ch not in s[:i]),
    ),
    StringFunction("every_other", "keep the 1st, 3rd, 5th, ... characters and delete the others", lambda s: s[::2]),
    StringFunction(
        "upper_vowels", "make every vowel upper case", lambda s: "".join(ch.upper() if ch in VOWELS else ch for ch in s)
    ),
)
BY_NAME = {function.name: function for function in FUNCTIONS}

Pair = tuple[str, str]
"""``(outer, inner)``: the composition ``outer(inner(x))``, inner applied first."""


def compose(names: list[str] | tuple[str, ...], text: str) -> str:
    """``names[0](names[1](...names[-1](text)))``: the innermost (last) function is applied first."""
    for name in reversed(names):
        text = BY_NAME[name].apply(text)
    return text


_PROBES = ("abcdefgh", "banana", "hello")


def all_pairs() -> list[Pair]:
    """Every ordered pair of two different functions, less those that undo each other on lower-case input
    (``swapcase(uppercase(x))``, ``every_other(duplicate_each(x))``): their answer would be the input itself."""
    return [
        (outer.name, inner.name)
        for outer in FUNCTIONS
        for inner in FUNCTIONS
        if outer.name != inner.name and any(compose([outer.name, inner.name], probe) != probe for probe in _PROBES)
    ]


def split_pairs(holdout_seed: int, holdout_fraction: float) -> tuple[list[Pair], list[Pair]]:
    """``(train_pairs, heldout_pairs)``: a seeded permutation of :func:`all_pairs` cut at ``holdout_fraction``.

    Deterministic in ``holdout_seed`` alone, so the train and held-out splits of one seed are disjoint by
    construction, whoever builds them and in whichever process."""
    if not 0.0 < holdout_fraction < 1.0:
        raise ValueError(f"holdout_fraction must be strictly between 0 and 1, got {holdout_fraction!r}")
    pairs = all_pairs()
    order = np.random.default_rng(holdout_seed).permutation(len(pairs))
    cut = max(1, round(holdout_fraction * len(pairs)))
    heldout = sorted(pairs[i] for i in order[:cut])
    train = sorted(pairs[i] for i in order[cut:])
    return train, heldout

"""Small Python programs generated from a seed: loops, string operations, list comprehensions, dict counting and
recursion. Their output is never computed here: :mod:`envgym.envs.simulation.code_output` runs them in the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

WORDS = [
    "banana",
    "river",
    "kettle",
    "orange",
    "puzzle",
    "lantern",
    "mirror",
    "tomato",
    "velvet",
    "garden",
    "pepper",
    "window",
    "summer",
    "cobalt",
    "marble",
    "rocket",
]


def _int(rng: np.random.Generator, low: int, high: int) -> int:
    return int(rng.integers(low, high + 1))


def _word(rng: np.random.Generator) -> str:
    return WORDS[int(rng.integers(len(WORDS)))]


def loop(rng: np.random.Generator) -> str:
    start, factor, steps, modulus = _int(rng, 1, 9), _int(rng, 2, 5), _int(rng, 3, 7), _int(rng, 11, 97)
    return (
        f"total = {start}\nfor i in range({steps}):\n    total = (total * {factor} + i) % {modulus}\n"
        f"    if total % 2 == 0:\n        total += 1\nprint(total)\n"
    )


def string_ops(rng: np.random.Generator) -> str:
    word, other, cut = _word(rng), _word(rng), _int(rng, 1, 4)
    return (
        f's = "{word}"\nt = s[::-1][:{cut + 2}].upper() + "{other}"[{cut}:]\n'
        f'print(t)\nprint(t.count("{word[0]}") + len(t))\n'
    )


def comprehension(rng: np.random.Generator) -> str:
    size, factor, modulus, divisor = _int(rng, 5, 10), _int(rng, 2, 9), _int(rng, 7, 23), _int(rng, 2, 3)
    return (
        f"xs = [i * {factor} % {modulus} for i in range({size})]\n"
        f"print([x for x in xs if x % {divisor} == 0])\nprint(sum(xs))\n"
    )


def counting(rng: np.random.Generator) -> str:
    text = " ".join(_word(rng) for _ in range(_int(rng, 2, 3)))
    top = _int(rng, 2, 4)
    return (
        f'counts = {{}}\nfor ch in "{text}":\n    if ch != " ":\n        counts[ch] = counts.get(ch, 0) + 1\n'
        f"ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))\nprint(ranked[:{top}])\n"
    )


def recursion(rng: np.random.Generator) -> str:
    first, second, depth, scale = _int(rng, 0, 3), _int(rng, 1, 4), _int(rng, 5, 12), _int(rng, 1, 3)
    return (
        f"def f(n):\n    if n == 0:\n        return {first}\n    if n == 1:\n        return {second}\n"
        f"    return f(n - 1) + {scale} * f(n - 2)\n\nprint(f({depth}))\n"
    )


GENERATORS: dict[str, Callable[[np.random.Generator], str]] = {
    "loop": loop,
    "string_ops": string_ops,
    "comprehension": comprehension,
    "counting": counting,
    "recursion": recursion,
}

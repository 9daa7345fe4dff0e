"""Noise components audited by their expectation, exactly.

A spec with ``flip`` or ``gaussian`` noise pays each play a random reward, so comparing two strategies on a few
episodes compares coin tosses. What a policy learns from is the expected reward, and noise is applied per turn
independently of what the env shows the policy, so the expectation is exact from a few noise-free plays: with one
noise component of rate p, ``E[R] = (1 - p) R(rate 0) + p R(rate 1)`` (each turn's draw is independent and the
reward is a sum over turns); with k components, the 2^k combinations of rates 0 and 1 weighted alike.
:class:`ExpectedReward` steps one env per combination in lockstep (same actions, same tasks) and returns the
expected reward; everything else (messages, ``info``, reference and wrong actions) is the noise-free env's. A
strategy that pays in expectation (padding turns that each buy a lottery ticket) is then found like any other.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping
from typing import Any

from envgym.core import Action

NOISE_SOURCES = ("flip", "gaussian")


def noise_components(reward: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [c for c in (reward or {}).get("components", []) if c["source"] in NOISE_SOURCES]


def combinations(reward: Mapping[str, Any]) -> list[tuple[float, dict[str, Any]]]:
    """``(probability, spec)`` for every combination of each noise component forced off (rate 0) or on (rate 1)."""
    noisy = [i for i, c in enumerate(reward["components"]) if c["source"] in NOISE_SOURCES]
    out = []
    for forced in itertools.product((0.0, 1.0), repeat=len(noisy)):
        spec = copy.deepcopy(dict(reward))
        weight = 1.0
        for index, rate in zip(noisy, forced):
            p = float(spec["components"][index]["rate"])
            weight *= p if rate else 1.0 - p
            spec["components"][index]["rate"] = rate
        out.append((weight, spec))
    return out


class ExpectedReward:
    """Several copies of one env, each with the noise forced off or on, stepped together; the reward is their
    weighted sum (the expectation over the noise), everything else comes from the noise-free copy."""

    def __init__(self, make: Callable[[dict[str, Any]], Any], reward: Mapping[str, Any]):
        self.parts = [(weight, make(spec)) for weight, spec in combinations(reward)]
        self.env = self.parts[0][1]  # every noise component forced off: the rewards the env and spec give

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["env"], name)

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        results = [env.reset(seed=seed, options=copy.deepcopy(options)) for _, env in self.parts]
        return results[0]

    def step(self, action: Action) -> Any:
        results = [env.step(copy.deepcopy(action)) for _, env in self.parts]
        messages, _, terminated, truncated, info = results[0]
        expected = sum(weight * float(result[1]) for (weight, _), result in zip(self.parts, results))
        info = dict(info)
        info["reward_expected_over_noise"] = [float(result[1]) for result in results]
        return messages, expected, terminated, truncated, info

    def reference_action(self) -> Any:
        return self.env.reference_action()

    def wrong_action(self) -> Any:
        return self.env.wrong_action()

    def close(self) -> None:
        for _, env in self.parts:
            env.close()

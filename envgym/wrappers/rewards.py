"""Reward shaping with named components.

Every turn's reward is the sum of ``info["reward_components"]`` (each already weighted). A shaping wrapper
adds one component and adds it to the reward, so the sum always holds and a trainer (GDPO, logging) can see
each part. An env that reports no components is treated as one component named ``"env"``.
``info["reward_weights"]`` records the weight each component was multiplied by, so a trainer that normalizes
raw components before weighting them (GDPO) can undo it; a component without an entry has weight 1.

Answer components (``per_turn=False``) are scored once per episode, on the answering turn (``info["answer_turn"]``
where a reward spec marked it, else the turn that ends the episode), and 0 on other turns: summed over turns, a
format or pattern reward would otherwise pay for padding an episode with extra turns. A failure the policy causes
(an answer it never gave, a judge reply its response broke) is recorded by :func:`record_failure` in
``info["reward_failures"]`` and scores the component's minimum; it is never dropped as an error.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, StepResult, Wrapper, action_text, reward_total


def is_answer_turn(terminated: bool, truncated: bool, info: dict[str, Any]) -> bool:
    """Whether answer components are scored on this turn: ``info["answer_turn"]`` where a reward spec decided it
    (:class:`envgym.rewards.wrapper.SelectEnvComponents`), else whether the turn ends the episode."""
    return bool(info.get("answer_turn", terminated or truncated))


def record_failure(info: dict[str, Any], component: str, reason: str) -> None:
    """Record that ``component`` scored its minimum this turn because of something the policy did
    (``info["reward_failures"]``; the trainer logs ``policy_failures``, eval counts them)."""
    info.setdefault("reward_failures", {})[component] = reason


def _components(reward: float, info: dict[str, Any]) -> dict[str, float]:
    components = info.get("reward_components")
    if components is None:
        components = {"env": float(reward)}
    info["reward_components"] = components
    return components


class RewardComponentWrapper(Wrapper):
    """Adds ``weight * score(action, messages, info)`` as the component ``name``: on every turn, or with
    ``per_turn=False`` only on the answering turn (:func:`is_answer_turn`; 0 elsewhere)."""

    name: str = "shaping"

    def __init__(self, env: Env, weight: float = 1.0, name: str | None = None, *, per_turn: bool = True):
        super().__init__(env)
        self.weight = float(weight)
        self.per_turn = per_turn
        if name is not None:
            self.name = name

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        components = _components(reward, info)
        scored = self.per_turn or is_answer_turn(terminated, truncated, info)
        value = self.weight * float(self.score(action, messages, info)) if scored else 0.0
        if self.name not in components:  # a name the env already reports mixes two weights: leave it unrecorded
            info.setdefault("reward_weights", {})[self.name] = self.weight
        components[self.name] = components.get(self.name, 0.0) + value
        return messages, reward_total(components), terminated, truncated, info

    def score(self, action: Action, messages: list[Message], info: dict[str, Any]) -> float:
        """The unweighted value of this component for one turn."""
        raise NotImplementedError


class FormatReward(RewardComponentWrapper):
    """Rewards turns that follow a required format: each tag in ``tags`` appears as ``<tag>...</tag>`` and the
    text matches ``pattern`` (``re.search``, DOTALL) when one is given. Scores 1, or ``-penalty`` when not;
    like every component, the score is then multiplied by ``weight``."""

    name = "format"

    def __init__(
        self,
        env: Env,
        *,
        tags: Sequence[str] = (),
        pattern: str | re.Pattern[str] | None = None,
        weight: float = 0.1,
        penalty: float = 0.0,
        name: str | None = None,
        per_turn: bool = True,
    ):
        if not tags and pattern is None:
            raise ValueError("FormatReward needs `tags`, a `pattern`, or both")
        super().__init__(env, weight, name, per_turn=per_turn)
        # A body without another tag of its kind: linear time on floods of unclosed tags (a lazy .*? rescans the
        # rest of the text from every opening tag, seconds for 100 KB).
        self.tag_patterns = [
            re.compile(rf"<{re.escape(t)}>(?:(?!</?{re.escape(t)}>).)*</{re.escape(t)}>", re.DOTALL) for t in tags
        ]
        self.pattern = re.compile(pattern, re.DOTALL) if isinstance(pattern, str) else pattern
        self.penalty = float(penalty)

    def score(self, action: Action, messages: list[Message], info: dict[str, Any]) -> float:
        text = action_text(action)
        ok = all(p.search(text) for p in self.tag_patterns) and (self.pattern is None or self.pattern.search(text))
        return 1.0 if ok else -self.penalty


class LengthPenalty(RewardComponentWrapper):
    """DAPO's soft overlong punishment (arXiv:2503.14476, eq. 13), per turn.

    With ``L`` the turn's length, ``L_max = max_length`` and ``L_cache = buffer``::

        0                                   if L <= L_max - L_cache
        ((L_max - L_cache) - L) / L_cache   if L_max - L_cache < L <= L_max
        -1                                  if L > L_max

    Length is counted in characters unless ``count`` (e.g. a tokenizer's ``len(tok.encode(text))``) is given.
    """

    name = "length"

    def __init__(
        self,
        env: Env,
        *,
        max_length: int,
        buffer: int,
        weight: float = 1.0,
        count: Callable[[str], int] = len,
        name: str | None = None,
        per_turn: bool = True,
    ):
        if not 0 < buffer <= max_length:
            raise ValueError(f"need 0 < buffer <= max_length, got buffer={buffer}, max_length={max_length}")
        super().__init__(env, weight, name, per_turn=per_turn)
        self.max_length, self.buffer, self.count = max_length, buffer, count

    def score(self, action: Action, messages: list[Message], info: dict[str, Any]) -> float:
        length = self.count(action_text(action))
        soft_start = self.max_length - self.buffer
        if length <= soft_start:
            return 0.0
        if length <= self.max_length:
            return (soft_start - length) / self.buffer
        return -1.0


DEFAULT_REASONING_PATTERNS = (
    r"\bwait\b",
    r"\blet me (?:check|verify|re-?check|think)\b",
    r"\bdouble[- ]check",
    r"\balternatively\b",
    r"\bverify\b",
    r"\bstep \d",
    r"\btherefore\b",
    r"\bbut\b",
)


class PatternReward(RewardComponentWrapper):
    """Rewards reasoning phrases (the "reasoning pattern reward" idea: credit for *how* the model reasons,
    not only for the answer). Scores the fraction of ``patterns`` present, counting at most ``cap`` of them."""

    name = "pattern"

    def __init__(
        self,
        env: Env,
        *,
        patterns: Iterable[str] = DEFAULT_REASONING_PATTERNS,
        cap: int | None = None,
        weight: float = 0.1,
        name: str | None = None,
        per_turn: bool = True,
    ):
        super().__init__(env, weight, name, per_turn=per_turn)
        self.patterns = [re.compile(p, re.IGNORECASE) for p in patterns]
        if not self.patterns:
            raise ValueError("PatternReward needs at least one pattern")
        self.cap = cap or len(self.patterns)

    def score(self, action: Action, messages: list[Message], info: dict[str, Any]) -> float:
        text = action_text(action)
        found = sum(1 for p in self.patterns if p.search(text))
        return min(found, self.cap) / self.cap


class RewardNoise(Wrapper):
    """Corrupts a reward component on purpose, for noisy-reward studies.

    With probability ``p`` per scored turn: ``mode="flip"`` mirrors a component value ``r`` within the component's
    range ``[low, high]``, ``low + high - r`` (``1 - r`` for the default [0, 1]; a -1 forfeit in [-1, 1] flips to
    +1, never above the top; a value outside the range is first clipped into it); ``mode="gaussian"`` adds
    ``N(0, sigma^2)``. With ``per_turn=False`` the component grades the answer and only the answering turn is
    scored (and corrupted); other turns keep their value untouched. After ``reset(seed=s)`` each turn's draw is
    seeded by ``seed``, ``s``, the turn and the response text, so noisy runs are reproducible (unseeded episodes
    draw from one RNG seeded by ``seed``). The response is in the key because the G episodes of a GRPO group share
    their reset seed: a draw by seed alone flipped a whole group at once (reversing its advantages) instead of each
    response on its own. Identical responses get the same draw, as from a deterministic noisy verifier.
    ``info["reward_noise"]`` says what was done.
    """

    def __init__(
        self,
        env: Env,
        *,
        p: float,
        mode: str = "flip",
        sigma: float = 0.5,
        component: str = "correct",
        seed: int = 0,
        low: float = 0.0,
        high: float = 1.0,
        per_turn: bool = True,
    ):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be a probability in [0, 1], got {p}")
        if mode not in ("flip", "gaussian"):
            raise ValueError(f"mode must be 'flip' or 'gaussian', got {mode!r}")
        if mode == "flip" and not (np.isfinite(low) and np.isfinite(high) and low <= high):
            raise ValueError(f"a flip mirrors values within a finite range low <= high, got [{low}, {high}]")
        super().__init__(env)
        self.p, self.mode, self.sigma, self.component, self.seed = p, mode, sigma, component, seed
        self.low, self.high, self.per_turn = float(low), float(high), per_turn
        self._rng = np.random.default_rng(seed)
        self._reset_seed: int | None = None
        self._turn = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._reset_seed, self._turn = seed, 0  # a seeded episode draws from (seed, reset seed, turn, response)
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        components = _components(reward, info)
        name = self.component if self.component in components else next(iter(components))
        rng, self._turn = self._rng, self._turn + 1
        if self._reset_seed is not None:
            key = zlib.crc32(action_text(action).encode("utf-8", "surrogatepass"))
            rng = np.random.default_rng([self.seed, self._reset_seed, self._turn, key])
        if not (self.per_turn or is_answer_turn(terminated, truncated, info)):
            return messages, reward_total(components), terminated, truncated, info
        if rng.random() < self.p:
            before = components[name]
            if self.mode == "flip":
                components[name] = self.low + self.high - min(max(before, self.low), self.high)
            else:
                components[name] = before + float(rng.normal(0.0, self.sigma))
            info["reward_noise"] = {"component": name, "before": before, "after": components[name]}
        return messages, reward_total(components), terminated, truncated, info


class RewardWeights(Wrapper):
    """Rescales named reward components (``{"format": 0.5}`` halves the format component); the reward is
    recomputed as their sum. Components not named keep weight 1."""

    def __init__(self, env: Env, weights: Mapping[str, float]):
        super().__init__(env)
        self.weights = {name: float(w) for name, w in weights.items()}

    def step(self, action: Action) -> StepResult:
        messages, reward, terminated, truncated, info = self.env.step(action)
        components = _components(reward, info)
        for name, weight in self.weights.items():
            if name in components:
                components[name] = weight * components[name]
                recorded = info.setdefault("reward_weights", {})
                recorded[name] = weight * recorded.get(name, 1.0)
        return messages, reward_total(components), terminated, truncated, info

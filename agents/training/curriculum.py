"""A curriculum over an env's difficulty levels, driven by the model's recent pass rate.

The levels are env arguments, easiest first (``{"difficulty": [1, 2, 3, 4]}`` is four levels). The curriculum
keeps a *frontier*, the hardest level unlocked so far, and a window of recent pass/fail outcomes per level:

- the frontier moves **up** one level once its last ``window`` episodes pass at a rate above ``band[1]`` (the
  model has mastered it); the new frontier needs a full window of its own before the next move, so one lucky
  batch never skips levels. It never moves down: a frontier too hard for now stays, and the pool keeps the
  easier levels that still teach something (stepping back would only replay a mastered level and climb again);
- groups are drawn uniformly from the *pool*: the levels up to the frontier whose recent pass rate lies inside
  the band (a level not yet played counts as inside), and always the frontier itself. A mastered level drops
  out of the pool, so steps are not spent on groups that all pass and carry no learning signal.

This is reasoning-gym's level-by-level curriculum (raise a level when its mean score passes a threshold) with
prime-rl's difficulty pools (drop what is too easy or too hard). An episode *passes* when its total reward is at
least ``pass_threshold``. Light: no torch; the trainer reports ``update`` outcomes after each group.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

CURRICULUM_KEYS = ("levels", "band", "window", "pass_threshold")


class LevelCurriculum:
    """Which difficulty level the next group plays (see the module docstring).

    levels: env arguments per level, easiest first; a mapping of argument names to equally long lists of values
        (``{"difficulty": [1, 2, 3]}``) or a list of argument mappings.
    band: (low, high) pass rates; the frontier moves up above ``high``; levels outside leave the pool.
    window: the recent episodes per level a pass rate is measured over (and needed before the frontier moves).
    pass_threshold: the episode reward at or above which an episode passes.
    """

    def __init__(
        self,
        levels: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
        band: Sequence[float] = (0.2, 0.8),
        window: int = 32,
        pass_threshold: float = 1.0,
    ):
        self.levels = _level_list(levels)
        if (
            len(band) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in band)
            or not 0.0 <= band[0] < band[1] <= 1.0
        ):
            raise ValueError(
                f"curriculum band must be two pass rates [low, high] with 0 <= low < high <= 1, got {band!r}"
            )
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"curriculum window must be a whole number of episodes >= 1, got {window!r}")
        if (
            isinstance(pass_threshold, bool)
            or not isinstance(pass_threshold, (int, float))
            or not math.isfinite(pass_threshold)
        ):
            raise ValueError(
                f"curriculum pass_threshold must be a finite number (an episode reward), got {pass_threshold!r}"
            )
        self.band = (float(band[0]), float(band[1]))
        self.window = window
        self.pass_threshold = float(pass_threshold)
        self.frontier = 0
        self.outcomes: list[deque[bool]] = [deque(maxlen=window) for _ in self.levels]

    @classmethod
    def from_dict(cls, data: Any, where: str = "curriculum") -> LevelCurriculum:
        """Build from a recipe's ``curriculum:`` mapping; a wrong key or value raises ``ValueError`` naming
        ``where`` and what is accepted."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be a mapping with {', '.join(CURRICULUM_KEYS)}, got {data!r}")
        unknown = sorted(set(data) - set(CURRICULUM_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown keys {unknown}; a curriculum takes {', '.join(CURRICULUM_KEYS)}")
        if "levels" not in data:
            raise ValueError(f"{where} needs levels, e.g. levels: {{difficulty: [1, 2, 3]}}")
        try:
            return cls(**dict(data))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: {error}") from None

    # --- sampling -----------------------------------------------------------------------------------
    def pass_rate(self, level: int) -> float | None:
        """The pass rate over ``level``'s recent episodes (None before it has any)."""
        outcomes = self.outcomes[level]
        return sum(outcomes) / len(outcomes) if outcomes else None

    def pool(self) -> list[int]:
        """The levels groups are drawn from: up to the frontier, pass rate inside the band, and the frontier."""
        low, high = self.band
        return [
            level
            for level in range(self.frontier + 1)
            if level == self.frontier or (rate := self.pass_rate(level)) is None or low <= rate <= high
        ]

    def draw(self, rng: np.random.Generator) -> int:
        """The level the next group plays; one draw from ``rng`` only when the pool holds more than one level."""
        pool = self.pool()
        return pool[int(rng.integers(len(pool)))] if len(pool) > 1 else pool[0]

    def update(self, level: int, rewards: Sequence[float]) -> None:
        """Record a group's episode rewards on ``level``; move the frontier up when its full window passes
        above the band."""
        self.outcomes[level].extend(reward >= self.pass_threshold for reward in rewards)
        if (
            level == self.frontier
            and self.frontier + 1 < len(self.levels)
            and len(self.outcomes[level]) == self.window
            and self.pass_rate(level) > self.band[1]
        ):
            self.frontier += 1

    # --- reporting and checkpoints --------------------------------------------------------------------
    def metrics(self, prefix: str) -> dict[str, float]:
        """``prefix/level`` (frontier index), ``prefix/pool_size``, the frontier's pass rate and its numeric
        argument values (``prefix/difficulty``)."""
        out: dict[str, float] = {f"{prefix}/level": self.frontier, f"{prefix}/pool_size": len(self.pool())}
        rate = self.pass_rate(self.frontier)
        if rate is not None:
            out[f"{prefix}/frontier_pass_rate"] = rate
        for name, value in self.levels[self.frontier].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[f"{prefix}/{name}"] = value
        return out

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps: the frontier and every level's recent outcomes."""
        return {"frontier": self.frontier, "outcomes": [list(outcomes) for outcomes in self.outcomes]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if len(state["outcomes"]) != len(self.levels):
            raise ValueError(
                f"the checkpoint's curriculum has {len(state['outcomes'])} levels, this one "
                f"{len(self.levels)}; resume with the recipe the run started with"
            )
        self.frontier = int(state["frontier"])
        self.outcomes = [deque(outcomes, maxlen=self.window) for outcomes in state["outcomes"]]


def _level_list(levels: Any) -> list[dict[str, Any]]:
    """Levels as a list of argument mappings, from either accepted form."""
    if isinstance(levels, Mapping):
        lengths = {name: len(values) if isinstance(values, (list, tuple)) else None for name, values in levels.items()}
        if not levels or None in lengths.values() or len(set(lengths.values())) != 1:
            raise ValueError(
                "levels must map argument names to equally long lists of values, e.g. "
                f"{{difficulty: [1, 2, 3]}}, got {dict(levels)!r}"
            )
        count = next(iter(lengths.values()))
        result = [{name: values[i] for name, values in levels.items()} for i in range(count)]
    elif isinstance(levels, (list, tuple)) and all(isinstance(level, Mapping) for level in levels):
        result = [dict(level) for level in levels]
    else:
        raise ValueError(
            "levels must be a mapping of argument names to lists ({difficulty: [1, 2, 3]}) or a list "
            f"of argument mappings, got {levels!r}"
        )
    if len(result) < 2:
        raise ValueError(f"a curriculum needs at least two levels, got {len(result)}")
    return result

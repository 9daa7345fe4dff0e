"""Training on a mixture of envs: each GRPO group is drawn from one env of the mixture, by weight.

Every member of a mixture is an env with its own arguments (a reward spec and a turn limit among them) and,
optionally, a :class:`~envgym.agents.training.curriculum.LevelCurriculum` over its difficulty levels. The trainer asks
:meth:`EnvMixture.draw` for each group's *source* — ``(member, level)``, level None without a curriculum — with
its seeded sampler RNG, so the draws are reproducible and a resumed run draws what the uninterrupted one would.
A recipe declares one with ``envs:`` (read by :mod:`envgym.agents.training.recipe`; docs/training.md); one ``env:``
with a ``curriculum:`` is a mixture of one member.

Light: no torch; the recipe checks run before any model is loaded.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import envgym
from envgym.agents.training.curriculum import LevelCurriculum

if TYPE_CHECKING:
    from envgym.rewards import RewardSpec

Source = tuple[int, int | None]
"""``(member index, curriculum level or None)``: which env (with which arguments) a group plays."""


@dataclasses.dataclass
class MixtureMember:
    """One env of a mixture.

    env: an env id for :func:`envgym.make`, or a factory (called with the curriculum level's arguments only;
        ``env_kwargs`` are ``make``'s).
    name: what its metrics are called (``env/<name>/reward_mean``); default the env id.
    weight: its share of the groups, relative to the other members' weights.
    env_kwargs: arguments for ``envgym.make`` (the turn limit ``max_turns`` among them), never the reward spec.
    curriculum: difficulty levels drawn by pass rate; each level's arguments are added to ``env_kwargs``.
    reward: the reward spec (:class:`~envgym.rewards.RewardSpec` or its dict form, read here once): its per-turn
        components wrap the env, its group and process components run in the trainer after the rollouts.
    """

    env: str | Callable[..., envgym.Env]
    name: str = ""
    weight: float = 1.0
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    curriculum: LevelCurriculum | None = None
    reward: RewardSpec | Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.env if isinstance(self.env, str) else getattr(self.env, "__name__", "env")
        if "reward" in self.env_kwargs:
            raise ValueError(
                f"mixture member {self.name}: the reward spec is its own argument, MixtureMember(reward=...), "
                "not one of env_kwargs"
            )
        if self.reward is not None:
            from envgym.rewards import RewardSpec

            self.reward = RewardSpec.coerce(self.reward, where=f"mixture member {self.name}: reward")
        if (
            isinstance(self.weight, bool)
            or not isinstance(self.weight, (int, float))
            or not math.isfinite(self.weight)
            or self.weight <= 0
        ):
            raise ValueError(f"mixture member {self.name}: weight must be a number > 0, got {self.weight!r}")

    def factory(self, level: int | None) -> Callable[[], envgym.Env]:
        """A zero-argument env factory for this member at curriculum ``level``."""
        extra = self.curriculum.levels[level] if level is not None and self.curriculum is not None else {}
        if isinstance(self.env, str):
            env_id, kwargs = self.env, {**self.env_kwargs, **extra}
            if self.reward is not None:
                kwargs["reward"] = self.reward  # a built spec: make does not read it again
            return lambda: envgym.make(env_id, **kwargs)
        env, reward = self.env, self.reward
        if reward is None:
            return (lambda: env(**extra)) if extra else env
        from envgym.rewards import apply_reward

        return lambda: apply_reward(env(**extra), reward)


class EnvMixture:
    """Members drawn by weight, each with an optional curriculum (see the module docstring)."""

    def __init__(self, members: Sequence[MixtureMember]):
        if not members:
            raise ValueError("a mixture needs at least one env")
        names = [member.name for member in members]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(
                f"mixture members need distinct names (metrics are named by them): {repeated} appear "
                "more than once; give each a name:"
            )
        self.members = list(members)
        weights = np.array([member.weight for member in members], dtype=float)
        self.probabilities = weights / weights.sum()

    @property
    def label(self) -> str:
        """The members' names, for titles and logs."""
        return " + ".join(member.name for member in self.members)

    def sources(self) -> list[Source]:
        """Every source a group can be drawn from."""
        return [
            (m, level)
            for m, member in enumerate(self.members)
            for level in (range(len(member.curriculum.levels)) if member.curriculum else [None])
        ]

    def draw(self, rng: np.random.Generator) -> Source:
        """The source of the next group. A member is drawn only when there are several and a level only where
        the member has a curriculum with several in its pool, so a plain single env spends no draws."""
        member = int(rng.choice(len(self.members), p=self.probabilities)) if len(self.members) > 1 else 0
        curriculum = self.members[member].curriculum
        return member, (curriculum.draw(rng) if curriculum is not None else None)

    def update(self, source: Source, rewards: Sequence[float]) -> None:
        """Tell the source's curriculum (if any) a group's episode rewards."""
        member, level = source
        curriculum = self.members[member].curriculum
        if curriculum is not None and level is not None:
            curriculum.update(level, rewards)

    def metrics(self) -> dict[str, float]:
        """Every curriculum's state: ``curriculum/<name>/level``, ``.../pool_size`` and the frontier's values."""
        out: dict[str, float] = {}
        for member in self.members:
            if member.curriculum is not None:
                out.update(member.curriculum.metrics(f"curriculum/{member.name}"))
        return out

    def state_dict(self) -> dict[str, Any]:
        """The curricula's states by member name (the draws' RNG is the trainer's and saved with it)."""
        return {member.name: member.curriculum.state_dict() for member in self.members if member.curriculum is not None}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for member in self.members:
            if member.curriculum is not None:
                if member.name not in state:
                    raise ValueError(
                        f"the checkpoint has no curriculum state for {member.name}; resume with the "
                        "recipe the run started with"
                    )
                member.curriculum.load_state_dict(state[member.name])


def summary_lines(mixture: EnvMixture, history: Sequence[Mapping[str, Any]]) -> list[str]:
    """The console's end-of-run summary per env: groups trained on, mean reward over the run and at the last
    step, and where its curriculum stands."""
    lines = []
    for member in mixture.members:
        prefix = f"env/{member.name}/" if len(mixture.members) > 1 else ""
        rewards = [m[f"{prefix}reward_mean"] for m in history if f"{prefix}reward_mean" in m]
        groups = sum(m.get(f"{prefix}groups", 0) for m in history)
        line = f"{member.name}: trained on {groups} groups"
        if rewards:
            line += f", reward mean {np.mean(rewards):.3f} over the run, {rewards[-1]:.3f} at its last step"
        if member.curriculum is not None:
            level = member.curriculum.frontier
            line += f"; curriculum level {level + 1}/{len(member.curriculum.levels)} {member.curriculum.levels[level]}"
        lines.append(line)
    return lines

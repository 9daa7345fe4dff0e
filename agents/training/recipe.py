"""Training recipes: one YAML/JSON file with the env (``env`` and ``env_kwargs``, or an ``envs:`` mixture, and a
``curriculum:``), the ``model``, a ``reward`` spec and :class:`~envgym.agents.training.config.GRPOConfig`'s fields.

:func:`read_recipe` is the one reader: ``envgym train --config``, the benchmarks and the recipe tests all read a
recipe through it, so each gets every check a user gets (env ids with "did you mean", env arguments against what
the env takes, the unsafe gate, the reward spec, each mixture entry, the GRPOConfig fields). The file's keys are
validated by :class:`RecipeEnvs` and :class:`GRPOConfig`; a mistake is one line naming the file, the key path and
what is accepted. Nothing is built or loaded.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import pydantic

from envgym.agents.training.curriculum import LevelCurriculum
from envgym.agents.training.mixture import EnvMixture, MixtureMember
from envgym.config import STRICT, BadInput, check_env, find_config, no_reward_in, read_mapping, validate


def _reward_spec(value: Any) -> Any:
    from envgym.rewards import RewardSpec

    return RewardSpec.coerce(value, where="reward")


def _curriculum(value: Any) -> LevelCurriculum:
    return LevelCurriculum.from_dict(value, "curriculum")


Reward = Annotated[Any, pydantic.AfterValidator(_reward_spec)]
"""A reward spec (docs/rewards.md), checked by :meth:`~envgym.rewards.RewardSpec.coerce` and kept built."""
Curriculum = Annotated[Any, pydantic.AfterValidator(_curriculum)]


class MixtureEntry(pydantic.BaseModel):
    """One env of an ``envs:`` mixture."""

    model_config = STRICT

    env: str
    weight: Annotated[float, pydantic.Field(gt=0, allow_inf_nan=False)] = 1.0
    env_kwargs: dict[str, Any] = {}
    reward: Reward | None = None
    curriculum: Curriculum | None = None
    name: str = ""
    """What its metrics are called (``env/<name>/reward_mean``); default the env id."""

    @pydantic.model_validator(mode="after")
    def _known_env(self) -> MixtureEntry:
        no_reward_in(self.env_kwargs, "the entry's reward:")
        first_level = self.curriculum.levels[0] if self.curriculum is not None else {}
        check_env(self.env, {**self.make_kwargs(), **first_level})
        return self

    def make_kwargs(self) -> dict[str, Any]:
        """``env_kwargs`` and the reward spec, as ``envgym.make`` takes them."""
        return {**self.env_kwargs, "reward": self.reward} if self.reward is not None else dict(self.env_kwargs)

    def member(self) -> MixtureMember:
        return MixtureMember(
            self.env,
            name=self.name,
            weight=self.weight,
            env_kwargs=dict(self.env_kwargs),
            curriculum=self.curriculum,
            reward=self.reward,
        )


class RecipeEnvs(pydantic.BaseModel):
    """A recipe's keys besides GRPOConfig's: what it trains on and with which model."""

    model_config = STRICT

    env: str | None = None
    """One env to train on (``namespace/Name-vN``)."""
    envs: Annotated[list[MixtureEntry], pydantic.Field(min_length=1)] | None = None
    """A weighted mixture of envs (each entry with its own arguments, reward and curriculum)."""
    env_kwargs: dict[str, Any] = {}
    """Arguments for ``envgym.make`` of the one env."""
    model: str | None = None
    reward: Reward | None = None
    """The reward spec of the one env (docs/rewards.md); a mixture's entries carry their own."""
    curriculum: Curriculum | None = None
    """Difficulty levels of the one env, drawn by pass rate (docs/training.md)."""

    @pydantic.model_validator(mode="after")
    def _one_env_or_a_mixture(self) -> RecipeEnvs:
        no_reward_in(self.env_kwargs, "the recipe's top-level reward:")
        if self.envs is None:
            if self.env is not None:
                first_level = self.curriculum.levels[0] if self.curriculum is not None else {}
                check_env(self.env, {**self.make_kwargs(), **first_level})
            return self
        if self.env is not None:
            raise ValueError("give env: (one env) or envs: (a mixture), not both")
        if self.curriculum is not None:
            raise ValueError("with envs:, give each entry its own curriculum: (a top-level one is for one env:)")
        if self.env_kwargs or self.reward is not None:
            raise ValueError("with envs:, put env_kwargs and reward inside each entry, not at the top level")
        return self

    def make_kwargs(self) -> dict[str, Any]:
        """What ``envgym.make`` gets for the one env: ``env_kwargs`` and the reward spec."""
        return {**self.env_kwargs, "reward": self.reward} if self.reward is not None else dict(self.env_kwargs)


@dataclasses.dataclass
class Recipe:
    """A recipe read and checked, nothing built: what :class:`~envgym.agents.training.trainer.GRPOTrainer` gets."""

    env: str | None
    """The one env's id, or None for a mixture."""
    env_kwargs: dict[str, Any]
    """The one env's arguments for ``envgym.make`` (never the reward spec: :attr:`reward`)."""
    model: str | None
    config: Any
    """The :class:`~envgym.agents.training.config.GRPOConfig`."""
    mixture: EnvMixture | None = None
    """The mixture of ``envs:``, or of the one env with its ``curriculum:``; None without either."""
    reward: Any = None
    """The one env's reward spec, read once (a :class:`~envgym.rewards.RewardSpec`), or None; a mixture's members
    carry their own (:attr:`MixtureMember.reward`)."""

    def make_kwargs(self) -> dict[str, Any]:
        """What ``envgym.make`` gets for the one env: ``env_kwargs`` and the built reward spec."""
        return {**self.env_kwargs, "reward": self.reward} if self.reward is not None else dict(self.env_kwargs)

    @property
    def label(self) -> str:
        """The env id, or the mixture's members."""
        return self.mixture.label if self.mixture is not None else str(self.env)

    @property
    def trainer_env(self) -> Any:
        """What ``GRPOTrainer`` trains on: the mixture, or the env id."""
        return self.mixture if self.mixture is not None else self.env


def read_recipe(
    source: str | Path | None = None,
    *,
    env: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Recipe:
    """Read a recipe (a path or the name of an installed one; None: flags and defaults only). ``env`` replaces
    the recipe's env or mixture and ``env_kwargs`` adds to its arguments (``--env``, ``--env-kwargs``);
    ``overrides`` that are not None replace its GRPOConfig fields (``--steps``, ``--lr``...). Raises
    :class:`~envgym.config.BadInput` with one line naming the file, the key path and what is accepted."""
    from envgym.agents.training.config import GRPOConfig

    path = find_config(source, "recipes") if source is not None else None
    where = str(path) if path is not None else "flags"
    data = read_mapping(path) if path is not None else {}
    training_keys, env_keys = set(GRPOConfig.__pydantic_fields__), set(RecipeEnvs.model_fields)
    unknown = sorted(set(data) - training_keys - env_keys)
    if unknown:
        raise BadInput(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; a recipe takes "
            f"{', '.join(sorted(env_keys))} and GRPOConfig's fields ({', '.join(sorted(training_keys))})"
        )
    chosen = {key: value for key, value in data.items() if key in env_keys}
    if env is not None:  # flags win: --env replaces the recipe's env and mixture
        chosen.pop("envs", None)
        chosen["env"] = env
    if env_kwargs:
        if chosen.get("envs") is not None:
            raise BadInput(
                f"--env-kwargs sets one env's arguments, but {where} trains on a mixture (envs:); put env_kwargs "
                "in its entries"
            )
        chosen["env_kwargs"] = {**(chosen.get("env_kwargs") or {}), **env_kwargs}
    envs = validate(RecipeEnvs, chosen, "--env-kwargs" if env_kwargs and path is None else where)
    if envs.env is None and envs.envs is None:
        raise BadInput(
            f"{path or 'the command line'} names no env: give --env ID, or a config file with a line "
            "`env: namespace/Name-v0` or an `envs:` mixture"
        )
    fields = {key: value for key, value in data.items() if key in training_keys}
    fields.update({key: value for key, value in (overrides or {}).items() if value is not None})
    config = validate(GRPOConfig, fields, where)
    if envs.envs is not None:
        mixture = _mixture([entry.member() for entry in envs.envs], where)
    elif envs.curriculum is not None:
        member = MixtureMember(
            envs.env, env_kwargs=dict(envs.env_kwargs), curriculum=envs.curriculum, reward=envs.reward
        )
        mixture = _mixture([member], where)
    else:
        mixture = None
    return Recipe(envs.env, dict(envs.env_kwargs), envs.model, config, mixture, envs.reward)


def _mixture(members: list[MixtureMember], where: str) -> EnvMixture:
    try:
        return EnvMixture(members)
    except ValueError as error:  # repeated names
        raise BadInput(f"{where}: {error}") from None

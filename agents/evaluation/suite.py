"""Eval suites: how each env is evaluated (:class:`EnvEval`), read from a YAML/JSON suite file or the command line.

Suite file::

    model: HuggingFaceTB/SmolLM2-135M-Instruct      # settings of the suite (the model it is meant for)
    defaults: {num_generations: 4, n_tasks: 8, k: [1, 2, 4], max_completion_length: 128, temperature: 0.7}
    envs:
      - env: math/Arithmetic-v0
      - {env: games/GuessNumber-v0, n_tasks: 4, env_kwargs: {high: 20, max_turns: 6}}
      - {env: math/Arithmetic-v0, reward: {components: [{name: correct, source: env}]}}

Each entry is ``defaults``, then the entry, then the command line's overrides, validated as one :class:`EnvEval`:
a wrong key or value, an unknown env id ("did you mean"), an argument the env does not take or an env registered
unsafe without ``allow_unsafe`` is one line naming the file, the entry and what is accepted, before any model loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pydantic

from envgym.agents.engines.policy import SamplingParams
from envgym.config import STRICT, BadInput, check_env, find_config, no_reward_in, read_mapping, validate


def _reward_spec(value: Any) -> Any:
    from envgym.rewards import RewardSpec

    return RewardSpec.coerce(value, where="reward")  # read once, here; every env of the run gets the built spec


class EnvEval(pydantic.BaseModel):
    """How one env is evaluated (suite ``defaults`` fill what an entry leaves out)."""

    model_config = STRICT

    env: str
    """The env id (``namespace/Name-vN``)."""
    num_generations: Annotated[int, pydantic.Field(ge=1)] = 4
    """Samples per task (a GRPO group's size, as in training)."""
    n_tasks: Annotated[int, pydantic.Field(ge=1)] = 8
    """Tasks 0..n_tasks-1 of the env's task source."""
    k: Annotated[list[int], pydantic.BeforeValidator(lambda k: [k] if isinstance(k, int) else k)] = [1]
    """The ks of pass@k and maj@k, each in 1..num_generations (one number is a list of one)."""
    max_completion_length: Annotated[int, pydantic.Field(ge=1)] = 256
    temperature: Annotated[float, pydantic.Field(ge=0)] = 0.7
    top_p: Annotated[float, pydantic.Field(gt=0, le=1)] = 1.0
    max_episode_tokens: Annotated[int, pydantic.Field(ge=1)] | None = None
    stop: list[str] = []
    template_tools: bool = False
    group: str | None = None
    """A name shared by envs reported together (a leaderboard's category: BFCL's "non-live AST"): eval adds a table
    of each group's unweighted mean pass@1 over its envs and of the groups' mean (``overall``)."""
    env_kwargs: dict[str, Any] = {}
    """Keyword arguments for ``envgym.make`` (``max_turns`` among them: the env's turn limit)."""
    reward: Annotated[Any, pydantic.AfterValidator(_reward_spec)] | None = None
    """A reward spec (docs/rewards.md; its dict form, read once into a :class:`~envgym.rewards.RewardSpec`) the env's
    reward is composed by; its per-turn components only, since group rewards belong to training. results.json
    records its dict form."""

    @pydantic.field_serializer("reward")
    def _reward_as_dict(self, reward: Any) -> Any:
        return None if reward is None else reward.to_dict()

    @pydantic.model_validator(mode="after")
    def _checked(self) -> EnvEval:
        bad = [k for k in self.k if not 1 <= k <= self.num_generations]
        if bad:
            raise ValueError(f"every k must be in 1..num_generations={self.num_generations}, got {bad}")
        no_reward_in(self.env_kwargs, "the entry's reward: (or --reward FILE)")
        check_env(self.env, self.make_kwargs())
        return self

    def make_kwargs(self) -> dict[str, Any]:
        """What ``envgym.make`` gets: ``env_kwargs`` and the reward spec."""
        return {**self.env_kwargs, "reward": self.reward} if self.reward is not None else dict(self.env_kwargs)

    def sampling(self, seed: int | None) -> SamplingParams:
        return SamplingParams(
            max_completion_length=self.max_completion_length,
            temperature=self.temperature,
            top_p=self.top_p,
            stop=list(self.stop),
            seed=seed,
        )


class Suite(pydantic.BaseModel):
    """A suite file: its entries before ``defaults`` are applied, and the suite's own settings."""

    model_config = STRICT

    envs: Annotated[list[str | dict[str, Any]], pydantic.Field(min_length=1)]
    """Env ids, or mappings of :class:`EnvEval` settings with an ``env``."""
    defaults: dict[str, Any] = {}
    model: str | None = None
    """The model the suite is meant for (``envgym eval`` and ``demo`` use it when given none)."""


def load_suite(
    path: str | Path, overrides: dict[str, Any] | None = None, env_kwargs: dict[str, Any] | None = None
) -> tuple[list[EnvEval], dict[str, Any]]:
    """Read a suite file (or the name of an installed suite, ``default``); returns its env evaluations and its
    settings (``model``). ``overrides`` (from the command line) win over the defaults and each entry;
    ``env_kwargs`` are added to every entry's ``env_kwargs``."""
    path = find_config(path, "suites")
    suite = validate(Suite, read_mapping(path), str(path))
    entries = []
    for number, entry in enumerate(suite.envs):
        values = {**suite.defaults, **({"env": entry} if isinstance(entry, str) else entry), **(overrides or {})}
        if env_kwargs:
            values["env_kwargs"] = {**values.get("env_kwargs", {}), **env_kwargs}
        entries.append(build_env_eval(values, where=f"{path}: envs[{number}]"))
    return entries, suite.model_dump(exclude={"envs", "defaults"})


def build_env_eval(values: dict[str, Any], where: str = "eval") -> EnvEval:
    """An :class:`EnvEval` from a suite entry or the command line; raises :class:`~envgym.config.BadInput` naming
    ``where`` and what is accepted."""
    if not isinstance(values.get("env", ""), str):
        raise BadInput(f"{where}: env must be an env id such as math/Arithmetic-v0, got {values['env']!r}")
    return validate(EnvEval, values, where)

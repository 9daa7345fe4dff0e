"""What an audit plays: an env id, its keyword arguments and, optionally, the reward spec that replaces its reward.

A target comes from an env id (``envgym audit ID``), an env id with a reward spec file
(``envgym audit ID --reward spec.yaml``, a YAML/JSON file whose ``reward:`` section is a spec), or a recipe
(``envgym audit --reward smollm2-tool-cpu``: the recipe's ``env``, ``env_kwargs`` and ``reward``, read by training's
recipe reader;
a mixture recipe's ``envs:`` gives one target per entry). Every target builds its env the way training does,
``envgym.make(id, **env_kwargs, reward=spec)``, so the battery plays through the spec and every wrapper it adds.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RECIPES_DIR = Path(__file__).resolve().parent.parent / "recipes"
# Components that call an LLM judge, and so read base_url: the audit points them at the judge it is told to use.
JUDGE_SOURCES = ("judge", "judge_group")


class TargetError(ValueError):
    """A reward spec or recipe that cannot be audited; the message names the file and what is wrong."""


@dataclasses.dataclass(frozen=True)
class AuditTarget:
    """One env to audit. ``env_kwargs`` are :func:`envgym.make`'s (``reward`` and ``max_turns`` included);
    ``name`` is the report's key (the env id, or ``recipe:NAME`` / ``NAME:ENV_ID`` for several targets of one
    file); ``source`` is the file it came from."""

    env_id: str
    env_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    name: str = ""
    source: str = ""

    @property
    def label(self) -> str:
        return self.name or self.env_id

    @property
    def reward(self) -> dict[str, Any] | None:
        """The reward spec in its dict form, or None (the env's own reward)."""
        reward = self.env_kwargs.get("reward")
        if reward is None:
            return None
        return reward if isinstance(reward, Mapping) else reward.to_dict()

    def components(self, *sources: str) -> list[dict[str, Any]]:
        """The spec's components with one of ``sources`` (all of them when none is named)."""
        spec = self.reward
        items = [] if spec is None else spec["components"]
        return [c for c in items if not sources or c["source"] in sources]

    @property
    def judged(self) -> bool:
        """Whether a component calls an LLM judge (a pointwise or group judge, or a process judge)."""
        return bool(self.components(*JUDGE_SOURCES)) or any(
            c.get("scorer") == "judge" for c in self.components("process")
        )

    def make(self, judge_url: str | None = None) -> Any:
        """Build the env as training would; with ``judge_url`` every judge of the spec asks that endpoint. A spec
        with noise gives an env whose rewards are their expectation over the noise
        (:class:`~envgym.audit.expectation.ExpectedReward`)."""
        import envgym
        from envgym.audit.expectation import ExpectedReward, noise_components

        kwargs = copy.deepcopy(dict(self.env_kwargs))
        if judge_url is not None and self.reward is not None:
            kwargs["reward"] = with_judge(self.reward, judge_url)
        if not noise_components(kwargs.get("reward")):
            return envgym.make(self.env_id, allow_unsafe=True, **kwargs)
        return ExpectedReward(
            lambda spec: envgym.make(self.env_id, allow_unsafe=True, **{**kwargs, "reward": spec}), kwargs["reward"]
        )

    def spec(self, judge_url: str | None = None) -> Any:
        """The validated :class:`~envgym.rewards.RewardSpec` (judges pointed at ``judge_url``), or None."""
        from envgym.rewards import RewardSpec

        if self.reward is None:
            return None
        return RewardSpec.coerce(with_judge(self.reward, judge_url) if judge_url else self.reward)

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "name": self.label,
            "source": self.source,
            "env_kwargs": json.loads(json.dumps(dict(self.env_kwargs), default=_plain)),
        }


def with_judge(reward: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    """A copy of the spec whose judges (pointwise, group and process judges) all ask ``base_url``."""
    spec = copy.deepcopy(dict(reward))
    for component in spec["components"]:
        if component["source"] in JUDGE_SOURCES or component.get("scorer") == "judge":
            component["base_url"] = base_url
    return spec


def _plain(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else repr(value)


def installed_recipes() -> list[Path]:
    """Every recipe installed with the package (``envgym/recipes/*.yaml``), by name."""
    return sorted(RECIPES_DIR.glob("*.yaml"))


def find_file(name: str) -> Path:
    """A spec or recipe file: a path as given, else the name of an installed recipe."""
    path = Path(name)
    if path.is_file():
        return path
    for candidate in (RECIPES_DIR / path.name, RECIPES_DIR / f"{path.name}.yaml"):
        if candidate.is_file():
            return candidate
    names = ", ".join(p.stem for p in installed_recipes())
    raise TargetError(f"--reward {name}: no such file and no installed recipe of that name (recipes: {names})")


def read_mapping(path: Path) -> dict[str, Any]:
    """A YAML or JSON file that must hold a mapping."""
    import yaml

    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise TargetError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {error}") from None
    if not isinstance(data, dict):
        raise TargetError(f"{path} must hold a mapping (a recipe, or a reward spec under reward:), got {data!r}")
    return data


def targets_from(reward: str, env_ids: list[str], env_kwargs: Mapping[str, Any] | None = None) -> list[AuditTarget]:
    """The targets of ``--reward FILE|RECIPE``: a recipe's env(s), or a spec file applied to ``env_ids``.

    A spec file has a ``reward:`` section and no env; a recipe has ``env:`` or ``envs:`` (env ids given on the
    command line replace a recipe's env). ``env_kwargs`` (``--env-kwargs``) are added to every target's."""
    path = find_file(reward)
    data = read_mapping(path)
    extra = dict(env_kwargs or {})
    if "env" not in data and "envs" not in data:
        if "reward" not in data:
            raise TargetError(f"{path} has neither env:/envs: (a recipe) nor reward: (a reward spec)")
        if not env_ids:
            raise TargetError(f"{path} is a reward spec without an env: name the env ids to audit it on")
        spec = _spec(data["reward"], path)
        return [
            AuditTarget(env_id, {**extra, "reward": spec}, f"{env_id}+{path.stem}", str(path)) for env_id in env_ids
        ]
    targets = []
    members = _recipe_members(path, env_ids)
    for env_id, kwargs in members:
        kwargs = dict(kwargs)
        if "reward" in kwargs:
            kwargs["reward"] = _spec(kwargs["reward"], path)
        kwargs.update(extra)
        name = f"recipe:{path.stem}" if len(members) == 1 else f"recipe:{path.stem}:{env_id}"
        targets.append(AuditTarget(env_id, kwargs, name, str(path)))
    return targets


def _recipe_members(path: Path, env_ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """A recipe's envs with what ``envgym.make`` gets for each (``max_turns`` and the reward spec included), read
    by the one recipe reader training uses; env ids given on the command line replace the recipe's env."""
    from envgym.agents.training.recipe import read_recipe
    from envgym.config import BadInput

    try:
        recipes = [read_recipe(path, env=env_id) for env_id in env_ids] if env_ids else [read_recipe(path)]
    except BadInput as error:
        raise TargetError(str(error)) from None
    members = []
    for recipe in recipes:
        if recipe.mixture is None:
            members.append((str(recipe.env), recipe.make_kwargs()))
        else:
            members += [
                (str(m.env), {**m.env_kwargs, **({"reward": m.reward} if m.reward is not None else {})})
                for m in recipe.mixture.members
            ]
    return members


def _spec(reward: Any, path: Path) -> dict[str, Any]:
    """The validated spec in its dict form (a bad spec fails here with the key path of what is wrong)."""
    from envgym.rewards import RewardSpec, RewardSpecError

    try:
        return RewardSpec.coerce(reward, where=f"{path}: reward").to_dict()
    except RewardSpecError as error:
        raise TargetError(str(error)) from None


def recipe_targets() -> list[AuditTarget]:
    """One target per env of every installed recipe (what CI audits beside the registered envs)."""
    return [target for path in installed_recipes() for target in targets_from(str(path), [])]

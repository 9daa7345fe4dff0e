"""The env registry: ids -> specs -> envs, with third-party plugins through entry points.

Ids look like ``namespace/Name-vN``. Entry points are ``"module:Class"`` strings imported only when an env
is made, so listing envs stays cheap. Installed packages add envs through the entry-point group
``envgym.envs``: each entry point names a zero-argument function that calls :func:`register`. The
built-in envs use the same group, which keeps the core free of any particular env.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import re
import warnings
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from envgym.core import EnvGymError

ENTRY_POINT_GROUP = "envgym.envs"
ID_PATTERN = re.compile(r"^(?P<namespace>[A-Za-z0-9_.-]+)/(?P<name>[A-Za-z0-9_.:-]+?)-v(?P<version>\d+)$")


class UnsafeEnv(EnvGymError, PermissionError):
    """The env is registered ``unsafe=True`` and the caller did not opt in with ``allow_unsafe=True``."""


class UnknownEnv(EnvGymError, KeyError):
    """No env is registered under the requested id."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclasses.dataclass
class EnvSpec:
    """How to build one registered env.

    ``kwargs`` are defaults that ``make(id, **overrides)`` merges under the caller's. ``max_turns`` wraps the
    env in :class:`~envgym.wrappers.TimeLimit` (``None``: no limit). ``nondeterministic`` is read by
    gymnasium's checker; envgym's envs are deterministic given a seed and task.

    ``unsafe``: the env's reward is known to be exploitable (``envgym audit`` finds holes no fix has closed) or
    it runs untrusted text outside the sandbox; ``unsafe_reason`` says which. ``make`` builds it only with
    ``allow_unsafe=True`` (:meth:`check_unsafe`; ``envgym train`` and ``eval`` take it in ``env_kwargs``), so nobody
    trains on it by accident.
    """

    id: str
    entry_point: str | Callable[..., Any]
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    max_turns: int | None = None
    description: str = ""
    nondeterministic: bool = False
    unsafe: bool = False
    unsafe_reason: str = ""

    @property
    def namespace(self) -> str:
        return _parse_id(self.id)["namespace"]

    @property
    def name(self) -> str:
        return _parse_id(self.id)["name"]

    @property
    def version(self) -> int:
        return int(_parse_id(self.id)["version"])

    MAKE_KEYWORDS = ("max_turns", "system_prompt", "few_shot", "reward", "render_mode", "allow_unsafe")
    """The keywords :meth:`make` takes itself, whatever the env's signature (an env that names ``system_prompt``
    or ``few_shot`` itself keeps them); :meth:`check_kwargs` accepts them for every env."""

    def make(self, **kwargs: Any):
        """Build the env: entry point called with the merged kwargs, then the wrappers that every env takes as
        keywords: ``system_prompt``/``few_shot`` (:class:`PromptPrefix`), ``max_turns`` (:class:`TimeLimit`) and
        ``reward`` (a :class:`~envgym.rewards.RewardSpec` or its dict form, :func:`~envgym.rewards.apply_reward`).
        The ``unsafe`` gate is :func:`make`'s (this low-level builder also serves re-makes of an env already
        built, e.g. by ``check_env``); ``allow_unsafe`` is accepted and dropped here."""
        kwargs = {**self.kwargs, **kwargs}
        factory = self.factory()
        own = {key: kwargs.pop(key) for key in self.MAKE_KEYWORDS if key in kwargs and not _keeps(factory, key)}
        self.check_kwargs(kwargs)
        max_turns = own.get("max_turns", self.max_turns)
        render_mode = own.get("render_mode")
        system_prompt, few_shot, reward = own.get("system_prompt"), own.get("few_shot"), own.get("reward")
        if reward is not None:
            from envgym.rewards import RewardSpec

            reward = RewardSpec.coerce(reward)  # a bad spec fails here, before the env is built
            if _takes(factory, "require_answers"):  # dataset envs accept unlabeled rows when the reward needs none
                kwargs.setdefault("require_answers", reward.needs_labels)
        env = factory(**kwargs)
        env.unwrapped.spec = self
        env.unwrapped.render_mode = render_mode
        if system_prompt is not None or few_shot is not None:
            from envgym.wrappers import PromptPrefix

            env = PromptPrefix(env, system_prompt=system_prompt, few_shot=few_shot)
        if max_turns is not None:
            from envgym.wrappers import TimeLimit

            env = TimeLimit(env, max_turns=max_turns)
        if reward is not None:  # outermost, so a judge sees the truncation of the turn limit
            from envgym.rewards import apply_reward

            env = apply_reward(env, reward)
        return env

    def check_kwargs(self, kwargs: Mapping[str, Any]) -> None:
        """Refuse keyword arguments that neither :meth:`make` nor the env's entry point takes (an entry point with
        ``**kwargs`` takes any), with a ``TypeError`` naming the ones it accepts, and a turn limit that is not a
        whole number >= 1: what a recipe, a suite or ``--env-kwargs`` is checked against before anything loads."""
        max_turns = kwargs.get("max_turns")
        if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
            raise TypeError(f"max_turns must be a whole number >= 1 (the turn limit), got {max_turns!r}")
        try:
            parameters = inspect.signature(self.factory()).parameters.values()
        except (TypeError, ValueError):  # a builtin or C callable: nothing to check against
            return
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return
        accepted = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        unknown = sorted(set(kwargs) - set(accepted) - set(self.MAKE_KEYWORDS))
        if unknown:
            raise TypeError(
                f"{self.id} takes no argument {', '.join(map(repr, unknown))}; it accepts "
                f"{', '.join(accepted) or 'none of its own'} (and make's {', '.join(self.MAKE_KEYWORDS[:4])})"
            )

    def factory(self) -> Callable[..., Any]:
        """The callable that builds the env (its entry point, imported if given as ``"module:Class"``)."""
        return load_entry_point(self.entry_point) if isinstance(self.entry_point, str) else self.entry_point

    def check_unsafe(self, allow_unsafe: bool) -> None:
        """The one gate for envs registered ``unsafe=True``: refuse unless the caller opted in. :func:`make` calls
        it; ``envgym train``, ``eval`` and recipe or suite readers call it before any model loads."""
        if self.unsafe and not allow_unsafe:
            reason = f" ({self.unsafe_reason})" if self.unsafe_reason else ""
            raise UnsafeEnv(
                f"{self.id} is registered unsafe{reason}; build it only on purpose: envgym.make({self.id!r}, "
                "allow_unsafe=True), or allow_unsafe: true in its env_kwargs (recipes, suites, --env-kwargs)"
            )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary (``envgym list --json``)."""
        entry = self.entry_point if isinstance(self.entry_point, str) else _qualified_name(self.entry_point)
        return {
            "id": self.id,
            "description": self.description,
            "entry_point": entry,
            "max_turns": self.max_turns,
            "unsafe": self.unsafe,
            **({"unsafe_reason": self.unsafe_reason} if self.unsafe else {}),
            "kwargs": {
                k: v if isinstance(v, (str, int, float, bool, type(None))) else repr(v) for k, v in self.kwargs.items()
            },
        }


registry: dict[str, EnvSpec] = {}
_plugins_loaded = False


def _keeps(factory: Callable[..., Any], keyword: str) -> bool:
    """Whether ``factory`` keeps one of make's keywords for itself (math/Dataset-v0 takes ``system_prompt``)."""
    return keyword in ("system_prompt", "few_shot") and _takes(factory, keyword)


def _takes(factory: Callable[..., Any], name: str) -> bool:
    """Whether ``factory`` names the keyword ``name`` in its signature (a ``**kwargs`` catch-all does not count)."""
    try:
        parameter = inspect.signature(factory).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)


def register(
    id: str,
    entry_point: str | Callable[..., Any],
    *,
    max_turns: int | None = None,
    description: str = "",
    nondeterministic: bool = False,
    unsafe: bool = False,
    unsafe_reason: str = "",
    **kwargs: Any,
) -> EnvSpec:
    """Register an env under ``id`` (``namespace/Name-vN``); ``kwargs`` become its default arguments.

    ``unsafe=True`` (with ``unsafe_reason``) fences off an env whose reward cannot be made safe yet: it stays
    listed, marked, and ``make`` builds it only with ``allow_unsafe=True`` (see :class:`EnvSpec`)."""
    _parse_id(id)
    if isinstance(entry_point, str) and ":" not in entry_point:
        raise ValueError(f"entry_point must look like 'package.module:ClassName', got {entry_point!r}")
    if id in registry:
        warnings.warn(f"overriding the env already registered as {id!r}", stacklevel=2)
    spec = EnvSpec(id, entry_point, dict(kwargs), max_turns, description, nondeterministic, bool(unsafe), unsafe_reason)
    registry[id] = spec
    return spec


def spec(id: str) -> EnvSpec:
    """The spec registered under ``id``; unknown ids raise :class:`UnknownEnv` with close matches."""
    load_plugins()
    try:
        return registry[id]
    except KeyError:
        close = difflib.get_close_matches(id, registry, n=3, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownEnv(f"no env is registered as {id!r}.{hint} `envgym list` shows the registered ids.") from None


def make(id: str, **kwargs: Any):
    """Build a registered env; ``kwargs`` override the spec's defaults (``max_turns`` too). An env registered
    ``unsafe=True`` needs ``allow_unsafe=True`` (else :class:`UnsafeEnv`)."""
    found = spec(id)
    found.check_unsafe(kwargs.get("allow_unsafe", False))
    return found.make(**kwargs)


def list_envs() -> list[EnvSpec]:
    """Every registered spec, sorted by id (plugins included)."""
    load_plugins()
    return [registry[key] for key in sorted(registry)]


def load_plugins(force: bool = False) -> None:
    """Run every ``envgym.envs`` entry point once. One that fails is reported as a warning, and the others
    still register, so a broken plugin never hides the rest."""
    global _plugins_loaded
    if _plugins_loaded and not force:
        return
    _plugins_loaded = True
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry.load()()
        except Exception as error:  # a third-party plugin may fail in any way
            package = entry.dist.name if entry.dist is not None else entry.value.split(".")[0].split(":")[0]
            warnings.warn(
                f"envgym plugin {entry.name!r} of the package {package!r} ({entry.value}) failed to load and was "
                f'skipped: {type(error).__name__}: {error}. Fix: `python -c "import {entry.module}"` shows the '
                f"full error; reinstall or upgrade it (pip install -U {package}), or uninstall it "
                f"(pip uninstall {package}) to stop this warning. Said once per process.",
                RuntimeWarning,
                stacklevel=2,
            )


def _parse_id(id: str) -> dict[str, str]:
    if not isinstance(id, str):
        raise TypeError(f"an env id must be a string like 'games/GuessNumber-v0', got {type(id).__name__}")
    match = ID_PATTERN.match(id)
    if match is None:
        raise ValueError(f"malformed env id {id!r}: ids look like 'namespace/Name-vN', e.g. 'games/GuessNumber-v0'")
    return match.groupdict()


def load_entry_point(entry_point: str) -> Callable[..., Any]:
    """Import ``"package.module:Attribute"`` and return the attribute: the one string loader of the project, for the
    plugin contract (``register(id, entry_point="module:Class")`` and entry points declared in a pyproject)."""
    module_name, _, attribute = entry_point.partition(":")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ImportError(
            f"entry point {entry_point!r}: module {module_name!r} has no attribute {attribute!r}"
        ) from None


def _qualified_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', repr(obj))}"

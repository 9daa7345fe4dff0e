"""Reading what people write: recipe and suite files, env ids and env arguments, each mistake one line.

Every config a person writes is a pydantic model (a recipe: :mod:`envgym.agents.training.recipe`; a suite:
:mod:`envgym.agents.evaluation.suite`; the CLI's engine options: :mod:`envgym.cli.options`), read through
:func:`validate`, which turns pydantic's errors into one :class:`BadInput` line that names where (the file or
flag, then the key path) and what is accepted, e.g. ``recipes/x.yaml: learning_rate must be a float, got 'fast'``.
The checks against the registry (:func:`check_env`) come from :class:`~envgym.registration.EnvSpec` itself. Light:
yaml and pydantic, no model, no torch.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pydantic

import envgym
from envgym.core import EnvGymError

PACKAGE_DIR = Path(envgym.__file__).resolve().parent
"""Where the recipes and suites installed with the package are (``envgym/recipes``, ``envgym/suites``)."""
STRICT = pydantic.ConfigDict(strict=True, extra="forbid")
"""The models' common config: values are taken as written (no ``"3"`` for 3, no ``1`` for true) and an unknown key
is an error that lists the known ones."""


class BadInput(EnvGymError, ValueError):
    """A user input that is wrong; the message says what was wrong and what is accepted, in one line."""


def validate(model: Any, data: Any, where: str) -> Any:
    """``model`` (a pydantic model or dataclass) built from ``data``; every error it finds becomes one line of a
    :class:`BadInput` that starts with ``where`` (the file the data came from; ``"--"``: command-line flags, each
    error then names its flag, ``--max-model-len``)."""
    try:
        if dataclasses.is_dataclass(model):  # strict: built from keyword arguments, not from a dict
            if not isinstance(data, dict):
                raise BadInput(f"{where} must be a mapping of settings, got {_show(data)}")
            return model(**data)
        return pydantic.TypeAdapter(model).validate_python(data)
    except pydantic.ValidationError as error:
        raise BadInput("; ".join(_problems(error.errors(), model, where))) from None


def check_env(env_id: str, kwargs: dict[str, Any]) -> Any:
    """The spec of ``env_id``, after checking ``kwargs`` against what its entry point and ``make`` take and the
    unsafe gate (``allow_unsafe`` in ``kwargs``); raises ``ValueError`` with the registry's message (an unknown
    id gets "did you mean"). The validators of every config model call it, so nothing loads first."""
    try:
        spec = envgym.spec(env_id)
        spec.check_kwargs(kwargs)
        spec.check_unsafe(bool(kwargs.get("allow_unsafe", False)))
    except (envgym.UnknownEnv, envgym.UnsafeEnv, TypeError) as error:
        raise ValueError(str(error)) from None
    return spec


def no_reward_in(env_kwargs: dict[str, Any], instead: str) -> None:
    """The reward spec has one place (read once, then passed on built): never among the env's arguments."""
    if "reward" in env_kwargs:
        raise ValueError(f"env_kwargs.reward: the reward spec is not an env argument; write it as {instead}")


def find_config(name: str | Path, kind: str) -> Path:
    """The file of a recipe (``kind="recipes"``) or suite (``"suites"``): a path as given, else a name of one
    installed with the package (``smollm2-arithmetic-cpu`` finds ``envgym/recipes/smollm2-arithmetic-cpu.yaml``)."""
    path = Path(name)
    if path.exists():
        return path
    installed = PACKAGE_DIR / kind
    for candidate in (installed / path.name, installed / f"{path.name}.yaml"):
        if candidate.is_file():
            return candidate
    names = sorted(p.stem for p in installed.glob("*.yaml"))
    raise BadInput(
        f"{kind[:-1]} file {name} does not exist; give a path or the name of an installed "
        f"{kind[:-1]}: {', '.join(names) or 'none installed'}"
    )


def read_mapping(path: Path) -> dict[str, Any]:
    """A YAML or JSON file that must hold a mapping; syntax errors name the file and line. YAML numbers are read
    as YAML 1.2 reads them (``1e-6`` is a number, where YAML 1.1 makes it a string)."""
    import yaml

    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_loader())
    except json.JSONDecodeError as error:
        raise BadInput(f"{path}:{error.lineno}: JSON syntax error: {error.msg}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise BadInput(f"{path}{line}: YAML syntax error: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BadInput(f"{path}: must hold a mapping of settings (key: value lines), got {type(data).__name__}")
    return data


_YAML_12_FLOAT = re.compile(
    r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
)


def _loader() -> type:
    """yaml's SafeLoader with YAML 1.2's floats (PyYAML reads ``1e-6`` as a string: its 1.1 rule wants a dot)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        key: list(value) for key, value in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    for first in "-+.0123456789":
        Loader.yaml_implicit_resolvers[first] = [
            (tag, regexp)
            for tag, regexp in Loader.yaml_implicit_resolvers.get(first, [])
            if tag != "tag:yaml.org,2002:float"
        ]
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML_12_FLOAT, list("-+.0123456789"))
    return Loader


# --- one line per pydantic error -------------------------------------------------------------------------------

_KINDS = {
    "float": "a float",
    "int": "an integer",
    "bool": "true or false",
    "str": "a string",
    "string": "a string",
    "none": "null",
    "list": "a list",
    "dict": "a mapping",
    "model": "a mapping",
    "dataclass": "a mapping",
    "model_attributes": "a mapping",
}
_UNION_MEMBER = re.compile(r"^(str|int|float|bool|none|list\[.*\]|dict\[.*\]|literal\[.*\]|function-[a-z]+\[.*\])$")


def _problems(errors: list[Any], model: Any, where: str) -> list[str]:
    """The errors as lines, the branches of one union merged ("must be a string or a list") and unknown keys of one
    mapping listed together with the known ones."""
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for error in errors:
        loc = tuple(part for part in error["loc"] if not (isinstance(part, str) and _UNION_MEMBER.match(part)))
        unknown = error["type"] in ("extra_forbidden", "unexpected_keyword_argument")
        merged.setdefault((loc[:-1] if unknown else loc, unknown), []).append(error)
    lines = []
    for (loc, unknown), group in merged.items():
        if unknown:
            lines.append(_unknown_keys(group, model, where))
        else:
            lines.append(_line(loc, group, where))
    return lines


def _line(loc: tuple[Any, ...], group: list[Any], where: str) -> str:
    path = _path(loc, where)
    first = group[0]
    kind, ctx = first["type"], first.get("ctx") or {}
    value = first.get("input")
    if kind in ("value_error", "assertion_error"):
        message = str(ctx.get("error", first["msg"])).removeprefix("Value error, ")
        if loc and isinstance(loc[-1], str) and message.startswith(loc[-1]):
            message = path + message[len(loc[-1]) :]  # the validator named the field: name its whole path
        elif path:
            message = f"{path}: {message}"
        return _at(where, message)
    if kind == "missing":
        return _at(where, f"{path} is missing")
    accepted = [_accepted(error) for error in group]
    if all(a is not None for a in accepted):
        return _at(where, f"{path} must be {' or '.join(dict.fromkeys(accepted))}, got {_show(value)}")
    return _at(where, f"{path}: {first['msg']}, got {_show(value)}")


def _at(where: str, message: str) -> str:
    return message if where == "--" else f"{where}: {message}"


def _accepted(error: dict[str, Any]) -> str | None:
    """What an error's type says is accepted ("an integer", "one of a, b", ">= 1"), None for others."""
    kind, ctx = error["type"], error.get("ctx") or {}
    base = kind.removesuffix("_type").removesuffix("_parsing").removesuffix("_exact")
    if base in _KINDS:
        return _KINDS[base]
    if kind == "int_from_float":
        return "an integer"
    if kind == "literal_error":
        return f"one of {ctx.get('expected', '?')}"
    bounds = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
    if kind in bounds:
        limit = next(iter(ctx.values()))
        return f"a number {bounds[kind]} {int(limit) if isinstance(limit, float) and limit.is_integer() else limit}"
    if kind == "finite_number":
        return "a finite number"
    if kind == "too_short":
        least = ctx.get("min_length", 1)
        return "a non-empty list" if least == 1 else f"a list of at least {least} items"
    return None


def _unknown_keys(group: list[Any], model: Any, where: str) -> str:
    loc = group[0]["loc"][:-1]
    unknown = sorted(str(error["loc"][-1]) for error in group)
    known = _known_keys(model, loc)
    place = f"{_path(loc, where)}: " if loc else ""
    hint = f"; known keys are {', '.join(known)}" if known else ""
    return _at(where, f"{place}unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}{hint}")


def _known_keys(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The field names of the model found at ``loc`` under ``model`` (lists and optional fields walked through)."""
    for part in loc:
        if isinstance(part, int):
            model = _inner(model)
        else:
            model = _field_types(model).get(part)
        if model is None:
            return []
    return sorted(_field_types(_inner(model)))


def _field_types(model: Any) -> dict[str, Any]:
    """Field name -> annotation of a pydantic model or dataclass (resolved by pydantic), else nothing."""
    fields = getattr(model, "__pydantic_fields__", None)
    return {name: field.annotation for name, field in (fields or {}).items()}


def _inner(annotation: Any) -> Any:
    """The model inside ``list[M]``, ``M | None`` or ``list[M] | None``."""
    for arg in getattr(annotation, "__args__", ()):
        if arg is not type(None):
            return _inner(arg) if getattr(arg, "__args__", None) else arg
    return annotation


def _path(loc: tuple[Any, ...], where: str = "") -> str:
    if where == "--":  # command-line flags: the field's flag
        return "--" + ".".join(str(part) for part in loc).replace("_", "-") if loc else ""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

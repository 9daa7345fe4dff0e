"""Checks the command line runs before loading anything: env ids, env arguments, recipe and suite files, model
names. A mistake costs one line and well under two seconds, not a traceback after the model has loaded.

Everything here is light: it never imports ``transformers`` or loads a model (recipe type checks read
``GRPOConfig``'s annotations, which imports the algorithm module and with it ``torch``, but nothing else).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import envgym

# Keywords envgym.make takes itself, whatever the env's own signature (registration.EnvSpec.make).
MAKE_KEYWORDS = ("max_turns", "system_prompt", "few_shot", "reward", "render_mode", "allow_unsafe")
PACKAGE_DIR = Path(envgym.__file__).resolve().parent
"""Where the recipes and suites installed with the package are (``envgym/recipes``, ``envgym/suites``)."""


class BadInput(ValueError):
    """A user input that is wrong; the message says what was wrong and what is accepted, in one line."""


def check_env_id(env_id: str) -> Any:
    """The spec of ``env_id``; an unknown or malformed id raises :class:`BadInput` with "did you mean"."""
    try:
        return envgym.spec(env_id)
    except (envgym.UnknownEnv, ValueError, TypeError) as error:
        raise BadInput(message_of(error)) from None


def message_of(error: Exception) -> str:
    """An exception's message without the quotes ``str`` puts around a ``KeyError``'s (``UnknownEnv`` is one)."""
    return str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)


def env_kwargs_object(text: str) -> dict[str, Any]:
    """``--env-kwargs TEXT`` (train and eval) as a dict, or one line saying what is accepted."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(f"--env-kwargs must be a JSON object, e.g. '{{\"difficulty\": 1}}' ({error})") from None
    if not isinstance(value, dict):
        raise BadInput(f"--env-kwargs must be a JSON object, e.g. '{{\"difficulty\": 1}}', got {text}")
    return value


def check_env_kwargs(env_id: str, kwargs: dict[str, Any], where: str = "env kwargs") -> None:
    """Refuse keyword arguments the env's entry point does not take (unless it takes ``**kwargs``), naming the
    accepted ones: ``envgym.make`` would fail on them only when the first env is built."""
    spec = check_env_id(env_id)
    if not isinstance(kwargs, dict):
        raise BadInput(f"{where} must be a mapping of argument names to values, got {type(kwargs).__name__}")
    factory = spec.entry_point
    if isinstance(factory, str):
        module_name, _, attribute = factory.partition(":")
        factory = getattr(importlib.import_module(module_name), attribute)
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: nothing to check against
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(kwargs) - set(accepted) - set(MAKE_KEYWORDS))
    if unknown:
        raise BadInput(f"{where}: {env_id} takes no argument {', '.join(map(repr, unknown))}; it accepts "
                       f"{', '.join(accepted) or 'none of its own'} (and make's {', '.join(MAKE_KEYWORDS[:4])})")


def check_model_name(name: str) -> None:
    """Refuse a model name that resolves to nothing (no weights are read, no model is loaded)."""
    from envgym.agents.engines.models import resolve_model

    try:
        resolve_model(name)
    except (FileNotFoundError, ValueError, OSError) as error:
        raise BadInput(f"--model: {error}") from None


def check_report_to(value: Any, where: str = "--report-to") -> list[str]:
    """The tracker names of ``report_to`` (a list or comma string); an unknown name, or a tracker whose library
    is not installed, raises :class:`BadInput` naming the accepted trackers or the extra to install."""
    from envgym.agents.training.tracking import check_installed, parse_report_to

    try:
        names = parse_report_to(value)
        check_installed(names)
    except (ValueError, ImportError) as error:
        raise BadInput(f"{where}: {error}") from None
    return names


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
    raise BadInput(f"{kind[:-1]} file {name} does not exist; give a path or the name of an installed "
                   f"{kind[:-1]}: {', '.join(names) or 'none installed'}")


def read_mapping(path: Path) -> dict[str, Any]:
    """A YAML or JSON file that must hold a mapping; syntax errors name the file and line."""
    import json

    import yaml

    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
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


def check_config_fields(fields: dict[str, Any], config_class: type, where: str) -> dict[str, Any]:
    """Check ``fields`` against the dataclass ``config_class``'s annotations; returns them with YAML's number
    strings (``1e-6`` is a string to YAML 1.1) made numbers. Unknown keys and wrong types raise
    :class:`BadInput` like "recipes/x.yaml: learning_rate must be a float, got 'fast'"."""
    annotations = {f.name: str(f.type) for f in dataclasses.fields(config_class)}
    unknown = sorted(set(fields) - set(annotations))
    if unknown:
        raise BadInput(f"{where}: unknown {config_class.__name__} fields {unknown}; known fields are "
                       f"{sorted(annotations)}")
    checked = {}
    for key, value in fields.items():
        kinds = [part.strip() for part in annotations[key].split("|")]
        converted = _as_kind(value, kinds)
        if converted is _WRONG:
            wanted = " or ".join(_KIND_NAMES.get(kind, kind) for kind in kinds)
            raise BadInput(f"{where}: {key} must be {wanted}, got {value!r}")
        checked[key] = converted
    return checked


_WRONG = object()
_KIND_NAMES = {"int": "an integer", "float": "a float", "bool": "true or false", "str": "a string",
               "None": "null", "list[str]": "a list of strings", "list[int]": "a list of integers",
               "dict[str, Any]": "a mapping"}


def _as_kind(value: Any, kinds: list[str]) -> Any:
    """``value`` as the first of ``kinds`` (annotation names) it fits, else ``_WRONG``; unknown kinds pass."""
    for kind in kinds:
        if kind == "None" and value is None:
            return value
        if kind == "bool" and isinstance(value, bool):
            return value
        if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
            return value
        if kind == "float" and not isinstance(value, bool):
            if isinstance(value, (int, float)):
                return float(value)
            if isinstance(value, str):
                try:
                    return float(value)
                except ValueError:
                    pass
        if kind == "str" and isinstance(value, str):
            return value
        if kind.startswith("dict[") and isinstance(value, dict):
            return value
        if kind.startswith("list[") and isinstance(value, list):
            inner = _as_kind_list(value, kind[5:-1])
            if inner is not _WRONG:
                return inner
        if kind not in _KIND_NAMES and not kind.startswith(("list[", "dict[")):
            return value  # an annotation this check does not know: the dataclass validates it
    return _WRONG


def _as_kind_list(values: list[Any], kind: str) -> Any:
    items = [_as_kind(v, [kind]) for v in values]
    return _WRONG if any(item is _WRONG for item in items) else items

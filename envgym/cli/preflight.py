"""The command line's own input checks, run before anything loads: ``--env-kwargs`` JSON, model names, trackers.
A mistake costs one line and well under two seconds, not a traceback after the model has loaded (env ids, env
arguments, recipe and suite files are checked by :mod:`envgym.config` and the readers that use it).

Light: it never imports ``transformers`` or loads a model.
"""

from __future__ import annotations

import json
from typing import Any

from envgym.config import BadInput


def env_kwargs_object(text: str) -> dict[str, Any]:
    """``--env-kwargs TEXT`` (train and eval) as a dict, or one line saying what is accepted."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(f"--env-kwargs must be a JSON object, e.g. '{{\"difficulty\": 1}}' ({error})") from None
    if not isinstance(value, dict):
        raise BadInput(f"--env-kwargs must be a JSON object, e.g. '{{\"difficulty\": 1}}', got {text}")
    return value


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

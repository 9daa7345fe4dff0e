"""``envgym init NAME`` (scaffold an env package) and ``envgym check PATH_OR_ID`` (check_env + the audit)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import typer

from envgym.registration import ENTRY_POINT_GROUP


def init_command(
    name: str = typer.Argument(..., help="Package name, e.g. my-envs (envs register as my_envs/Name-v0)."),
    folder: Path = typer.Option(None, "--dir", help="Where to write it (default: ./NAME; must be new or empty)."),
) -> None:
    """Scaffold a pip-installable env package: entry point, one honest env, tests (check_env + audit), README."""
    from envgym.scaffold.templates import scaffold

    target = folder or Path(name)
    try:
        files = scaffold(name, target)
    except ValueError as error:
        typer.echo(f"envgym init: {error}", err=True)
        raise typer.Exit(2) from None
    for path in files:
        typer.echo(f"wrote {path}")
    typer.echo(f"next: pip install -e {target} && envgym check {target}")


def check_command(
    target: str = typer.Argument(
        ...,
        help="An env id (my_envs/Reverse-v0) or a package folder with a pyproject.toml "
        "that declares envgym.envs entry points (need not be installed).",
    ),
    env_kwargs: str = typer.Option(
        None, "--env-kwargs", help="Env arguments as JSON, e.g. '{\"difficulty\": 2}' (for every env checked)."
    ),
) -> None:
    """Run check_env and the adversarial audit on an env, or on every env a package folder registers; exit 1
    when either fails."""
    import json

    import envgym

    try:
        kwargs = json.loads(env_kwargs) if env_kwargs is not None else {}
        if not isinstance(kwargs, dict):
            raise ValueError(f"--env-kwargs must be a JSON object such as '{{\"difficulty\": 2}}', got {env_kwargs!r}")
        env_ids = registered_by_folder(Path(target)) if Path(target).is_dir() else [envgym.spec(target).id]
    except json.JSONDecodeError as error:
        typer.echo(f"envgym check: --env-kwargs must be a JSON object ({error.msg}), got {env_kwargs!r}", err=True)
        raise typer.Exit(2) from None
    except (ValueError, envgym.UnknownEnv) as error:
        typer.echo(f"envgym check: {error}", err=True)
        raise typer.Exit(2) from None
    failures = sum(not check_one(env_id, kwargs) for env_id in env_ids)
    typer.echo(f"{len(env_ids) - failures} of {len(env_ids)} envs pass check_env and the audit")
    if failures:
        raise typer.Exit(1)


def registered_by_folder(folder: Path) -> list[str]:
    """Import the ``envgym.envs`` entry points a package folder declares (from the folder, installed or not),
    run them, and return the ids they registered."""
    import tomllib

    from envgym import registration

    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        raise ValueError(f"{folder} has no pyproject.toml; give a package folder (see envgym init) or an env id")
    try:
        declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["entry-points"][ENTRY_POINT_GROUP]
    except (KeyError, tomllib.TOMLDecodeError) as error:
        raise ValueError(
            f'{pyproject} declares no [project.entry-points."{ENTRY_POINT_GROUP}"] ({type(error).__name__}: {error})'
        ) from None
    registration.load_plugins()  # first, so that an installed copy of the package does not re-register later
    for source in (folder / "src", folder):  # the src layout and the flat one
        if source.is_dir() and str(source.resolve()) not in sys.path:
            sys.path.insert(0, str(source.resolve()))
    before = dict(registration.registry)
    for name, value in declared.items():
        try:
            with warnings.catch_warnings():  # "overriding the env already registered": the installed copy
                warnings.simplefilter("ignore")
                registration.load_entry_point(value)()
        except Exception as error:  # a plugin may fail in any way; say which and how
            raise ValueError(f"entry point {name} = {value!r} failed: {type(error).__name__}: {error}") from None
    ids = [key for key, spec in registration.registry.items() if before.get(key) is not spec]
    if not ids:
        raise ValueError(f"the entry points of {pyproject} registered no env")
    return sorted(ids)


def check_one(env_id: str, env_kwargs: dict | None = None) -> bool:
    """check_env, then the audit (both on the env built with ``env_kwargs``); print what failed. True when both
    pass."""
    import envgym
    from envgym.audit import audit_env
    from envgym.audit.target import AuditTarget
    from envgym.utils import check_env

    env_kwargs = env_kwargs or {}
    try:
        check_env(envgym.make(env_id, **env_kwargs))
    except Exception as error:  # check_env raises AssertionError, a broken env anything
        typer.echo(f"FAIL {env_id}: check_env: {type(error).__name__}: {error}")
        return False
    report = audit_env(AuditTarget(env_id, env_kwargs))
    for finding in report.findings:
        typer.echo(f"FAIL {env_id}: audit: {finding.kind} ({finding.strategy}): {finding.evidence}")
    if report.findings:
        return False
    typer.echo(
        f"ok   {env_id}: check_env passed; audit: {len(report.strategies)} strategies, no findings, "
        f"reference {report.reference}"
    )
    return True

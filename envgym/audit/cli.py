"""``envgym audit ENV_ID... | --all | --reward SPEC|RECIPE | --recipes``: the adversarial battery from the command
line (see docs/audit.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer


def audit_command(
    env_ids: list[str] = typer.Argument(None, help="Env ids to audit, e.g. math/Arithmetic-v0 my/Env-v0."),
    all_envs: bool = typer.Option(
        False, "--all", help="Audit every registered env (unsafe ones only with --include-unsafe)."
    ),
    reward: str = typer.Option(
        None,
        "--reward",
        help="A reward spec file (YAML/JSON with a reward: section; name the env ids to audit it on) or a recipe "
        "(a file or an installed recipe's name): the battery plays through the spec and every component in it.",
    ),
    recipes: bool = typer.Option(
        False, "--recipes", help="Audit every installed recipe (envgym/recipes/); with --all, the envs too."
    ),
    env_kwargs: str = typer.Option(
        None, "--env-kwargs", help="Env arguments as JSON, e.g. '{\"difficulty\": 2}' (added to every target)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (per env and totals) as the last line."),
    tasks: int = typer.Option(None, "--tasks", help="Task indices (or seeds) per env; default 2, 12 with --thorough."),
    thorough: bool = typer.Option(
        False, "--thorough", help="Every answer format, more tasks and groups, skewed-answer check."
    ),
    cue_tasks: int = typer.Option(
        None, "--cue-tasks", help="Tasks the blind learner draws (0: no cue check); default 200, 300 --thorough."
    ),
    judge: str = typer.Option(
        "obedient",
        "--judge",
        help="Which judge a spec's judges ask: obedient (the built-in judge that obeys any instruction it sees), "
        "spec (the spec's own base_url) or an endpoint URL.",
    ),
    model: str = typer.Option(
        "smollm2", "--model", help="Model (name or path) for token-level components: self-certainty, process."
    ),
    workers: int = typer.Option(1, "--workers", help="Envs audited at once, each in its own process."),
    include_unsafe: bool = typer.Option(False, "--include-unsafe", help="With --all, also envs registered unsafe."),
    record: str = typer.Option(
        None, "--record", help="Also write the trust record (per env: status and findings, date, commit) to this file."
    ),
) -> None:
    """Play generic adversarial actions against envs and reward specs; exit code 1 when anything earns reward,
    crashes, runs code, takes over 2.5 s a step, leaks state, fails in a way the policy caused, leaks the answer
    through a surface cue, or refuses the env's own reference answer."""
    from envgym.audit.runner import AuditSettings
    from envgym.audit.suite import audit_envs, summary

    if tasks is not None and tasks < 1:
        raise typer.BadParameter(f"--tasks must be >= 1, got {tasks}")
    if cue_tasks is not None and cue_tasks < 0:
        raise typer.BadParameter(f"--cue-tasks must be >= 0, got {cue_tasks}")
    targets = _targets(env_ids or [], all_envs, reward, recipes, _kwargs(env_kwargs), include_unsafe)
    settings = AuditSettings.for_level(thorough, tasks=tasks, cue_tasks=cue_tasks, judge=judge, model=model)

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [
        TextColumn("[bold]audit[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
    ]
    # No refresh thread: audit_envs forks, and a fork while another thread holds a lock can deadlock the child.
    with Progress(*columns, console=Console(stderr=True), transient=True, auto_refresh=False) as progress:
        bar = progress.add_task("audit", total=len(targets), last="")
        reports = audit_envs(
            targets,
            settings,
            workers=workers,
            on_done=lambda report: progress.update(bar, advance=1, last=report.env_id, refresh=True),
        )
    result = summary(reports, settings)
    if record is not None:
        from envgym.audit.record import write_record

        write_record(result, record)
    if as_json:
        print(json.dumps(result))
    else:
        _print_tables(result)
    if result["totals"]["findings"]:
        raise typer.Exit(1)


def _kwargs(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise typer.BadParameter(f"--env-kwargs must be a JSON object ({error.msg}), got {text!r}") from None
    if not isinstance(value, dict):
        raise typer.BadParameter(f"--env-kwargs must be a JSON object such as '{{\"difficulty\": 2}}', got {text!r}")
    return value


def _targets(
    env_ids: list[str], all_envs: bool, reward: str | None, recipes: bool, kwargs: dict[str, Any], unsafe: bool
) -> list[Any]:
    """What to audit, from the arguments; a bad one is a one-line error naming it."""
    import envgym
    from envgym.audit.target import AuditTarget, TargetError, recipe_targets, targets_from

    if sum((bool(env_ids) and reward is None, all_envs or recipes, reward is not None)) != 1:
        raise typer.BadParameter(
            "give env ids, --all and/or --recipes, or --reward SPEC|RECIPE (with env ids for a spec)"
        )
    try:
        ids = [envgym.spec(env_id).id for env_id in env_ids]
    except (envgym.UnknownEnv, ValueError) as error:
        raise typer.BadParameter(str(error)) from None
    if all_envs:
        ids = [spec.id for spec in envgym.list_envs() if unsafe or not spec.unsafe]
    targets = [AuditTarget(env_id, kwargs) for env_id in ids if reward is None]
    try:
        if reward is not None:
            targets = targets_from(reward, ids, kwargs)
        if recipes:
            targets += [AuditTarget(t.env_id, {**t.env_kwargs, **kwargs}, t.name, t.source) for t in recipe_targets()]
    except TargetError as error:
        raise typer.BadParameter(str(error)) from None
    return targets


def _print_tables(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    # Full ids, never cut: two envs of one package differ only at the end of their ids.
    longest = max((len(env_id) for env_id in result["envs"]), default=3)
    table = Table()
    table.add_column("env", min_width=longest, overflow="fold")
    for header in ("strategies", "reference", "findings", "max step s", "seconds"):
        table.add_column(header)
    for env_id, report in result["envs"].items():
        kinds = [f["kind"] for f in report["findings"]]
        found = ", ".join(f"{kind} x{kinds.count(kind)}" for kind in dict.fromkeys(kinds)) or "[green]none[/green]"
        if report["status"] == "skipped":
            found = f"[yellow]skipped: {escape(report['reason'])}[/yellow]"
        table.add_row(
            escape(env_id),
            str(len(report["strategies"])),
            report["reference"],
            found,
            f"{report['timings']['max_step_seconds']:.2f}",
            f"{report['timings']['seconds']:.1f}",
        )
    console.print(table)
    findings = [f for report in result["envs"].values() for f in report["findings"]]
    if findings:
        detail = Table()
        detail.add_column("env", min_width=longest, overflow="fold")
        for header in ("finding", "strategy", "tasks", "evidence"):
            detail.add_column(header)
        for f in findings:
            detail.add_row(
                escape(f["env_id"]), f["kind"], escape(f["strategy"]), str(f["tasks"]), escape(f["evidence"])
            )
        console.print(detail)
    totals = result["totals"]
    console.print(" ".join(f"{key}={value}" for key, value in totals.items() if key != "no_reference"))
    if totals["no_reference"]:
        console.print(f"no reference action: {', '.join(totals['no_reference'])}", highlight=False)
    sys.stdout.flush()

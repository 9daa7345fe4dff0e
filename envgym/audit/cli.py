"""``envgym audit ENV_ID... | --all``: the adversarial battery from the command line (see docs/audit.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer


def audit_command(
    env_ids: list[str] = typer.Argument(None, help="Env ids to audit, e.g. math/Arithmetic-v0 my/Env-v0."),
    all_envs: bool = typer.Option(False, "--all", help="Audit every registered env (unsafe ones only with "
                                                       "--include-unsafe)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (per env and totals) as the last line."),
    tasks: int = typer.Option(None, "--tasks", help="Task indices (or seeds) per env; default 2, 12 with --thorough."),
    thorough: bool = typer.Option(False, "--thorough", help="Every answer format, more tasks, skewed-answer check."),
    workers: int = typer.Option(1, "--workers", help="Envs audited at once, each in its own process."),
    include_unsafe: bool = typer.Option(False, "--include-unsafe", help="With --all, also envs registered unsafe."),
) -> None:
    """Play generic adversarial actions against envs; exit code 1 when anything earns reward, crashes, runs code,
    takes over 2.5 s a step, leaks state, or refuses the env's own reference answer."""
    import envgym
    from envgym.audit.runner import FAST_TASKS, THOROUGH_TASKS, AuditSettings
    from envgym.audit.suite import audit_envs, summary

    if bool(env_ids) == all_envs:
        raise typer.BadParameter("give env ids or --all (not both)")
    if tasks is not None and tasks < 1:
        raise typer.BadParameter(f"--tasks must be >= 1, got {tasks}")
    if all_envs:
        ids = [spec.id for spec in envgym.list_envs() if include_unsafe or not spec.unsafe]
    else:
        try:
            ids = [envgym.spec(env_id).id for env_id in env_ids]
        except (envgym.UnknownEnv, ValueError) as error:
            raise typer.BadParameter(str(error)) from None
    settings = AuditSettings(tasks=tasks or (THOROUGH_TASKS if thorough else FAST_TASKS), thorough=thorough)

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("[bold]audit[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[last]}")]
    # No refresh thread: audit_envs forks, and a fork while another thread holds a lock can deadlock the child.
    with Progress(*columns, console=Console(stderr=True), transient=True, auto_refresh=False) as progress:
        bar = progress.add_task("audit", total=len(ids), last="")
        reports = audit_envs(ids, settings, workers=workers,
                             on_done=lambda report: progress.update(bar, advance=1, last=report.env_id, refresh=True))
    result = summary(reports, settings)
    if as_json:
        print(json.dumps(result))
    else:
        _print_tables(result)
    if result["totals"]["findings"]:
        raise typer.Exit(1)


def _print_tables(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table("env", "strategies", "reference", "findings", "max step s", "seconds")
    for env_id, report in result["envs"].items():
        kinds = [f["kind"] for f in report["findings"]]
        found = ", ".join(f"{kind} x{kinds.count(kind)}" for kind in dict.fromkeys(kinds)) or "[green]none[/green]"
        if report["status"] == "skipped":
            found = f"[yellow]skipped: {escape(report['reason'])}[/yellow]"
        table.add_row(escape(env_id), str(len(report["strategies"])), report["reference"], found,
                      f"{report['timings']['max_step_seconds']:.2f}", f"{report['timings']['seconds']:.1f}")
    console.print(table)
    findings = [f for report in result["envs"].values() for f in report["findings"]]
    if findings:
        detail = Table("env", "finding", "strategy", "tasks", "evidence")
        for f in findings:
            detail.add_row(escape(f["env_id"]), f["kind"], escape(f["strategy"]), str(f["tasks"]), escape(f["evidence"]))
        console.print(detail)
    totals = result["totals"]
    console.print(" ".join(f"{key}={value}" for key, value in totals.items() if key != "no_reference"))
    if totals["no_reference"]:
        console.print(f"no reference action: {', '.join(totals['no_reference'])}", highlight=False)
    sys.stdout.flush()

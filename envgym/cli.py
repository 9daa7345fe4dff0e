"""The `envgym` command line: the one face above every part of the project.

Subsystems keep their commands next to their code (a light module: typer signatures at the top, heavy
imports inside the function) and are listed in ``SUBCOMMANDS``/``SUBAPPS`` below; nothing imports this module.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any, Callable

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Verifiable-reward environments for LLM agents.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks. The last line printed is one JSON object.")
serve_app = typer.Typer(no_args_is_help=True, help="HTTP servers (they bind 127.0.0.1 unless told otherwise).")
sandbox_app = typer.Typer(no_args_is_help=True, help="Sandbox maintenance (building its Docker image).")
app.add_typer(bench_app, name="bench")
app.add_typer(serve_app, name="serve")
app.add_typer(sandbox_app, name="sandbox")

# (group, command name, "module:function"). The function's signature defines the command's options.
SUBCOMMANDS: list[tuple[str, str, str]] = [
    ("bench", "env", "envgym.benchmarks.env:bench_env"),
    ("app", "train", "envgym.agents.training.train_cli:train_command"),
    ("app", "demo", "envgym.agents.demo:demo_command"),
    ("bench", "train", "envgym.agents.benchmarks.train_bench:bench_train"),
    ("serve", "env", "envgym.server.cli:serve_env"),
    ("serve", "tools", "envgym.integrations.mcp_server:serve_tools"),
    ("bench", "server", "envgym.server.bench:bench_server"),
    ("bench", "sandbox", "envgym.sandbox.bench:bench_sandbox"),
    ("serve", "sandbox", "envgym.sandbox.server:serve_sandbox"),
    ("sandbox", "build-image", "envgym.sandbox.images:build_image_command"),
    ("bench", "search", "envgym.envs.search.bench:bench_search"),
    ("serve", "search", "envgym.envs.search.server:serve_search"),
    ("bench", "verify", "envgym.verifiers.bench:bench_verify"),
    ("serve", "model", "envgym.agents.engines.server:serve_model"),
    ("bench", "rollout", "envgym.agents.benchmarks.rollout_bench:bench_rollout"),
    ("bench", "learn", "envgym.agents.benchmarks.learn_bench:bench_learn"),
    ("app", "audit", "envgym.audit.cli:audit_command"),
    ("app", "check-template", "envgym.agents.engines.templates:check_template_command"),
    ("app", "export", "envgym.export:export_command"),
    ("app", "init", "envgym.scaffold.cli:init_command"),
    ("app", "check", "envgym.scaffold.cli:check_command"),
]
_GROUPS = {"app": app, "bench": bench_app, "serve": serve_app, "sandbox": sandbox_app}

# Command groups that live with their subsystem: (name, "module:typer_app").
SUBAPPS: list[tuple[str, str]] = [("eval", "envgym.agents.cli:eval_app")]


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print a JSON array of env specs.")) -> None:
    """List the registered environments."""
    import envgym

    specs = envgym.list_envs()
    if as_json:
        print(json.dumps([s.to_dict() for s in specs], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "max turns", "description")
    for spec in specs:
        marker = f" [red](unsafe: {spec.unsafe_reason or 'see docs/audit.md'})[/red]" if spec.unsafe else ""
        table.add_row(spec.id, str(spec.max_turns or "-"), spec.description + marker)
    Console().print(table)


@app.command("play")
def play_command(
    env_id: str = typer.Argument(..., help="Env id, e.g. games/GuessNumber-v0."),
    seed: int = typer.Option(None, help="Seed for the episode."),
    task_index: int = typer.Option(None, help="Play this task of the env's task source."),
) -> None:
    """Play an environment yourself in the terminal (type your turn; an empty line ends it, Ctrl-D quits)."""
    import envgym
    from rich.console import Console

    console = Console()
    try:
        env = envgym.make(env_id)
    except envgym.UnknownEnv as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None
    options = {"task_index": task_index} if task_index is not None else None
    messages, info = env.reset(seed=seed, options=options)
    _show(console, messages)
    total = 0.0
    while True:
        action = _read_turn(console)
        if action is None:
            console.print("[yellow]quit[/yellow]")
            break
        messages, reward, terminated, truncated, info = env.step(action)
        total += reward
        _show(console, messages)
        parts = info.get("reward_components")
        console.print(f"[dim]reward {reward:+.3f}{f' {parts}' if parts else ''}, total {total:+.3f}[/dim]")
        if terminated or truncated:
            console.print(f"[bold]episode {'terminated' if terminated else 'truncated'}[/bold], total reward {total:+.3f}")
            break
    env.close()


def _show(console: Any, messages: list[dict[str, Any]]) -> None:
    for message in messages:
        console.print(f"[bold cyan]{message.get('role')}[/bold cyan]: {message.get('content')}", markup=True, highlight=False)


def _read_turn(console: Any) -> str | None:
    console.print("[bold green]you[/bold green] (end with an empty line):")
    lines = []
    for line in sys.stdin:
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.rstrip("\n"))
    else:
        if not lines:
            return None
    return "\n".join(lines)


def _load(target: str) -> Callable[..., Any]:
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


for _group, _name, _target in SUBCOMMANDS:
    _GROUPS[_group].command(_name)(_load(_target))
for _name, _target in SUBAPPS:
    app.add_typer(_load(_target), name=_name)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

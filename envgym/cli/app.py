"""The `envgym` command: the root group, ``list`` and ``play``, and every other command listed lazily.

Each lazy command is a function that imports its module with a plain import and returns the command, beside the
help line ``envgym --help`` shows, so the listing imports none of them and a command loads only its own module.
Commands live with their code: the CLI's own here in ``envgym/cli/``, benchmarks in ``envgym/bench/``, the
audit, scaffold and export commands in their modules. Nothing imports this module.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from envgym.cli.lazy import Lazy, lazy_typer


def _eval() -> typer.Typer:
    from envgym.cli.eval import eval_app

    return eval_app


def _train() -> Any:
    from envgym.cli.train import train_command

    return train_command


def _demo() -> Any:
    from envgym.cli.demo import demo_command

    return demo_command


def _audit() -> Any:
    from envgym.audit.cli import audit_command

    return audit_command


def _check() -> Any:
    from envgym.scaffold.cli import check_command

    return check_command


def _init() -> Any:
    from envgym.scaffold.cli import init_command

    return init_command


def _export() -> Any:
    from envgym.export import export_command

    return export_command


def _check_template() -> Any:
    from envgym.cli.check_template import check_template_command

    return check_template_command


def _serve_env() -> Any:
    from envgym.cli.serve import serve_env

    return serve_env


def _serve_sandbox() -> Any:
    from envgym.cli.serve import serve_sandbox

    return serve_sandbox


def _serve_search() -> Any:
    from envgym.cli.serve import serve_search

    return serve_search


def _serve_model() -> Any:
    from envgym.cli.serve import serve_model

    return serve_model


def _serve_tools() -> Any:
    from envgym.cli.serve import serve_tools

    return serve_tools


def _bench_env() -> Any:
    from envgym.bench.env import bench_env

    return bench_env


def _bench_verify() -> Any:
    from envgym.bench.verify import bench_verify

    return bench_verify


def _bench_sandbox() -> Any:
    from envgym.bench.sandbox import bench_sandbox

    return bench_sandbox


def _bench_search() -> Any:
    from envgym.bench.search import bench_search

    return bench_search


def _bench_rollout() -> Any:
    from envgym.bench.rollout import bench_rollout

    return bench_rollout


def _bench_train() -> Any:
    from envgym.bench.train import bench_train

    return bench_train


def _bench_learn() -> Any:
    from envgym.bench.learn import bench_learn

    return bench_learn


def _bench_server() -> Any:
    from envgym.bench.server import bench_server

    return bench_server


def _build_image() -> Any:
    from envgym.cli.sandbox import build_image_command

    return build_image_command


COMMANDS = {
    "eval": Lazy("Evaluate a model.", _eval),
    "train": Lazy("Train a model with GRPO on an env.", _train),
    "demo": Lazy("Evaluate, train with a recipe, evaluate again.", _demo),
    "audit": Lazy("Play generic adversarial actions against envs.", _audit),
    "check": Lazy(
        "Run check_env and the adversarial audit on an env, or on every env a package folder registers.", _check
    ),
    "init": Lazy("Scaffold a pip-installable env package.", _init),
    "export": Lazy("Export a run's episodes as chat messages (SFT) or token ids (with loss masks).", _export),
    "check-template": Lazy(
        "Check that a model's chat template keeps multi-turn, tool-calling conversations token-faithful.",
        _check_template,
    ),
}
SERVE_COMMANDS = {
    "env": Lazy("Serve envgym envs over HTTP as stateful sessions.", _serve_env),
    "sandbox": Lazy("Serve the sandbox over HTTP.", _serve_sandbox),
    "search": Lazy("Serve BM25 search with Search-R1's POST /retrieve.", _serve_search),
    "model": Lazy("Serve a local model (a training checkpoint too) behind an OpenAI-compatible API.", _serve_model),
    "tools": Lazy("Serve an env's tools as an MCP server.", _serve_tools),
}
BENCH_COMMANDS = {
    "env": Lazy("Episodes/s of one env, steps/s vectorized in each mode, and envgym's per-step overhead.", _bench_env),
    "verify": Lazy("Accuracy and speed of envgym's math verifier and of math-verify.", _bench_verify),
    "sandbox": Lazy("Sandbox throughput, latency and HumanEval time per backend.", _bench_sandbox),
    "search": Lazy("Measure search throughput on the synthetic world and MultiHopQA env steps/s.", _bench_search),
    "rollout": Lazy("Episodes/s and tokens/s of the rollout loop vs raw batched generation.", _bench_rollout),
    "train": Lazy("Seconds per GRPO step and peak RSS.", _bench_train),
    "learn": Lazy("Per-step reward curves of envgym's GRPOTrainer and TRL's GRPOTrainer.", _bench_learn),
    "server": Lazy("Env server throughput and latency with many concurrent sessions.", _bench_server),
}
SANDBOX_COMMANDS = {"build-image": Lazy("Build the Docker backend's image from this machine's Python.", _build_image)}

app = lazy_typer(
    COMMANDS, no_args_is_help=True, add_completion=False, help="Verifiable-reward environments for LLM agents."
)
app.add_typer(
    lazy_typer(SERVE_COMMANDS, no_args_is_help=True, help="HTTP servers (they bind 127.0.0.1 unless told otherwise)."),
    name="serve",
)
app.add_typer(
    lazy_typer(BENCH_COMMANDS, no_args_is_help=True, help="Benchmarks. The last line printed is one JSON object."),
    name="bench",
)
app.add_typer(
    lazy_typer(SANDBOX_COMMANDS, no_args_is_help=True, help="Sandbox maintenance (building its Docker image)."),
    name="sandbox",
)


@app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="Print a JSON array of env specs.")) -> None:
    """List the registered environments, each with what its last audit found (the trust record, docs/audit.md)."""
    import envgym
    from envgym.audit.record import audit_status, read_record

    specs = envgym.list_envs()
    record = read_record() or {}
    if as_json:
        print(json.dumps([{**s.to_dict(), "audit": audit_status(s.id, record=record)} for s in specs], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "max turns", "audit", "description")
    for spec in specs:
        marker = f" [red](unsafe: {spec.unsafe_reason or 'see docs/audit.md'})[/red]" if spec.unsafe else ""
        status = audit_status(spec.id, record=record)
        table.add_row(spec.id, str(spec.max_turns or "-"), status["status"], spec.description + marker)
    Console().print(table)


@app.command("play")
def play_command(
    env_id: str = typer.Argument(..., help="Env id, e.g. games/GuessNumber-v0."),
    seed: int = typer.Option(None, help="Seed for the episode."),
    task_index: int = typer.Option(None, help="Play this task of the env's task source."),
) -> None:
    """Play an environment yourself in the terminal (type your turn; an empty line ends it, Ctrl-D quits)."""
    from rich.console import Console

    import envgym

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
            console.print(
                f"[bold]episode {'terminated' if terminated else 'truncated'}[/bold], total reward {total:+.3f}"
            )
            break
    env.close()


def _show(console: Any, messages: list[dict[str, Any]]) -> None:
    for message in messages:
        console.print(
            f"[bold cyan]{message.get('role')}[/bold cyan]: {message.get('content')}", markup=True, highlight=False
        )


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


def main() -> None:
    app()


if __name__ == "__main__":
    main()

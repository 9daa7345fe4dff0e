"""``envgym demo``: the product end to end on one machine, offline: evaluate the packaged model on a suite,
train it with GRPO on a recipe, evaluate the trained model on the same suite, and print what changed.

Everything runs in this process on one copy of the model (the trainer's LoRA adapters are what the second
evaluation samples from), so nothing is written and reloaded between the three phases.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import typer

from envgym.cli.output import (
    DEBUG_HELP,
    VERBOSE_HELP,
    StepProgress,
    one_line_errors,
    quiet_libraries,
    training_callback,
)

DEMO_METRICS = ("mean_reward", "pass@1", "avg_tool_calls")
"""The rows of the before/after table; ``avg_tool_calls`` shows only for envs where a tool was called."""


def demo_command(
    suite: str = typer.Option(
        "default", "--suite", help="The suite evaluated before and after: a file or the name of an installed suite."
    ),
    recipe: str = typer.Option(
        "smollm2-arithmetic-cpu",
        "--recipe",
        help="A training recipe (GRPOConfig fields plus env, env_kwargs and model): a file or "
        "the name of an installed recipe.",
    ),
    out: Path = typer.Option(
        Path("runs/demo"), "--out", help="Folder for before/, train/, after/, comparison.md and comparison.html."
    ),
    steps: int = typer.Option(None, "--steps", help="Training steps (default: the recipe's max_steps)."),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Evaluate, train with a recipe, evaluate again; prints the before/after table and where the reports are."""
    with one_line_errors(debug):
        quiet_libraries(verbose)
        _demo(suite, recipe, out, steps)


def _demo(suite: str, recipe: str, out: Path, steps: int | None) -> None:
    from rich.console import Console

    from envgym.agents.engines.models import load_model
    from envgym.agents.evaluation.report import compare, write_reports
    from envgym.agents.evaluation.report_compare import write_comparison
    from envgym.agents.evaluation.suite import load_suite
    from envgym.agents.training.trainer import GRPOTrainer
    from envgym.cli.eval import evaluate_with_progress, print_table
    from envgym.cli.train import plan_training

    console = Console(width=max(Console().width, 150))
    started = time.perf_counter()
    configs, settings = load_suite(suite)
    plan = plan_training(
        env=None,
        model=None,
        config=recipe,
        env_kwargs=None,
        resume=None,
        engine="transformers",
        overrides={"max_steps": steps},
        default_model=settings.get("model") or "smollm2",
    )
    env, env_kwargs, model_name, config = plan.env, plan.env_kwargs, plan.model, plan.config
    from envgym.agents.engines.transformers_policy import TransformersPolicy

    console.print(
        f"[bold]envgym demo[/bold]: {model_name}; suite {suite}; recipe {recipe} ({env}, "
        f"{config.max_steps} steps) -> {out}"
    )
    model, tokenizer = load_model(model_name)

    console.rule("1/3 evaluate the model as it comes")
    before = evaluate_with_progress(
        TransformersPolicy(model, tokenizer, name=model_name),
        configs,
        out / "before",
        batch_size=32,
        seed=0,
        resume=False,
        model=model_name,
        console=console,
    )
    write_reports(before, out / "before")

    console.rule(f"2/3 train with GRPO on {env}")
    trainer = GRPOTrainer(
        model,
        tokenizer,
        plan.recipe.trainer_env,
        config,
        out_dir=out / "train",
        env_kwargs=env_kwargs if plan.mixture is None else None,
    )
    _train_with_progress(trainer, console)

    console.rule("3/3 evaluate the trained model")
    trained = f"{model_name} + GRPO"
    after = evaluate_with_progress(
        TransformersPolicy(trainer.model, tokenizer, name=trained),
        configs,
        out / "after",
        batch_size=32,
        seed=0,
        resume=False,
        model=trained,
        console=console,
    )
    write_reports(after, out / "after")

    header, rows = compare(before, after)
    rows = [row for row in rows if _shown(row)]
    print_table(console, header, rows)
    (out / "comparison.md").write_text(_markdown(header, rows))
    page = write_comparison(out / "before", out / "after", out)
    curve = [m.get("reward_mean", float("nan")) for m in trainer.history]
    first, last = statistics.fmean(curve[:10]), statistics.fmean(curve[-10:])
    console.print(f"training reward (mean of steps 1-10 -> last 10): {first:.3f} -> {last:.3f}")
    console.print(
        f"reports: {out / 'before' / 'report.html'}, {out / 'after' / 'report.html'}; "
        f"reward curve: {out / 'train' / 'reward_curve.png'}; table: {out / 'comparison.md'}; "
        f"before/after transcripts: {page}"
    )
    console.print(f"demo wall time: {time.perf_counter() - started:.0f} s")


def _train_with_progress(trainer: Any, console: Any) -> None:
    with StepProgress(console, "GRPO", trainer.config.max_steps, trainer.step) as progress:
        trainer.train(on_step=training_callback(progress, console))


def _shown(row: list[str]) -> bool:
    """Whether a ``compare`` row (env, metric, before, after, change) belongs in the demo's table: the tool-use
    row only where a tool was called, before or after (elsewhere it is 0 -> 0 and says nothing)."""
    env_id, metric, before, after, _ = row
    return metric in DEMO_METRICS and (metric != "avg_tool_calls" or float(before) + float(after) > 0)


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"

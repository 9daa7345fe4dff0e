"""`envgym eval`: evaluate a model on envs or a suite; `envgym eval compare A B`: compare two runs.

Light at import (typer only); models, torch and plots load inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from envgym.cli.output import DEBUG_HELP, VERBOSE_HELP, StepProgress, one_line_errors, quiet_libraries

eval_app = typer.Typer(help="Evaluate a model: pass@k, maj@k, rewards, turns, tokens; reports with plots.")


@eval_app.callback(invoke_without_command=True)
def eval_command(
    ctx: typer.Context,
    env: str = typer.Option(None, "--env", help="Env id(s), comma-separated, e.g. games/GuessNumber-v0."),
    suite: str = typer.Option(
        None, "--suite", help="A YAML suite file (see suites/default.yaml) or the name of an installed suite (default)."
    ),
    model: str = typer.Option(
        None,
        "--model",
        help="Local path, HF id, or the default SmolLM2-135M-Instruct; with --base-url, the served model's name.",
    ),
    base_url: str = typer.Option(None, "--base-url", help="Evaluate through an OpenAI-compatible server instead."),
    endpoint: str = typer.Option(
        "chat",
        help="With --base-url: chat (the server applies its chat template) or "
        "completions (token level: token ids in and out through --tokenizer).",
    ),
    tokenizer: str = typer.Option(None, help="Tokenizer for --endpoint completions (default: --model)."),
    engine: str = typer.Option(
        None,
        "--engine",
        help="transformers | vllm (not with --base-url; default: vllm where it is installed, else transformers).",
    ),
    dtype: str = typer.Option(
        None,
        help="Weights dtype: float32 | bfloat16 | float16 | auto (default: float32 "
        "on CPU, the engine's choice on GPU).",
    ),
    enforce_eager: bool = typer.Option(False, "--enforce-eager", help="vllm: no CUDA graphs or compilation."),
    max_model_len: int = typer.Option(None, help="vllm: longest sequence (prompt + completion) the engine plans for."),
    num_generations: int = typer.Option(
        None, "--num-generations", help="Samples per task, G as in training (overrides the suite)."
    ),
    n_tasks: int = typer.Option(None, "--n-tasks", help="Tasks per env (overrides the suite)."),
    k: str = typer.Option(None, "--k", help="Comma-separated ks for pass@k and maj@k, e.g. 1,4,8."),
    max_completion_length: int = typer.Option(None, help="Most new tokens per turn (overrides the suite)."),
    temperature: float = typer.Option(None, help="Sampling temperature, 0 = greedy (overrides the suite)."),
    max_turns: int = typer.Option(
        None, help="The envs' turn limit (make's max_turns, added to every env's env_kwargs; overrides the suite)."
    ),
    reward: Path = typer.Option(
        None,
        "--reward",
        help="A YAML/JSON file whose reward spec (a recipe's `reward:` "
        "section, or the spec itself; docs/rewards.md) composes every env's reward.",
    ),
    batch_size: int = typer.Option(32, help="Episodes generated together."),
    seed: int = typer.Option(0, help="Seed of envs and sampling."),
    out: Path = typer.Option(Path("runs/eval"), "--out", help="Output folder."),
    resume: bool = typer.Option(
        True,
        help="Reuse finished tasks found in OUT/samples.jsonl (only when made with "
        "the same model, settings and seed); --no-resume discards them.",
    ),
    keep_tokens: bool = typer.Option(
        False,
        "--keep-tokens",
        help="Also keep each sample's token ids and loss mask "
        "in OUT/samples.jsonl, for `envgym export --tokens` (a local model or "
        "--endpoint completions). Off by default: each token adds about 10 bytes, "
        "which roughly doubles samples.jsonl.",
    ),
    device: str = typer.Option(None, help="torch device for the transformers engine."),
    env_kwargs: str = typer.Option(
        None,
        "--env-kwargs",
        help="JSON object of env arguments for every env, e.g. "
        "'{\"difficulty\": 1}' (merged into each suite entry's env_kwargs).",
    ),
    report_to: str = typer.Option(
        None,
        "--report-to",
        help="Also send the results, settings and sample episodes to these trackers, "
        "comma-separated: trackio, wandb, tensorboard.",
    ),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Evaluate a model on envs or a suite; writes OUT/results.json, samples.jsonl, report.md and report.html."""
    if ctx.invoked_subcommand is not None:
        return
    with one_line_errors(debug):
        quiet_libraries(verbose)
        _evaluate(
            env=env,
            suite=suite,
            model=model,
            base_url=base_url,
            endpoint=endpoint,
            tokenizer=tokenizer,
            engine=engine,
            dtype=dtype,
            enforce_eager=enforce_eager,
            max_model_len=max_model_len,
            num_generations=num_generations,
            n_tasks=n_tasks,
            k=k,
            max_completion_length=max_completion_length,
            temperature=temperature,
            max_turns=max_turns,
            reward=reward,
            batch_size=batch_size,
            seed=seed,
            out=out,
            resume=resume,
            device=device,
            env_kwargs=env_kwargs,
            report_to=report_to,
            keep_tokens=keep_tokens,
        )


def _evaluate(
    *,
    env: str | None,
    suite: str | None,
    model: str | None,
    base_url: str | None,
    endpoint: str,
    tokenizer: str | None,
    engine: str | None,
    dtype: str | None,
    enforce_eager: bool,
    max_model_len: int | None,
    num_generations: int | None,
    n_tasks: int | None,
    k: str | None,
    max_completion_length: int | None,
    temperature: float | None,
    max_turns: int | None,
    reward: Path | None,
    batch_size: int,
    seed: int,
    out: Path,
    resume: bool,
    device: str | None,
    env_kwargs: str | None,
    report_to: str | None = None,
    keep_tokens: bool = False,
) -> None:
    """``envgym eval`` itself: every input checked (one line each) before the model loads."""
    from rich.console import Console

    from envgym.cli.options import EngineOptions
    from envgym.cli.preflight import check_model_name, check_report_to, env_kwargs_object
    from envgym.config import BadInput, validate

    console = Console(width=max(Console().width, 190))  # the metrics table is wide; never squeeze it
    trackers = check_report_to(report_to)
    engine_options = {
        "engine": engine,
        "base_url": base_url,
        "endpoint": endpoint,
        "tokenizer": tokenizer,
        "dtype": dtype,
        "enforce_eager": enforce_eager,
        "max_model_len": max_model_len,
        "device": device,
    }
    options = validate(EngineOptions, {key: value for key, value in engine_options.items() if value is not None}, "--")
    overrides = {
        key: value
        for key, value in dict(
            num_generations=num_generations,
            n_tasks=n_tasks,
            max_completion_length=max_completion_length,
            temperature=temperature,
        ).items()
        if value is not None
    }
    if k is not None:
        overrides["k"] = _ks(k)
    if reward is not None:
        overrides["reward"] = _reward_section(reward)
    extra = env_kwargs_object(env_kwargs) if env_kwargs else {}
    if max_turns is not None:
        extra["max_turns"] = max_turns
    configs, settings = _configs(env, suite, overrides, extra)
    model = model or settings.get("model") or "HuggingFaceTB/SmolLM2-135M-Instruct"
    if base_url is None:  # a served model's name is the server's business
        check_model_name(model)
    elif keep_tokens and endpoint == "chat":
        raise BadInput("--keep-tokens needs token ids, which --endpoint chat never returns: use --endpoint completions")
    console.print(f"[bold]envgym eval[/bold]: {model} on {len(configs)} env(s) -> {out}", soft_wrap=True)
    from envgym.agents.evaluation.eval_resume import ResumeMismatch

    try:
        policy = options.make_policy(model)
    except ImportError as error:  # an optional engine that is not installed: say which extra brings it
        raise BadInput(str(error)) from None
    template_tokenizer = getattr(policy, "tokenizer", None)
    if template_tokenizer is not None and any(c.template_tools for c in configs):
        from envgym.agents.engines.templates import tool_template_warning

        problem = tool_template_warning(template_tokenizer)
        if problem:
            console.print(
                f"[yellow]warning:[/yellow] template_tools is on, but {problem}; the model will not see the tools "
                "as the template means them. Describe the tools in the prompt instead (the env's prompt form, "
                "e.g. prompt_format in env_kwargs) or use a model whose template renders tool calls.",
                soft_wrap=True,
            )
    try:
        results = evaluate_with_progress(
            policy,
            configs,
            out,
            batch_size=batch_size,
            seed=seed,
            resume=resume,
            model=model,
            console=console,
            keep_tokens=keep_tokens,
        )
    except ResumeMismatch as error:
        raise BadInput(str(error)) from None
    record_audit_status(results, configs, out)

    from envgym.agents.evaluation.report import group_rows, table_rows, write_reports

    md, page = write_reports(results, out)
    print_table(console, *table_rows(results))
    group_header, groups = group_rows(results)
    if groups:
        print_table(console, group_header, groups)
    console.print(f"results: {out / 'results.json'}\nreport: {page}  (markdown: {md})")
    # An env none of whose samples could be scored measured nothing: the run must not look like a result.
    dead = [
        env_id
        for env_id, summary in results["envs"].items()
        if summary.get("n_samples") and summary.get("n_failed") == summary["n_samples"]
    ]
    if trackers:
        from envgym.agents.runs import SAMPLES_FILE
        from envgym.agents.training.tracking import log_eval_results

        samples = [json.loads(line) for line in (out / SAMPLES_FILE).read_text(encoding="utf-8").splitlines()]
        log_eval_results(trackers, results, samples, out)
        console.print(f"sent to {', '.join(trackers)}")
    if dead:
        example = results["envs"][dead[0]].get("failure_example", "")
        console.print(
            f"[red]error:[/red] every sample of {', '.join(dead)} failed (not scored 0: failed), e.g. {example}",
            soft_wrap=True,
        )
        raise SystemExit(1)


def record_audit_status(results: dict[str, Any], configs: list[Any], out: Path) -> None:
    """Add to ``results.json`` what the trust record says of each env with the reward it was evaluated with
    (docs/audit.md), so a number says whether its reward held under attack."""
    from envgym.agents.evaluation.evaluate import RESULTS_FILE
    from envgym.audit.record import audit_status

    results["audit"] = {config.env: audit_status(config.env, config.reward) for config in configs}
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=2))


@eval_app.command("compare")
def compare_command(
    run_a: Path = typer.Argument(..., help="First run folder (or its results.json)."),
    run_b: Path = typer.Argument(..., help="Second run folder (or its results.json)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison rows as JSON."),
    out: Path = typer.Option(
        None,
        "--out",
        help="Also write OUT/comparison.html: per env both rewards, per task "
        "both runs' transcripts side by side, tasks that flipped.",
    ),
) -> None:
    """Compare two eval runs metric by metric (B - A); with --out, a before/after page too."""
    from rich.console import Console

    from envgym.agents.evaluation.report import compare

    results = [_read_results(path) for path in (run_a, run_b)]
    header, rows = compare(*results)
    page = None
    if out is not None:
        from envgym.agents.evaluation.report_compare import write_comparison

        page = write_comparison(run_a, run_b, out)
    if as_json:
        print(json.dumps([dict(zip(header[:2] + ["a", "b", "delta"], row)) for row in rows]))
        return
    print_table(Console(), header, rows)
    if page is not None:
        Console().print(f"comparison page: {page}", soft_wrap=True)


@eval_app.command("report")
def report_command(run: Path = typer.Argument(..., help="A run folder written by `envgym eval --out`.")) -> None:
    """Write RUN's reports again (report.md, report.html, a transcript page per env) from its results.json and
    samples.jsonl, e.g. for a run made before the transcript pages existed."""
    from envgym.agents.evaluation.report import write_reports

    md, page = write_reports(_read_results(run), run if run.is_dir() else run.parent)
    print(f"report: {page}  (markdown: {md})")


def _reward_section(path: Path) -> dict[str, Any]:
    """The reward spec in a file: its ``reward:`` section (a training recipe) or the whole file."""
    from envgym.config import BadInput, read_mapping

    if not path.exists():
        raise BadInput(f"--reward: the file {path} does not exist")
    data = read_mapping(path)
    return data["reward"] if "reward" in data else data


def _configs(
    env: str | None, suite: str | None, overrides: dict[str, Any], env_kwargs: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """The env evaluations of ``--suite`` or ``--env``, with the flags' overrides and ``--env-kwargs`` applied."""
    from envgym.agents.evaluation.suite import build_env_eval, load_suite
    from envgym.config import BadInput

    if (env is None) == (suite is None):
        raise BadInput("give exactly one of --env ID[,ID] or --suite FILE")
    if suite is not None:
        return load_suite(suite, overrides, env_kwargs=env_kwargs)
    configs = [
        build_env_eval({"env": env_id.strip(), **overrides, "env_kwargs": env_kwargs}, where="--env")
        for env_id in env.split(",")
    ]
    return configs, {}


def evaluate_with_progress(
    policy: Any,
    configs: list[Any],
    out: Path,
    *,
    batch_size: int,
    seed: int,
    resume: bool,
    model: str,
    console: Any,
    keep_tokens: bool = False,
) -> dict[str, Any]:
    """:func:`~envgym.agents.evaluation.evaluate.evaluate` with a progress bar per env (``envgym eval`` and ``envgym
    demo``); without a terminal, one plain line per env when it is done."""
    from envgym.agents.evaluation.evaluate import evaluate

    if not console.is_terminal:
        shown: dict[str, StepProgress] = {}

        def on_line(env_id: str, done: int, total: int) -> None:
            if env_id not in shown:
                shown[env_id] = StepProgress(console, f"eval {env_id}: samples", total, done)
            if done == total:
                shown[env_id].update(done, "")

        return evaluate(
            policy,
            configs,
            out,
            batch_size=batch_size,
            seed=seed,
            resume=resume,
            model_name=model,
            on_progress=on_line,
            keep_tokens=keep_tokens,
        )
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        bars: dict[str, Any] = {}

        def on_progress(env_id: str, done: int, total: int) -> None:
            if env_id not in bars:
                bars[env_id] = progress.add_task(env_id, total=total)
            progress.update(bars[env_id], completed=done)

        return evaluate(
            policy,
            configs,
            out,
            batch_size=batch_size,
            seed=seed,
            resume=resume,
            model_name=model,
            on_progress=on_progress,
            keep_tokens=keep_tokens,
        )


def print_table(console: Any, header: list[str], rows: list[list[str]]) -> None:
    """Print rows of strings under ``header`` as a rich table."""
    from rich.table import Table

    table = Table(*header)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _read_results(path: Path) -> dict[str, Any]:
    path = path / "results.json" if path.is_dir() else path
    if not path.exists():
        raise typer.BadParameter(f"{path} does not exist; give a run folder written by `envgym eval --out`")
    return json.loads(path.read_text())


def _ks(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"--k takes comma-separated integers like 1,4,8, got {text!r}") from None

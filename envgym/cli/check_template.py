"""``envgym check-template MODEL``: is a model's chat template token-faithful over multi-turn tool calls? The check
itself is :func:`envgym.agents.engines.templates.check_template`."""

from __future__ import annotations

import json

import typer


def check_template_command(
    model: str = typer.Argument(
        ...,
        help="Model name or path: 'smollm2' (packaged), a local folder (a tokenizer "
        "folder alone is enough), a .gguf file or a cached Hub id.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Check that a model's chat template keeps multi-turn, tool-calling conversations token-faithful."""
    from envgym.agents.engines.models import load_tokenizer
    from envgym.agents.engines.templates import check_template, format_report

    try:
        tokenizer = load_tokenizer(model)
    except (FileNotFoundError, OSError, ValueError) as error:
        typer.echo(f"cannot load the tokenizer of {model!r}: {error}", err=True)
        raise typer.Exit(2) from None
    if not getattr(tokenizer, "chat_template", None):
        typer.echo(f"{model!r} has no chat template", err=True)
        raise typer.Exit(2)
    report = check_template(tokenizer)
    typer.echo(json.dumps({"model": model, **report.to_dict()}) if as_json else format_report(report))
    if report.deltas_error is not None:
        raise typer.Exit(1)

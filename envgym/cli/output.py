"""What the model commands (``train``, ``eval``, ``serve model``, ``demo``) print: one-line errors, quiet
libraries, and progress that works with or without a terminal.

Light at import: nothing here imports ``transformers`` or ``torch``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import typer

from envgym.config import BadInput

DEBUG_HELP = "Show the full traceback of an error (default: one line)."
VERBOSE_HELP = "Show library warnings, logs and progress bars (weights loading, GGUF de-quantization)."


@contextlib.contextmanager
def one_line_errors(debug: bool = False) -> Iterator[None]:
    """Turn an exception into one line on stderr: a bad input (:class:`BadInput`, ``typer.BadParameter``)
    exits with code 2, any other failure with 1; ``debug`` lets the exception and its traceback through."""
    try:
        yield
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except (BadInput, typer.BadParameter) as error:
        if debug:
            raise
        typer.echo(f"error: {_one_line(error)}", err=True)
        raise typer.Exit(2) from None
    except Exception as error:  # a failure inside a library: its message, not its stack, unless asked
        if debug:
            raise
        typer.echo(f"error: {type(error).__name__}: {_one_line(error)} (--debug shows the traceback)", err=True)
        raise typer.Exit(1) from None


def _one_line(error: BaseException) -> str:
    text = error.format_message() if isinstance(error, typer.BadParameter) else str(error)
    return " ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def quiet_libraries(verbose: bool) -> None:
    """Unless ``verbose``: no library warnings (a transformers FutureWarning, peft's "Could not find a config
    file"), no transformers info logs and no Hugging Face progress bars (weights loading, GGUF
    de-quantization). Set before transformers is imported, so it reads them at import; applied again after,
    for a process that imported it already."""
    if verbose:
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")  # the GGUF de-quantization bar is a plain tqdm, deaf to the above
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    for module in ("transformers", "peft", "torch", "accelerate", "huggingface_hub", "gguf"):
        warnings.filterwarnings("ignore", module=rf"{module}(\.|$)")
    warnings.filterwarnings("ignore", category=FutureWarning)
    if "transformers" in sys.modules:
        from transformers.utils import logging

        logging.set_verbosity_error()
        logging.disable_progress_bar()


class StepProgress:
    """Progress of ``total`` units (training steps, eval samples): a rich bar on a terminal; without one (CI,
    ``nohup``, a pipe) one plain line per call of :meth:`line` with the time per unit and the ETA."""

    def __init__(self, console: Any, label: str, total: int, done: int = 0):
        self.console, self.label, self.total = console, label, total
        self.start_done, self.started = done, time.perf_counter()
        self.bar: Any = None
        self.task: Any = None
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn(f"[bold]{label}[/bold]"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[status]}"),
                console=console,
            )
            self.task = self.bar.add_task(label, total=total, completed=done, status="")

    def __enter__(self) -> StepProgress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def update(self, done: int, status: str = "", *, line: bool = True) -> None:
        """Show ``done`` of ``total`` with ``status``; without a terminal, print a line unless ``line`` is false."""
        if self.bar is not None:
            self.bar.update(self.task, completed=done, status=status)
            return
        if not line:
            return
        elapsed = time.perf_counter() - self.started
        per_unit = elapsed / max(1, done - self.start_done)
        eta = per_unit * max(0, self.total - done)
        # soft_wrap: one line whatever the console's width, so a log holds one line per step
        self.console.print(
            f"{self.label} {done}/{self.total}  {status}  {per_unit:.1f} s each  elapsed "
            f"{_clock(elapsed)}  ETA {_clock(eta)}".replace("    ", "  "),
            soft_wrap=True,
            markup=False,
            highlight=False,
        )


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def step_status(metrics: dict[str, Any]) -> str:
    """The status of one training step: reward, loss and the groups with no learning signal."""
    status = f"reward {metrics.get('reward_mean', float('nan')):.3f}  loss {metrics.get('loss', float('nan')):+.4f}"
    if metrics.get("zero_advantage_groups"):
        status += f"  zero-advantage groups {metrics['zero_advantage_groups']}/{metrics.get('groups', '?')}"
    return status


def training_callback(progress: StepProgress, console: Any) -> Callable[[dict[str, Any]], None]:
    """``on_step`` for :meth:`GRPOTrainer.train`: update the progress and print a step's warning once."""
    warned: set[str] = set()

    def on_step(metrics: dict[str, Any]) -> None:
        progress.update(metrics["step"], step_status(metrics))
        warning = metrics.get("warning")
        if warning and warning.split(":")[0] not in warned:  # repeated every step it holds: said once
            warned.add(warning.split(":")[0])
            console.print(
                f"[yellow]warning (step {metrics['step']}):[/yellow] {warning}", soft_wrap=True, highlight=False
            )

    return on_step

"""What the model commands print: one-line errors, quiet libraries, plain progress lines without a terminal."""

import io
import os
import warnings

import pytest
import typer
from rich.console import Console

from envgym.cli.output import StepProgress, one_line_errors, quiet_libraries
from envgym.config import BadInput

QUIET = ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE", "TRANSFORMERS_VERBOSITY")


def test_a_bad_input_is_one_line_on_stderr_with_exit_code_2(capsys):
    with pytest.raises(typer.Exit) as exit_, one_line_errors():
        raise BadInput("x.yaml: learning_rate must be a float, got 'fast'")
    assert exit_.value.exit_code == 2
    assert capsys.readouterr().err == "error: x.yaml: learning_rate must be a float, got 'fast'\n"


def test_a_library_failure_is_one_line_with_its_type_and_exit_code_1(capsys):
    with pytest.raises(typer.Exit) as exit_, one_line_errors():
        raise OSError("disk full\nwhile writing")
    assert exit_.value.exit_code == 1
    assert capsys.readouterr().err == "error: OSError: disk full while writing (--debug shows the traceback)\n"


def test_debug_lets_the_exception_through():
    with pytest.raises(BadInput), one_line_errors(debug=True):
        raise BadInput("bad")


def test_quiet_libraries_turns_off_progress_bars_logs_and_warnings(monkeypatch):
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in QUIET})  # undone after
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_libraries(verbose=False)
        warnings.warn("deprecated", FutureWarning, stacklevel=1)
    assert [os.environ[name] for name in QUIET] == ["1", "1", "error"] and caught == []


def test_verbose_leaves_libraries_as_they_are(monkeypatch):
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in QUIET})  # undone after
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_libraries(verbose=True)
        warnings.warn("deprecated", FutureWarning, stacklevel=1)
    assert not any(name in os.environ for name in QUIET) and len(caught) == 1


def test_without_a_terminal_progress_is_one_plain_line_per_update_with_eta():
    console = Console(file=io.StringIO(), width=40)  # narrow: a line must still not wrap
    with StepProgress(console, "GRPO", total=4) as progress:
        for step in (1, 2):
            progress.update(step, "reward 0.500  loss +0.0100")
    lines = console.file.getvalue().splitlines()
    assert [line.split()[:2] for line in lines] == [["GRPO", "1/4"], ["GRPO", "2/4"]]
    assert all("reward 0.500" in line and "ETA" in line for line in lines)

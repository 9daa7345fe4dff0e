"""`envgym eval` resumes only into the setup that made the samples on file (through the real CLI, tiny model)."""

import json
import shutil

import pytest
from helpers.tiny_models import tiny_model_path
from typer.testing import CliRunner

from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.agents.evaluation.eval_resume import ResumeMismatch
from envgym.agents.evaluation.evaluate import evaluate
from envgym.agents.evaluation.suite import build_env_eval
from envgym.agents.runs import SAMPLES_FILE
from envgym.cli.app import app

RUN = [
    "eval",
    "--env",
    "math/Arithmetic-v0",
    "--num-generations",
    "2",
    "--n-tasks",
    "2",
    "--max-completion-length",
    "4",
    "--temperature",
    "1.0",
    "--batch-size",
    "4",
]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run's folder and its samples file's text."""
    out = tmp_path_factory.mktemp("eval")
    result = CliRunner().invoke(app, RUN + ["--model", tiny_model_path(), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, (out / SAMPLES_FILE).read_text()


@pytest.fixture(scope="module")
def other_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "tiny-copy"
    shutil.copytree(tiny_model_path(), path)
    return str(path)


def test_every_sample_records_the_setup_that_made_it(finished):
    _, text = finished
    setups = [json.loads(line)["setup"] for line in text.splitlines()]
    assert all(setup == setups[0] for setup in setups)
    assert setups[0]["model"] == tiny_model_path() and setups[0]["policy"]["engine"] == "transformers"
    assert setups[0]["env"]["temperature"] == 1.0 and setups[0]["env"]["max_completion_length"] == 4


@pytest.mark.parametrize(
    "change, named",
    [
        ("model", "model"),
        (["--temperature", "0.5"], "temperature"),
        (["--max-completion-length", "5"], "max_completion_length"),
        (["--seed", "1"], "seed"),
        (["--max-turns", "1"], "max_turns"),
    ],
)
def test_a_changed_model_or_sampling_setting_never_reuses_old_samples(finished, other_model, change, named):
    out, before = finished
    model = other_model if change == "model" else tiny_model_path()
    extra = [] if change == "model" else change
    result = CliRunner().invoke(app, RUN + extra + ["--model", model, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "another setup" in result.output and f"{named}:" in result.output and "--no-resume" in result.output
    assert (out / SAMPLES_FILE).read_text() == before


def test_no_resume_starts_the_folder_over_with_the_new_setup(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished[0], out)
    result = CliRunner().invoke(
        app, RUN + ["--temperature", "0.5", "--no-resume", "--model", tiny_model_path(), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / SAMPLES_FILE).read_text().splitlines()]
    assert len(lines) == 4 and all(line["setup"]["env"]["temperature"] == 0.5 for line in lines)


def test_samples_written_without_a_setup_are_not_reused(finished, tmp_path):
    (tmp_path / SAMPLES_FILE).write_text(
        "".join(
            json.dumps({k: v for k, v in json.loads(line).items() if k != "setup"}) + "\n"
            for line in finished[1].splitlines()
        )
    )
    policy = TransformersPolicy(tiny_model_path(), device="cpu")
    config = build_env_eval(
        {
            "env": "math/Arithmetic-v0",
            "num_generations": 2,
            "n_tasks": 2,
            "max_completion_length": 4,
            "temperature": 1.0,
        }
    )
    with pytest.raises(ResumeMismatch, match="do not record their setup"):
        evaluate(policy, [config], tmp_path, batch_size=4, model_name=tiny_model_path())

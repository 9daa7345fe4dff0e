"""`envgym train` on a recipe with a mixture (`envs:`) or a curriculum: checked before any model loads, trained
end to end on the tiny model with per-env metrics and summary."""

import json

import pytest
from helpers.tiny_models import tiny_model_path
from typer.testing import CliRunner

from envgym.cli.app import app
from envgym.cli.train import plan_training
from envgym.config import BadInput

MIXTURE = """\
envs:
  - {env: math/Arithmetic-v0, weight: 2, env_kwargs: {difficulty: 1}}
  - {env: strings/Compose-v0, env_kwargs: {depths: [1], max_turns: 1}}
num_tasks_per_step: 2
max_completion_length: 4
"""


def plan(tmp_path, recipe, **flags):
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe)
    arguments = {
        "env": None,
        "model": tiny_model_path(),
        "config": str(path),
        "env_kwargs": None,
        "resume": None,
        "engine": "transformers",
        "overrides": {},
        **flags,
    }
    return plan_training(**arguments)


def test_a_recipe_with_envs_plans_a_weighted_mixture(tmp_path):
    training = plan(tmp_path, MIXTURE)
    assert [m.name for m in training.mixture.members] == ["math/Arithmetic-v0", "strings/Compose-v0"]
    assert training.mixture.probabilities.tolist() == pytest.approx([2 / 3, 1 / 3])
    assert training.recipe.trainer_env is training.mixture


def test_env_flag_replaces_the_recipes_mixture(tmp_path):
    training = plan(tmp_path, MIXTURE, env="games/GuessNumber-v0")
    assert training.env == "games/GuessNumber-v0" and training.mixture is None


def test_one_env_with_a_curriculum_plans_a_mixture_of_one(tmp_path):
    training = plan(tmp_path, "env: math/Arithmetic-v0\ncurriculum: {levels: {difficulty: [1, 2, 3]}}\n")
    [member] = training.mixture.members
    assert member.curriculum.levels == [{"difficulty": 1}, {"difficulty": 2}, {"difficulty": 3}]


@pytest.mark.parametrize(
    "recipe, flags, message",
    [
        ("env: math/Arithmetic-v0\n" + MIXTURE, {}, "env: \\(one env\\) or envs: \\(a mixture\\), not both"),
        (MIXTURE + "reward: {components: [{name: correct, source: env}]}\n", {}, "inside each entry"),
        (MIXTURE + "curriculum: {levels: {difficulty: [1, 2]}}\n", {}, "its own curriculum"),
        (MIXTURE, {"env_kwargs": '{"difficulty": 2}'}, "--env-kwargs sets one env's arguments"),
        ("envs:\n  - {env: math/Arithmetic-v0, weight: 0}\n", {}, "weight must be a number > 0"),
        ("envs:\n  - {env: math/Arithmetc-v0}\n", {}, "Did you mean"),
        ("envs:\n  - {env: math/Arithmetic-v0, turns: 1}\n", {}, "envs\\[0\\]: unknown key 'turns'; known keys are"),
        ("env: math/Arithmetic-v0\ncurriculum: {levels: {dificulty: [1, 2]}}\n", {}, "takes no argument 'dificulty'"),
    ],
)
def test_a_bad_mixture_recipe_is_refused_before_the_model_loads(tmp_path, recipe, flags, message):
    with pytest.raises(BadInput, match=message):
        plan(tmp_path, recipe, **flags)


def test_train_on_a_mixture_of_two_envs_writes_per_env_metrics_and_summary(tmp_path):
    config = tmp_path / "mix.yaml"
    config.write_text(MIXTURE)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--config",
            str(config),
            "--model",
            tiny_model_path(),
            "--steps",
            "2",
            "--num-generations",
            "2",
            "--out",
            str(out),
            "--device",
            "cpu",
            "--engine",
            "transformers",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in lines] == [1, 2]
    assert all(
        sum(m.get(f"env/{name}/groups_drawn", 0) for name in ("math/Arithmetic-v0", "strings/Compose-v0")) == 2
        for m in lines
    )
    assert "math/Arithmetic-v0: trained on" in result.output and "strings/Compose-v0: trained on" in result.output
    assert "--env math/Arithmetic-v0,strings/Compose-v0" in result.output  # the eval command covers both


@pytest.mark.slow
def test_the_guru_mix_recipe_starts_on_smollm2_with_three_envs_metrics(tmp_path):
    """docs/training.md ("Recipe: SmolLM2-135M on a three-domain mixture, CPU"): two steps of the installed recipe."""
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--config",
            "guru-mix-cpu",
            "--steps",
            "2",
            "--out",
            str(out),
            "--device",
            "cpu",
            "--engine",
            "transformers",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    names = ("math/Arithmetic-v0", "strings/Compose-v0", "science/MultipleChoice-v0")
    assert all(sum(m[f"env/{name}/groups_drawn"] for name in names) == 3 for m in lines)
    assert "curriculum/math/Arithmetic-v0/level" in lines[0]


def test_train_one_env_with_a_curriculum_logs_its_level(tmp_path):
    config = tmp_path / "curriculum.yaml"
    config.write_text(
        "env: math/Arithmetic-v0\nenv_kwargs: {max_turns: 1}\nnum_tasks_per_step: 2\n"
        "max_completion_length: 4\ncurriculum: {levels: {difficulty: [1, 2]}, window: 4}\n"
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--config",
            str(config),
            "--model",
            tiny_model_path(),
            "--steps",
            "1",
            "--num-generations",
            "2",
            "--out",
            str(out),
            "--device",
            "cpu",
            "--engine",
            "transformers",
        ],
    )
    assert result.exit_code == 0, result.output
    (metrics,) = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert (
        metrics["curriculum/math/Arithmetic-v0/level"] == 0 and metrics["curriculum/math/Arithmetic-v0/difficulty"] == 1
    )
    assert "curriculum level 1/2" in result.output

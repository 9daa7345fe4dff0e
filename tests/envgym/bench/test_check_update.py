"""``envgym bench learn --check-update``: our GRPO gradient and TRL's on one batch, with the same LoRA weights.

The tiny model plays SayADigit (reward 1 when the reply holds a digit), so a group's rewards differ and the
gradient is not zero."""

import json

import pytest
from helpers.extras import require
from helpers.say_a_digit import SayADigit
from helpers.tiny_models import tiny_model_path
from typer.testing import CliRunner

import envgym

ENV = "test/SayADigitCheck-v0"


@pytest.fixture(scope="module", autouse=True)
def say_a_digit():
    envgym.register(ENV, SayADigit)
    yield
    envgym.registration.registry.pop(ENV)


def config(**settings):
    from envgym.agents.training.config import GRPOConfig

    values = dict(
        num_generations=4,
        num_tasks_per_step=2,
        max_completion_length=8,
        lora_r=4,
        lora_alpha=8,
        temperature=1.0,
        seed=1,
    )
    return GRPOConfig(**{**values, **settings})


def check(**trl_settings):
    require("peers")
    from envgym.bench.check_update import check_update

    return check_update(tiny_model_path(), ENV, {}, config(), trl_settings=trl_settings or None)


def test_our_gradient_on_a_batch_is_trls_on_the_same_batch():
    result = check()
    assert result["passed"], result
    assert result["cosine"] >= 0.9999 and abs(result["norm_ratio"] - 1) <= 1e-3
    assert result["policy_tokens"]["envgym"] == result["policy_tokens"]["trl"] > 0
    assert result["grad_norm"]["envgym"] > 0
    assert any(len(set(group)) > 1 for group in result["rewards"])  # a group whose rewards differ: a real gradient


def test_a_trl_setting_that_differs_from_ours_fails_the_check():
    # TRL not dividing advantages by the group's std: the same batch, another update.
    result = check(scale_rewards="none")
    assert not result["passed"]
    assert abs(result["norm_ratio"] - 1) > 1e-3


def test_a_recipe_without_lora_is_refused_with_the_reason():
    require("peers")
    from envgym.bench.check_update import check_update

    with pytest.raises(ValueError, match="lora_r > 0"):
        check_update(tiny_model_path(), ENV, {}, config(lora_r=0))


def test_the_cli_prints_the_check_as_json(tmp_path):
    require("peers")
    from envgym.cli.app import app

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        f"env: {ENV}\nmodel: {tiny_model_path()}\nnum_generations: 4\nnum_tasks_per_step: 2\n"
        "max_completion_length: 8\nlora_r: 4\nlora_alpha: 8\ntemperature: 1.0\nseed: 1\nmax_steps: 4\n"
    )
    result = CliRunner().invoke(app, ["bench", "learn", "--check-update", "--recipe", str(recipe), "--json"])
    assert result.exit_code == 0, result.output
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["benchmark"] == "learn-check-update" and line["passed"] is True

"""`envgym train` end to end on the tiny model: flags and a config file in, metrics and a checkpoint out."""

import json

from typer.testing import CliRunner

from envgym.cli import app
from helpers.tiny_models import tiny_model_path


def test_train_command_writes_metrics_checkpoint_and_plot(tmp_path):
    from envgym.agents.policy import default_engine

    config = tmp_path / "grpo.yaml"
    config.write_text("num_tasks_per_step: 1\nmax_completion_length: 4\nmax_turns: 2\nenv_kwargs: {high: 3}\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", "--env", "games/GuessNumber-v0", "--model", tiny_model_path(),
                                      "--steps", "1", "--group-size", "2", "--config", str(config), "--out", str(out),
                                      "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert f"rollout engine: {default_engine()}" in result.output
    (metrics,) = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert metrics["step"] == 1 and metrics["episodes"] == 2 and metrics["turns_mean"] <= 2
    assert (out / "checkpoints" / "step-1" / "trainer_state.pt").exists()
    assert (out / "reward_curve.png").exists()


def test_unknown_config_field_is_refused_with_the_known_ones(tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text("lr: 0.1\n")
    result = CliRunner().invoke(app, ["train", "--env", "games/GuessNumber-v0", "--model", tiny_model_path(),
                                      "--config", str(config), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "unknown GRPOConfig fields ['lr']" in result.output


def test_an_unknown_engine_is_refused_with_the_choices(tmp_path):
    result = CliRunner().invoke(app, ["train", "--env", "games/GuessNumber-v0", "--model", tiny_model_path(),
                                      "--engine", "sglang", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "choose transformers or vllm" in result.output


def test_the_vllm_engine_without_vllm_names_the_extra_to_install(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here (tests/agents/test_vllm_policy.py trains with it)")
    result = CliRunner().invoke(app, ["train", "--env", "games/GuessNumber-v0", "--model", tiny_model_path(),
                                      "--engine", "vllm", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "envgym[vllm]" in result.output


def test_the_default_engine_is_vllm_only_where_vllm_is_installed(monkeypatch):
    import importlib.util

    from envgym.agents import policy

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    assert policy.default_engine() == "transformers"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "vllm" else real(name, *a))
    assert policy.default_engine() == "vllm"


def test_a_recipes_reward_section_is_read_into_the_envs_arguments(tmp_path):
    from envgym.agents.train_cli import read_recipe
    from envgym.rewards import RewardSpec

    config = tmp_path / "ttrl.yaml"
    config.write_text("env: math/Arithmetic-v0\nreward:\n  hold_out_labels: true\n"
                      "  components: [{name: vote, source: majority_vote}]\n")
    _, env_kwargs, _, _ = read_recipe(config, {})
    assert env_kwargs["reward"] == RewardSpec.from_dict({"hold_out_labels": True,
                                                         "components": [{"name": "vote", "source": "majority_vote"}]})


def test_a_bad_reward_section_is_refused_before_any_rollout_with_its_key_path(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("reward:\n  components:\n    - {name: correct, source: env}\n    - {name: format, source: env}\n"
                      "    - {name: reasoning, source: pattern, pattern: first, weight: x}\n")
    result = CliRunner().invoke(app, ["train", "--env", "math/Arithmetic-v0", "--model", tiny_model_path(),
                                      "--config", str(config), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "reward.components[2].weight must be a number, got 'x'" in result.output
    assert not (tmp_path / "run").exists()


def test_an_env_registered_unsafe_is_refused_without_the_opt_in(tmp_path, scratch_registry):
    import envgym
    from envgym.agents.train_cli import plan_training

    envgym.register("test/Unsafe-v0", "envgym.envs.games.guess_number:GuessNumber", unsafe=True,
                    unsafe_reason="constant guesses win")
    result = CliRunner().invoke(app, ["train", "--env", "test/Unsafe-v0", "--model", tiny_model_path(),
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "registered unsafe (constant guesses win)" in result.output
    plan = plan_training(env="test/Unsafe-v0", model=tiny_model_path(), config=None, resume=None, engine="transformers",
                         env_kwargs='{"allow_unsafe": true}', overrides={})
    assert plan.env_kwargs["allow_unsafe"] is True

"""`envgym train` end to end on the tiny model: flags and a config file in, metrics and a checkpoint out."""

import json

from helpers.tiny_models import tiny_model_path
from typer.testing import CliRunner

from envgym.cli.app import app


def test_train_command_writes_metrics_checkpoint_and_plot(tmp_path):
    from envgym.agents.engines.policy import default_engine

    config = tmp_path / "grpo.yaml"
    config.write_text("num_tasks_per_step: 1\nmax_completion_length: 4\nenv_kwargs: {high: 3, max_turns: 2}\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "games/GuessNumber-v0",
            "--model",
            tiny_model_path(),
            "--steps",
            "1",
            "--num-generations",
            "2",
            "--config",
            str(config),
            "--out",
            str(out),
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"rollout engine: {default_engine()}" in result.output
    (metrics,) = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert metrics["step"] == 1 and metrics["episodes"] == 2 and metrics["turns_mean"] <= 2
    assert (out / "checkpoints" / "step-1" / "trainer_state.pt").exists()
    assert (out / "reward_curve.png").exists()


def test_unknown_config_field_is_refused_with_the_known_ones(tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text("lr: 0.1\n")
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "games/GuessNumber-v0",
            "--model",
            tiny_model_path(),
            "--config",
            str(config),
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2
    assert "unknown key 'lr'; a recipe takes" in result.output and "learning_rate" in result.output


def test_an_unknown_engine_is_refused_with_the_choices(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "games/GuessNumber-v0",
            "--model",
            tiny_model_path(),
            "--engine",
            "sglang",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2 and "choose transformers, vllm, vllm-server" in result.output


def test_the_vllm_engine_without_vllm_names_the_extra_to_install(tmp_path):
    import importlib.util

    import pytest

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here (tests/agents/engines/test_vllm_policy.py trains with it)")
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "games/GuessNumber-v0",
            "--model",
            tiny_model_path(),
            "--engine",
            "vllm",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2 and "envgym[vllm]" in result.output


def test_the_default_engine_is_vllm_only_where_vllm_is_installed(monkeypatch):
    import importlib.util

    from envgym.agents.engines import policy

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    assert policy.default_engine() == "transformers"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "vllm" else real(name, *a))
    assert policy.default_engine() == "vllm"


def test_a_recipes_reward_section_is_read_into_the_envs_arguments(tmp_path):
    from envgym.agents.training.recipe import read_recipe
    from envgym.rewards import RewardSpec

    config = tmp_path / "ttrl.yaml"
    config.write_text(
        "env: math/Arithmetic-v0\nreward:\n  hold_out_labels: true\n"
        "  components: [{name: vote, source: majority_vote}]\n"
    )
    assert read_recipe(config).reward == RewardSpec.from_dict(
        {"hold_out_labels": True, "components": [{"name": "vote", "source": "majority_vote"}]}
    )


def test_a_bad_reward_section_is_refused_before_any_rollout_with_its_key_path(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text(
        "reward:\n  components:\n    - {name: correct, source: env}\n    - {name: format, source: env}\n"
        "    - {name: reasoning, source: pattern, pattern: first, weight: x}\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "math/Arithmetic-v0",
            "--model",
            tiny_model_path(),
            "--config",
            str(config),
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 2
    assert "reward.components[2].weight must be a number, got 'x'" in result.output
    assert not (tmp_path / "run").exists()


def test_an_env_registered_unsafe_is_refused_without_the_opt_in(tmp_path, scratch_registry):
    import envgym
    from envgym.cli.train import plan_training

    envgym.register(
        "test/Unsafe-v0",
        "envgym.envs.games.guess_number:GuessNumber",
        unsafe=True,
        unsafe_reason="constant guesses win",
    )
    result = CliRunner().invoke(
        app, ["train", "--env", "test/Unsafe-v0", "--model", tiny_model_path(), "--out", str(tmp_path / "run")]
    )
    assert result.exit_code == 2 and "registered unsafe (constant guesses win)" in result.output
    plan = plan_training(
        env="test/Unsafe-v0",
        model=tiny_model_path(),
        config=None,
        resume=None,
        engine="transformers",
        env_kwargs='{"allow_unsafe": true}',
        overrides={},
    )
    assert plan.env_kwargs["allow_unsafe"] is True


# --- fail fast, one line ------------------------------------------------------------------------------------

import pytest  # noqa: E402
from helpers.cli_run import run_envgym  # noqa: E402

BAD_TRAIN_INPUTS = {
    "env_id_typo": (
        ["--env", "math/Arithmetc-v0"],
        ["no env is registered as 'math/Arithmetc-v0'", "Did you mean 'math/Arithmetic-v0'"],
    ),
    "env_kwarg_typo": (
        ["--env", "math/Arithmetic-v0", "--env-kwargs", '{"difficulti": 2}'],
        ["takes no argument 'difficulti'", "it accepts difficulty"],
    ),
    "env_kwargs_not_json": (
        ["--env", "math/Arithmetic-v0", "--env-kwargs", "difficulty=2"],
        ["--env-kwargs must be a JSON object", '{"difficulty": 1}'],
    ),
    "missing_model": (
        ["--env", "math/Arithmetic-v0", "--model", "no-such-org/no-such-model"],
        ["cannot find model 'no-such-org/no-such-model'", "'smollm2' (packaged)"],
    ),
    "unknown_recipe_name": (
        ["--config", "no-such-recipe"],
        ["recipe file no-such-recipe does not exist", "smollm2-arithmetic-cpu"],
    ),
    "not_a_checkpoint": (
        ["--env", "math/Arithmetic-v0", "--resume", "."],
        ["is not a training checkpoint", "OUT/checkpoints/step-N"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TRAIN_INPUTS))
def test_a_bad_train_input_is_one_line_before_any_model_library_loads(case, tmp_path):
    args, expected = BAD_TRAIN_INPUTS[case]
    run = run_envgym("train", *args, "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert run.returncode == 2 and len(run.lines) == 1, run.lines
    assert "Traceback" not in run.lines[0] and all(text in run.lines[0] for text in expected), run.lines
    assert "transformers" not in run.imported and "torch" not in run.imported


def test_a_yaml_syntax_error_names_the_recipe_file_and_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("env: math/Arithmetic-v0\nlearning_rate: [1\nmax_steps: 2\n")
    run = run_envgym("train", "--config", "bad.yaml", cwd=tmp_path)
    assert run.returncode == 2 and len(run.lines) == 1, run.lines
    assert run.lines[0].startswith("error: bad.yaml:3: YAML syntax error"), run.lines
    assert "transformers" not in run.imported


def test_a_recipe_value_of_the_wrong_type_names_file_field_and_type_before_loading_the_model(tmp_path):
    (tmp_path / "x.yaml").write_text("env: math/Arithmetic-v0\nlearning_rate: fast\n")
    unloadable = tmp_path / "unloadable"  # passes the name check, fails any load: a load would say so
    unloadable.mkdir()
    (unloadable / "config.json").write_text("{}")
    run = run_envgym("train", "--config", "x.yaml", "--model", str(unloadable), cwd=tmp_path)
    assert run.returncode == 2 and run.lines == ["error: x.yaml: learning_rate must be a float, got 'fast'"]
    assert "transformers" not in run.imported


def test_debug_shows_the_traceback_of_a_bad_input(tmp_path):
    run = run_envgym("train", "--env", "math/Arithmetc-v0", "--debug", cwd=tmp_path)
    assert run.returncode != 0 and any("Traceback" in line for line in run.lines)


# --- progress, rollouts, the command that evaluates the run -----------------------------------------------------


def test_without_a_terminal_train_prints_one_plain_line_per_step(tmp_path):
    import subprocess
    import sys

    config = tmp_path / "grpo.yaml"
    config.write_text("num_tasks_per_step: 1\nmax_completion_length: 4\nenv_kwargs: {high: 3, max_turns: 2}\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "envgym",
            "train",
            "--env",
            "games/GuessNumber-v0",
            "--model",
            tiny_model_path(),
            "--steps",
            "3",
            "--num-generations",
            "2",
            "--config",
            str(config),
            "--out",
            str(tmp_path / "run"),
            "--device",
            "cpu",
            "--engine",
            "transformers",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    steps = [line for line in result.stdout.splitlines() if line.startswith("GRPO ")]
    assert [line.split()[1] for line in steps] == ["1/3", "2/3", "3/3"], result.stdout
    assert all("reward" in line and "loss" in line and "ETA" in line for line in steps)


def test_save_rollouts_writes_that_many_episodes_per_step_as_eval_samples(tmp_path):
    from envgym import Episode

    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "games/GuessNumber-v0",
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
            "--save-rollouts",
            "3",
            "--env-kwargs",
            '{"high": 3, "max_turns": 1}',
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 1, 1, 2, 2, 2]
    assert all(r["env_id"] == "games/GuessNumber-v0" and "reward" in r for r in records)
    assert Episode.from_dict(records[0]["episode"]).turns


def test_train_ends_with_the_command_that_evaluates_the_last_checkpoint(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "games/GuessNumber-v0",
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
            "--env-kwargs",
            '{"high": 3, "max_turns": 1}',
        ],
    )
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last == (
        f"evaluate it: envgym eval --model {out / 'checkpoints' / 'step-1'} --env games/GuessNumber-v0 "
        '--env-kwargs \'{"high": 3, "max_turns": 1}\''
    )


def test_a_run_records_what_the_trust_record_says_of_its_env_and_reward(tmp_path):
    from envgym.audit.record import audit_status
    from envgym.cli.train import plan_training, write_audit_status

    config = tmp_path / "vote.yaml"
    config.write_text("env: math/Arithmetic-v0\nreward: {components: [{name: vote, source: majority_vote}]}\n")
    plan = plan_training(
        env=None, model=tiny_model_path(), config=str(config), env_kwargs=None, resume=None, engine=None, overrides={}
    )
    summary = write_audit_status(plan, tmp_path / "run")
    written = json.loads((tmp_path / "run" / "audit.json").read_text())
    expected = audit_status("math/Arithmetic-v0", plan.recipe.reward)
    assert written == {"math/Arithmetic-v0": json.loads(json.dumps(expected))}
    assert summary == f"math/Arithmetic-v0 {expected['status']}"

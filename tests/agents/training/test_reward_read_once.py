"""The reward spec is read once (issue 29.6): where the user's input is read (a recipe, a suite, a CLI file,
``GRPOTrainer(reward=)``), then passed built; never inside ``env_kwargs``."""

import dataclasses

import pytest
from helpers.tiny_models import tiny_model_path

from envgym.agents.evaluation.suite import load_suite
from envgym.agents.training.recipe import read_recipe
from envgym.config import BadInput
from envgym.rewards import RewardSpec

pytest.importorskip("transformers")


@pytest.fixture
def reads(monkeypatch):
    """How many times a spec is built from its dict form."""
    count = [0]
    original = RewardSpec.from_dict.__func__

    def counting(cls, *args, **kwargs):
        count[0] += 1
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(RewardSpec, "from_dict", classmethod(counting))
    return count


def test_a_recipes_spec_is_read_once_through_a_training_step(reads):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    recipe = read_recipe("noisy-reward-arithmetic-cpu")
    assert reads[0] == 1 and isinstance(recipe.reward, RewardSpec) and "reward" not in recipe.env_kwargs
    config = dataclasses.replace(recipe.config, max_steps=1, num_generations=2, num_tasks_per_step=1)
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_model_path()),
        AutoTokenizer.from_pretrained(tiny_model_path()),
        recipe.env,
        dataclasses.replace(config, max_completion_length=4),
        device="cpu",
        env_kwargs=recipe.env_kwargs,
        reward=recipe.reward,
    )
    metrics = trainer.train_step()
    assert "reward/noise" in metrics or "reward/correct" in metrics  # the spec's components reached the envs
    assert reads[0] == 1


def test_an_eval_reward_file_is_read_once_through_a_whole_run(reads, tmp_path):
    from typer.testing import CliRunner

    from envgym.cli.app import app

    reward = tmp_path / "reward.yaml"
    reward.write_text("components:\n  - {name: correct, source: env, weight: 2.0}\n")
    args = ["eval", "--env", "math/Arithmetic-v0", "--num-generations", "2", "--n-tasks", "2"]
    args += ["--max-completion-length", "4", "--reward", str(reward), "--model", tiny_model_path()]
    result = CliRunner().invoke(app, args + ["--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert reads[0] == 1


def test_a_spec_inside_env_kwargs_is_refused_by_the_trainer_and_by_recipes(tmp_path):
    from envgym.agents.training.trainer import GRPOTrainer

    spec = {"components": [{"name": "correct", "source": "env"}]}
    with pytest.raises(ValueError, match=r"GRPOTrainer\(\.\.\., reward=spec\)"):
        GRPOTrainer(None, None, "math/Arithmetic-v0", env_kwargs={"reward": spec})
    recipe = tmp_path / "r.yaml"
    recipe.write_text("env: math/Arithmetic-v0\nenv_kwargs:\n  reward:\n    components: [{name: c, source: env}]\n")
    with pytest.raises(BadInput, match=r"r.yaml: .*env_kwargs.reward: the reward spec is not an env argument; write"):
        read_recipe(recipe)
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "envs:\n  - {env: math/Arithmetic-v0, env_kwargs: {reward: {components: [{name: c, source: env}]}}}\n"
    )
    with pytest.raises(BadInput, match=r"s.yaml: envs\[0\].*env_kwargs.reward: the reward spec is not an env argument"):
        load_suite(suite)


def test_a_bad_spec_is_still_one_line_naming_where():
    with pytest.raises(ValueError, match=r"^mixture member m: reward.components\[0\].source must be one of"):
        from envgym.agents.training.mixture import MixtureMember

        MixtureMember("math/Arithmetic-v0", name="m", reward={"components": [{"name": "c", "source": "nope"}]})

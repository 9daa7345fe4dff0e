"""The recipes under recipes/ load as training configs, and the default suite evaluates the demo recipe's env
with the recipe's own prompt (so `make demo`'s before/after measures what training changed)."""

from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")  # the [train] extra: GRPOConfig and the trainer

from envgym.agents.training.recipe import read_recipe  # noqa: E402

ROOT = Path(__file__).parents[1]


def test_every_recipe_is_a_valid_training_config_that_names_env_and_model():
    recipes = sorted((ROOT / "recipes").glob("*.yaml"))
    assert recipes
    for path in recipes:
        recipe = read_recipe(path)
        assert recipe.trainer_env and recipe.model and recipe.config.max_steps > 0, path


def test_the_default_suite_evaluates_the_demo_recipes_env_with_its_prompt():
    recipe = read_recipe(ROOT / "recipes" / "smollm2-arithmetic-cpu.yaml")
    env, env_kwargs = recipe.env, recipe.env_kwargs
    suite = yaml.safe_load((ROOT / "suites" / "default.yaml").read_text())
    [entry] = [e for e in suite["envs"] if e["env"] == env]
    assert entry["env_kwargs"] == env_kwargs


def test_the_default_suite_evaluates_the_tool_recipes_env_with_its_prompt_and_no_shaping():
    recipe = read_recipe(ROOT / "recipes" / "smollm2-tool-cpu.yaml")
    env, env_kwargs = recipe.env, recipe.env_kwargs
    suite = yaml.safe_load((ROOT / "suites" / "default.yaml").read_text())
    [entry] = [e for e in suite["envs"] if e["env"] == env]
    assert recipe.reward is not None and "reward" not in entry  # eval judges the unshaped reward
    assert entry["env_kwargs"] == env_kwargs


def test_the_tool_recipes_env_pays_the_reference_answer_in_full_and_a_call_only_its_bonus():
    import envgym

    recipe = read_recipe(ROOT / "recipes" / "smollm2-tool-cpu.yaml")
    env = envgym.make(recipe.env, **recipe.make_kwargs())
    for index in range(10):
        env.reset(seed=index, options={"task_index": index})
        _, reward, terminated, _, info = env.step(env.reference_action())
        assert terminated and reward == 1.0 and info["reward_components"] == {"correct": 1.0, "tool_bonus": 0.0}
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step("<calc>1 + 1</calc>")
    assert not terminated and reward == 0.5
    _, reward, terminated, _, _ = env.step("<calc>2 + 2</calc>")  # over the budget of one call: no bonus
    assert not terminated and reward == 0.0


def run_recipe(tmp_path, recipe="smollm2-arithmetic-cpu.yaml", **overrides):
    from envgym.agents.engines.models import load_model
    from envgym.agents.training.trainer import GRPOTrainer

    read = read_recipe(ROOT / "recipes" / recipe, overrides=overrides)
    model, tokenizer = load_model(read.model)
    trainer = GRPOTrainer(
        model,
        tokenizer,
        read.env,
        read.config,
        device="cpu",
        out_dir=tmp_path,
        env_kwargs=read.env_kwargs,
        reward=read.reward,
    )
    return trainer, trainer.train()


def test_the_smollm2_recipe_runs_two_steps(tmp_path):
    """The recipe's code path on the packaged model (the quick variant; the slow test below runs it whole)."""
    trainer, run = run_recipe(tmp_path, max_steps=2)
    assert [m["step"] for m in run] == [1, 2] and all(m["episodes"] == 16 for m in run)
    prompt = trainer.last_rollouts[0][0].episode.prompt
    assert prompt[-1]["content"].startswith("Compute ") and prompt[-2]["content"] == "\\boxed{7}"  # the examples
    assert (tmp_path / "reward_curve.png").exists()


@pytest.mark.slow
def test_the_smollm2_recipe_learns_on_cpu(tmp_path):
    """docs/training.md: the last 10 steps' mean reward is at least 0.3 above the first 10's and 3x it."""
    _, run = run_recipe(tmp_path)
    rewards = [m["reward_mean"] for m in run]
    first, last = sum(rewards[:10]) / 10, sum(rewards[-10:]) / 10
    assert last >= first + 0.3 and last >= 3 * first, rewards


@pytest.mark.slow
def test_the_smollm2_tool_recipe_learns_to_call_the_calculator_on_cpu(tmp_path):
    """docs/training.md ("Training a tool-using agent"): the unshaped reward (reward/correct) of the last 10 steps
    is at least 0.3 above the first 10's, and the model calls the tool more often at the end than at the start."""
    _, run = run_recipe(tmp_path, "smollm2-tool-cpu.yaml")
    correct = [m["reward/correct"] for m in run]
    calls = [m["tool_calls_mean"] for m in run]
    assert sum(correct[-10:]) / 10 >= sum(correct[:10]) / 10 + 0.3, correct
    assert sum(calls[-10:]) > sum(calls[:10]), calls


def test_recipes_and_suites_are_package_data_and_the_clone_folders_link_to_them():
    import tomllib

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert {"recipes/*.yaml", "suites/*.yaml"} <= set(package_data["envgym"])
    for kind in ("recipes", "suites"):
        assert (ROOT / kind).resolve() == (ROOT / "envgym" / kind).resolve()


def test_train_finds_an_installed_recipe_by_name_outside_the_clone(tmp_path):
    from helpers.cli_run import run_envgym

    # The recipe is read and checked (env, env_kwargs, types); the made-up model is then refused, before any load.
    run = run_envgym("train", "--config", "smollm2-arithmetic-cpu", "--model", "/no/such/model", cwd=tmp_path)
    assert run.returncode == 2 and run.lines == [run.lines[0]] and "cannot find model '/no/such/model'" in run.lines[0]

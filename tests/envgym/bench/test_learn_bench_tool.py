"""``envgym bench learn`` on a multi-turn tool recipe: ours against TRL's ``trl-env`` and ``trl-rollout`` paths."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envgym.bench import learn
from envgym.bench.learn import TOOL_SIDES, summarize
from envgym.bench.learn_sides import steps_of, unshaped_names
from envgym.bench.report import WorkerFailed
from envgym.cli.app import app

TOOL_RECIPE = Path(__file__).parents[3] / "recipes" / "smollm2-tool-cpu.yaml"
TEMPLATE_REFUSED = (
    'Traceback (most recent call last):\n  File "x.py", line 1, in __init__\n'
    "ValueError: The provided chat template does not support tool calling.\n"
)


def run(seed, rewards, tasks, seconds=4.0):
    return {
        "seed": seed,
        "rewards": rewards,
        "train_rewards": rewards,
        "tasks": tasks,
        "seconds": seconds,
        "tool_calls": [1.0] * len(rewards),
    }


def test_the_tasks_of_each_step_are_read_from_the_episodes_played():
    # G=2, 2 tasks per step: episodes of groups (7, 7), (3, 3) in step 1, (5, 5), (7, 7) in step 2
    assert steps_of([7, 7, 3, 3, 5, 5, 7, 7], num_generations=2, per_step=2) == [[7, 3], [5, 7]]


def test_tool_calls_are_counted_per_episode_as_our_trainer_logs_them():
    from envgym.bench.learn_sides import calls_per_episode
    from envgym.episode import Turn

    called, answered = Turn("<calc>2*3</calc>", [], 0.5, info={"tool_calls": 1}), Turn("6", [], 1.0, info={})
    assert calls_per_episode([[called, answered], [answered]]) == 0.5


def test_the_unshaped_reward_is_the_env_sourced_components_of_the_recipe():
    from envgym.agents.training.recipe import read_recipe

    assert unshaped_names(read_recipe(TOOL_RECIPE).make_kwargs()) == ["correct"]  # not tool_bonus, the shaping
    assert unshaped_names({"digits": [3, 2]}) is None  # no spec: the whole reward is the task's


def test_each_trl_path_is_a_pairing_with_its_own_target():
    ours = [run(0, [0.0, 0.0, 1.0, 1.0], [[1], [2], [3], [4]])]
    runs = {
        "envgym": ours,
        "trl-env": [run(0, [0.0, 0.0, 0.0, 0.5], [[1], [2], [3], [4]])],
        "trl-rollout": [run(0, [0.0, 0.0, 0.0, 0.0], [[1], [2], [3], [4]])],
    }
    summary = summarize(runs, 4, {})
    assert summary["window"] == 2 and summary["same_task_order"] is True
    assert summary["sides"]["envgym"]["reward_per_step"]["mean"] == [0.0, 0.0, 1.0, 1.0]
    assert summary["sides"]["trl-env"]["seconds_per_step"]["mean"] == 1.0
    env_pairing = summary["pairings"]["trl-env"]
    assert env_pairing["target_reward"] == 0.25
    assert (env_pairing["envgym"]["mean"], env_pairing["trl-env"]["mean"], env_pairing["met"]) == (3, 4, True)
    assert summary["pairings"]["trl-rollout"]["envgym"]["mean"] == 2 and summary["met"] is True


def test_runs_of_one_seed_that_played_different_tasks_are_flagged():
    runs = {
        "envgym": [run(0, [0.0] * 4, [[1], [2], [3], [4]])],
        "trl-rollout": [run(0, [0.0] * 4, [[1], [2], [4], [3]])],
    }
    assert summarize(runs, 4, {"trl-env": "failed"})["same_task_order"] is False


def fake_workers(monkeypatch, failing=()):
    """Workers that return a fixed curve (every side, every seed: the same tasks) or die like a TRL path that
    cannot run; returns the (side, seed) calls made."""
    calls = []

    def worker(side, recipe, steps, seed, device="cpu"):
        calls.append((side, seed))
        if side in failing:
            raise WorkerFailed(f"{side} (seed {seed})", 1, TEMPLATE_REFUSED)
        return {
            "rewards": [0.5] * steps,
            "train_rewards": [1.0] * steps,
            "seconds": 2.0 * steps,
            "tool_calls": [1.0] * steps,
            "tasks": [[seed * 100 + step] for step in range(steps)],
        }

    monkeypatch.setattr(learn, "_run_worker", worker)
    return calls


def test_a_tool_recipe_is_benched_on_every_side_and_seed(monkeypatch):
    calls = fake_workers(monkeypatch)
    result = CliRunner().invoke(app, ["bench", "learn", "--recipe", str(TOOL_RECIPE), "--steps", "4", "--json"])
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert sorted(calls) == [(side, seed) for side in sorted(TOOL_SIDES) for seed in (0, 1, 2)]
    assert measured["turns"] == 3 and measured["seeds"] == [0, 1, 2] and measured["skipped"] == {}
    assert sorted(measured["pairings"]) == ["trl-env", "trl-rollout"]
    assert all(len(measured["sides"][side]["runs"]) == 3 for side in TOOL_SIDES)
    assert "unshaped" in measured["settings"]["reward_compared"]


def test_a_trl_path_that_fails_is_a_skipped_pairing_with_its_reason(monkeypatch):
    calls = fake_workers(monkeypatch, failing=("trl-env",))
    result = CliRunner().invoke(
        app, ["bench", "learn", "--recipe", str(TOOL_RECIPE), "--steps", "4", "--seeds", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    reason = measured["pairings"]["trl-env"]["skipped"]
    assert "trl-env" in reason and "does not support tool calling" in reason
    assert measured["skipped"] == {"trl-env": reason} and "trl-env" not in measured["sides"]
    assert calls.count(("trl-env", 1)) == 0  # not retried on the next seed: it fails the same way
    assert measured["pairings"]["trl-rollout"]["met"] is True and measured["met"] is True


def test_our_side_failing_is_a_failure_not_a_skip(monkeypatch):
    fake_workers(monkeypatch, failing=("envgym",))
    with pytest.raises(WorkerFailed):
        learn.run_bench(TOOL_RECIPE, 4, [0], 1, TOOL_SIDES, print)


@pytest.fixture(scope="module")
def tool_model(tmp_path_factory):
    """The tiny model with TRL's Qwen2.5 template, whose tool calls TRL parses (so trl-env runs too)."""
    from helpers.choice_model import tool_tokenizer
    from helpers.tiny_models import tiny_model_path

    path = tmp_path_factory.mktemp("tool-model")
    shutil.copytree(tiny_model_path(), path, dirs_exist_ok=True)
    tool_tokenizer().save_pretrained(path)
    return path


@pytest.mark.slow
def test_every_side_plays_the_same_tasks_in_the_same_order_with_real_trainers(tool_model, tmp_path):
    recipe = tmp_path / "tool.yaml"
    recipe.write_text(
        TOOL_RECIPE.read_text()
        .replace("model: smollm2", f"model: {tool_model}")
        .replace("max_completion_length: 20", "max_completion_length: 8")
        .replace("num_tasks_per_step: 2", "num_tasks_per_step: 1")
        .replace("num_generations: 8", "num_generations: 2")
    )
    result = CliRunner().invoke(
        app, ["bench", "learn", "--recipe", str(recipe), "--steps", "4", "--seeds", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["skipped"] == {} and sorted(measured["pairings"]) == ["trl-env", "trl-rollout"]
    played = [measured["sides"][side]["runs"][0]["tasks"] for side in TOOL_SIDES]
    assert len(played[0]) == 4 and all(len(step) == 1 for step in played[0])
    assert played[1] == played[0] and played[2] == played[0] and measured["same_task_order"] is True
    for side in TOOL_SIDES:
        curve = measured["sides"][side]["reward_per_step"]["mean"]
        assert len(curve) == 4 and all(0.0 <= reward <= 1.0 for reward in curve)
        calls = measured["sides"][side]["tool_calls_per_step"]["mean"]
        assert len(calls) == 4 and all(count >= 0.0 for count in calls)


def test_a_device_other_than_cpu_or_cuda_is_refused_before_anything_runs():
    pytest.importorskip("trl")
    result = CliRunner().invoke(app, ["bench", "learn", "--steps", "4", "--device", "tpu"])
    assert result.exit_code == 2
    assert "--device must be cpu or cuda" in result.output

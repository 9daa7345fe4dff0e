"""``envgym bench learn``'s verdict on a one-turn recipe: the step at which a curve's 10-step average first reaches
the reward TRL ends with, per seed and over seeds."""

import json

import pytest

from envgym.bench.learn import WINDOW, first_step_reaching, summarize


def run(seed, rewards, seconds):
    return {"seed": seed, "rewards": rewards, "seconds": seconds, "tasks": [], "tool_calls": [0.0] * len(rewards)}


def test_the_first_step_whose_trailing_average_reaches_the_target():
    rewards = [0.0] * WINDOW + [1.0] * WINDOW
    assert first_step_reaching(rewards, 0.5) == WINDOW + WINDOW // 2
    assert first_step_reaching(rewards, 0.0) == WINDOW
    assert first_step_reaching(rewards, 1.0) == 2 * WINDOW


def test_a_curve_that_never_gets_there_has_no_step():
    assert first_step_reaching([0.2] * 30, 0.3) is None
    assert first_step_reaching([1.0] * (WINDOW - 1), 0.5) is None  # fewer steps than one window


def test_a_seed_fixes_one_task_order_for_both_sides():
    from envgym.bench.learn_sides import fixed_order_sampler, task_order

    order = task_order(3, steps=4, per_step=2, num_tasks=10**9)
    assert order == task_order(3, steps=4, per_step=2, num_tasks=10**9) != task_order(4, 4, 2, 10**9)
    sample = fixed_order_sampler(order, per_step=2)
    played = [sample(step, None) for step in range(4) for _ in range(2)]
    assert played == order  # what TRL reads from its unshuffled dataset, in the same order
    assert sample(1, None) == order[2]  # a refill round of step 1 replays step 1's tasks


def test_the_summary_gives_mean_and_spread_over_seeds_against_trls_final_reward():
    steps = 2 * WINDOW
    ours = [[0.0] * WINDOW + [1.0] * WINDOW, [0.0] * (WINDOW + 2) + [1.0] * (WINDOW - 2)]
    theirs = [[0.0] * WINDOW + [0.5] * WINDOW] * 2
    runs = {
        "envgym": [run(i, r, steps * (i + 1)) for i, r in enumerate(ours)],
        "trl": [run(i, r, 12.0) for i, r in enumerate(theirs)],
    }
    summary = summarize(runs, steps, {})
    pairing = summary["pairings"]["trl"]
    assert pairing["target_reward"] == 0.5
    assert summary["sides"]["envgym"]["reward_per_step"]["mean"][WINDOW - 1 : WINDOW + 3] == [0.0, 0.5, 0.5, 1.0]
    assert summary["sides"]["envgym"]["reward_per_step"]["std"][0] == 0.0
    reaching = pairing["envgym"]
    assert (reaching["mean"], reaching["min"], reaching["max"], reaching["reached"]) == (
        WINDOW + 6,
        WINDOW + 5,
        WINDOW + 7,
        2,
    )
    seconds = summary["sides"]["envgym"]["seconds_per_step"]
    assert seconds["mean"] == 1.5 and seconds["std"] > 0
    assert pairing["trl"]["mean"] == 2 * WINDOW
    assert pairing["met"] is True and summary["met"] is True


def test_a_side_whose_runs_do_not_all_reach_the_target_does_not_meet_it():
    runs = {"envgym": [run(0, [0.0] * WINDOW, 1.0)], "trl": [run(0, [0.5] * WINDOW, 1.0)]}
    summary = summarize(runs, WINDOW, {})
    assert summary["pairings"]["trl"]["envgym"]["reached"] == 0 and summary["met"] is False


def test_a_run_shorter_than_two_windows_is_compared_over_half_its_length():
    from envgym.bench.learn import window_for

    assert window_for(40) == window_for(2 * WINDOW) == WINDOW and window_for(12) == 6
    runs = {
        "envgym": [run(0, [0.0] * 6 + [1.0] * 6, 12.0)],
        "trl": [run(0, [0.0] * 9 + [1.0] * 3, 12.0)],
    }
    summary = summarize(runs, 12, {})
    pairing = summary["pairings"]["trl"]
    assert summary["window"] == 6 and pairing["target_reward"] == 0.5
    assert pairing["envgym"]["mean"] == 9 and pairing["trl"]["mean"] == 12


@pytest.mark.slow
def test_both_one_turn_sides_train_on_the_same_tasks_with_real_trainers(tmp_path):
    """Our trainer and TRL's own generation loop, each in its worker, on the tiny model: same tasks per step."""
    from helpers.tiny_models import tiny_model_path
    from typer.testing import CliRunner

    from envgym.cli.app import app

    recipe = tmp_path / "arithmetic.yaml"
    recipe.write_text(
        "env: math/Arithmetic-v0\n"
        f"model: {tiny_model_path()}\n"
        "num_generations: 2\nnum_tasks_per_step: 1\nmax_completion_length: 4\nlora_r: 4\nmax_steps: 4\nseed: 0\n"
    )
    result = CliRunner().invoke(app, ["bench", "learn", "--recipe", str(recipe), "--seeds", "1", "--json"])
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["side_names"] == ["envgym", "trl"] and measured["skipped"] == {}
    assert measured["same_task_order"] is True and "met" in measured["pairings"]["trl"]
    for side in ("envgym", "trl"):
        curve = measured["sides"][side]["reward_per_step"]["mean"]
        assert len(curve) == 4 and all(0.0 <= reward <= 1.0 for reward in curve)

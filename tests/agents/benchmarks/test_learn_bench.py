"""``envgym bench learn``'s verdict: the step at which a curve's 10-step average first reaches a reward."""

from envgym.agents.benchmarks.learn_bench import WINDOW, first_step_reaching


def test_the_first_step_whose_trailing_average_reaches_the_target():
    rewards = [0.0] * WINDOW + [1.0] * WINDOW
    assert first_step_reaching(rewards, 0.5) == WINDOW + WINDOW // 2
    assert first_step_reaching(rewards, 0.0) == WINDOW
    assert first_step_reaching(rewards, 1.0) == 2 * WINDOW


def test_a_curve_that_never_gets_there_has_no_step():
    assert first_step_reaching([0.2] * 30, 0.3) is None
    assert first_step_reaching([1.0] * (WINDOW - 1), 0.5) is None  # fewer steps than one window


def test_a_seed_fixes_one_task_order_for_both_sides():
    from envgym.agents.benchmarks.learn_bench import fixed_order_sampler, task_order

    order = task_order(3, steps=4, per_step=2, num_tasks=10**9)
    assert order == task_order(3, steps=4, per_step=2, num_tasks=10**9) != task_order(4, 4, 2, 10**9)
    sample = fixed_order_sampler(order, per_step=2)
    played = [sample(step, None) for step in range(4) for _ in range(2)]
    assert played == order  # what TRL reads from its unshuffled dataset, in the same order
    assert sample(1, None) == order[2]  # a refill round of step 1 replays step 1's tasks


def test_the_summary_gives_mean_and_spread_over_seeds_against_trls_final_reward():
    from envgym.agents.benchmarks.learn_bench import summarize

    steps = 2 * WINDOW
    ours = [[0.0] * WINDOW + [1.0] * WINDOW, [0.0] * (WINDOW + 2) + [1.0] * (WINDOW - 2)]
    theirs = [[0.0] * WINDOW + [0.5] * WINDOW] * 2
    runs = {"envgym": [{"seed": i, "rewards": r, "seconds": steps * (i + 1)} for i, r in enumerate(ours)],
            "trl": [{"seed": i, "rewards": r, "seconds": 12.0} for i, r in enumerate(theirs)]}
    summary = summarize(runs, steps)
    assert summary["target_reward"] == 0.5
    assert summary["envgym"]["reward_per_step"]["mean"][WINDOW - 1:WINDOW + 3] == [0.0, 0.5, 0.5, 1.0]
    assert summary["envgym"]["reward_per_step"]["std"][0] == 0.0
    reaching = summary["envgym"]["step_reaching_target"]
    assert (reaching["mean"], reaching["min"], reaching["max"], reaching["reached"]) == (WINDOW + 6, WINDOW + 5, WINDOW + 7, 2)
    assert summary["envgym"]["seconds_per_step"]["mean"] == 1.5 and summary["envgym"]["seconds_per_step"]["std"] > 0
    assert summary["trl"]["step_reaching_target"]["mean"] == 2 * WINDOW
    assert summary["met"] is True


def test_a_side_whose_runs_do_not_all_reach_the_target_does_not_meet_it():
    from envgym.agents.benchmarks.learn_bench import summarize

    runs = {"envgym": [{"seed": 0, "rewards": [0.0] * WINDOW, "seconds": 1.0}],
            "trl": [{"seed": 0, "rewards": [0.5] * WINDOW, "seconds": 1.0}]}
    summary = summarize(runs, WINDOW)
    assert summary["envgym"]["step_reaching_target"]["reached"] == 0 and summary["met"] is False


def test_a_run_shorter_than_two_windows_is_compared_over_half_its_length():
    from envgym.agents.benchmarks.learn_bench import summarize, window_for

    assert window_for(40) == window_for(2 * WINDOW) == WINDOW and window_for(12) == 6
    runs = {"envgym": [{"seed": 0, "rewards": [0.0] * 6 + [1.0] * 6, "seconds": 12.0}],
            "trl": [{"seed": 0, "rewards": [0.0] * 9 + [1.0] * 3, "seconds": 12.0}]}
    summary = summarize(runs, 12)
    assert summary["window"] == 6 and summary["target_reward"] == 0.5
    assert summary["envgym"]["step_reaching_target"]["mean"] == 9 and summary["trl"]["step_reaching_target"]["mean"] == 12


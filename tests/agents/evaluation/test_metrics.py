"""pass@k and maj@k against values worked out by hand."""

import pytest

from envgym.agents.evaluation.metrics import majority_correct, pass_at_k, pass_hat_k, standard_error, task_metrics


def test_pass_at_1_is_the_fraction_correct():
    assert pass_at_k(n=10, c=3, k=1) == pytest.approx(0.3)


def test_pass_at_k_matches_the_unbiased_estimator_by_hand():
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # n=4, c=1, k=3: 1 - C(3,3)/C(4,3) = 1 - 1/4
    assert pass_at_k(4, 1, 3) == pytest.approx(0.75)


def test_pass_at_k_is_one_when_too_few_wrong_samples_to_fill_k():
    assert pass_at_k(4, 2, 3) == 1.0


def test_pass_at_k_is_zero_with_no_correct_sample():
    assert pass_at_k(8, 0, 8) == 0.0


def test_pass_at_k_rejects_k_larger_than_n():
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)


def test_majority_vote_picks_the_most_common_answer():
    assert majority_correct(["3", "4", "4"], [True, False, False], k=3) is False
    assert majority_correct(["4", "3", "3"], [False, True, True], k=3) is True


def test_majority_vote_uses_only_the_first_k_samples():
    assert majority_correct(["4", "3", "3"], [False, True, True], k=1) is False


def test_majority_tie_goes_to_the_answer_seen_first():
    assert majority_correct(["3", "4", "4", "3"], [True, False, False, True], k=4) is True


def test_samples_without_an_answer_do_not_vote():
    assert majority_correct([None, None, "7"], [False, False, True], k=3) is True
    assert majority_correct([None, None], [False, False], k=2) is False


def test_task_metrics_average_over_tasks():
    # task a: 1 of 2 correct -> pass@1 .5, pass@2 1; task b: 0 of 2 -> 0, 0
    tasks = {
        "a": [{"correct": True, "answer": "1"}, {"correct": False, "answer": "2"}],
        "b": [{"correct": False, "answer": "5"}, {"correct": False, "answer": "5"}],
    }
    metrics = task_metrics(tasks, ks=[1, 2])
    assert metrics["pass@1"] == pytest.approx(0.25)
    assert metrics["pass@2"] == pytest.approx(0.5)
    assert metrics["maj@1"] == pytest.approx(0.5)  # a's first answer is correct
    assert metrics["maj@2"] == pytest.approx(0.5)  # tie in a -> first answer "1", correct


def test_pass_hat_k_is_the_chance_that_k_draws_are_all_correct():
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_hat_k(4, 3, 2) == pytest.approx(3 / 6)  # C(3,2)/C(4,2)
    assert pass_hat_k(5, 2, 1) == pytest.approx(pass_at_k(5, 2, 1)) == pytest.approx(0.4)
    assert pass_hat_k(4, 1, 2) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    with pytest.raises(ValueError, match=r"pass\^5 needs 1 <= k <= n"):
        pass_hat_k(4, 2, 5)


def test_standard_error_by_hand_and_undefined_below_two_values():
    assert standard_error([0.0, 1.0]) == pytest.approx(0.5)  # sd sqrt(0.5), over sqrt(2)
    assert standard_error([0.2, 0.2, 0.2]) == pytest.approx(0.0, abs=1e-12)
    assert standard_error([0.7]) is None and standard_error([]) is None


def test_task_metrics_give_pass_hat_k_and_a_standard_error_over_tasks():
    # task a: 2 of 4 correct -> pass^2 = 1/6; task b: 4 of 4 -> 1
    tasks = {
        "a": [{"correct": c, "answer": str(i)} for i, c in enumerate([True, False, True, False])],
        "b": [{"correct": True, "answer": "7"} for _ in range(4)],
    }
    metrics = task_metrics(tasks, ks=[2])
    assert metrics["pass^2"] == pytest.approx((1 / 6 + 1) / 2)
    assert metrics["stderr"]["pass^2"] == pytest.approx((1 - 1 / 6) / 2)  # two values: |a - b| / 2
    assert metrics["stderr"]["pass@1"] == pytest.approx((1 - 0.5) / 2)
    assert metrics["pass^1"] == metrics["pass@1"] == pytest.approx(0.75)


def test_task_metrics_leave_out_k_beyond_the_samples_per_task():
    metrics = task_metrics({"a": [{"correct": True, "answer": None}]}, ks=[1, 4])
    assert "pass@4" not in metrics and metrics["pass@1"] == 1.0


def test_failed_samples_are_left_out_of_pass_and_maj_at_k():
    # task a: a failed sample and a correct one -> n=1 healthy, c=1; counting the failure as wrong would give 0.5
    failed = {"correct": False, "answer": None, "error": "RuntimeError: sandbox died"}
    tasks = {"a": [failed, {"correct": True, "answer": "1", "error": None}]}
    metrics = task_metrics(tasks, ks=[1])
    assert metrics["pass@1"] == 1.0 and metrics["maj@1"] == 1.0 and metrics["n_tasks@1"] == 1


def test_a_task_with_fewer_than_k_healthy_samples_is_left_out_of_that_k_and_counted():
    failed = {"correct": False, "answer": None, "error": "step timeout after 5s"}
    tasks = {
        "a": [{"correct": True, "answer": "1"}, {"correct": False, "answer": "2"}],  # 2 healthy
        "b": [failed, {"correct": False, "answer": "5"}],  # 1 healthy: in pass@1, not in pass@2
    }
    metrics = task_metrics(tasks, ks=[1, 2])
    assert metrics["pass@1"] == pytest.approx((0.5 + 0.0) / 2) and metrics["n_tasks@1"] == 2
    assert metrics["pass@2"] == 1.0 and metrics["n_tasks@2"] == 1  # task a alone: 1 - C(1,2)/C(2,2)


def test_maj_at_k_clusters_answers_with_the_envs_equivalence():
    import envgym
    from envgym.rewards import answer_equivalence

    same = answer_equivalence(envgym.make("math/Arithmetic-v0"))
    answers, correct = ["3", "1/2", "0.5", "\\frac{1}{2}"], [False, True, True, True]
    assert majority_correct(answers, correct, k=4) is False  # as exact strings: four answers, the first wins the tie
    assert majority_correct(answers, correct, k=4, same=same) is True  # one answer in three forms: the majority
    samples = {0: [{"answer": a, "correct": c} for a, c in zip(answers, correct)]}
    assert task_metrics(samples, ks=[4], same=same)["maj@4"] == 1.0


def test_groups_average_their_envs_pass_at_1_unweighted_and_overall_averages_the_groups():
    from envgym.agents.evaluation.metrics import group_table

    envs = {"a": {"pass@1": 0.5}, "b": {"pass@1": 1.0}, "c": {"pass@1": 0.0}, "d": {"pass@1": 0.9}}
    table = group_table(envs, {"a": "ast", "b": "ast", "c": "multi-turn"})  # d has no group: left out
    assert table["groups"] == {
        "ast": {"envs": ["a", "b"], "pass@1": 0.75},
        "multi-turn": {"envs": ["c"], "pass@1": 0.0},
    }
    assert table["overall"] == pytest.approx(0.375)  # not (0.5 + 1 + 0) / 3: groups weigh the same
    assert group_table(envs, {}) == {}


def test_failure_reasons_count_the_verifiers_failure_kind_on_the_last_turn():
    from envgym.agents.evaluation.metrics import score_breakdown

    def episode(kind):
        return {"turns": [{"info": {"call_failure": kind}, "terminated": True}], "error": None}

    breakdown = score_breakdown([episode("wrong_value"), episode("wrong_value"), episode("no_call"), episode(None)])
    assert breakdown["failure_reasons"] == {"wrong_value": 2, "no_call": 1}


def test_one_task_has_no_standard_error_and_the_report_shows_the_mean_alone():
    from envgym.agents.evaluation.report import table_rows

    metrics = task_metrics({"a": [{"correct": True, "answer": "7"}, {"correct": False, "answer": "8"}]}, ks=[1])
    assert metrics["stderr"]["pass@1"] is None
    _, rows = table_rows({"envs": {"x/Y-v0": {"pass@1": metrics["pass@1"], "stderr": metrics["stderr"]}}})
    assert "0.500" in rows[0] and not any("±" in cell for cell in rows[0])

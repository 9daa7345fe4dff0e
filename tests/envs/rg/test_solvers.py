"""Solvers that give reference actions to tasks whose entries keep no solution."""

import pytest

from envgym.envs.rg.solvers import rush_hour_solution

reasoning_gym = pytest.importorskip("reasoning_gym")


def test_the_rush_hour_solution_solves_the_board_under_reasoning_gyms_scorer():
    dataset = reasoning_gym.create_dataset("rush_hour", size=5, seed=0)
    for entry in dataset:
        assert dataset.score_answer(rush_hour_solution(entry["metadata"]["board_config"]), entry) == 1.0


def test_a_board_with_the_exit_walled_off_has_no_solution():
    board = "o" * 12 + "AAooox" + "o" * 18  # row 2: the red car, then a wall before the exit
    assert rush_hour_solution(board) is None

"""A TextArena two-player game through the agent loop: each seat is its own episode with its own reward."""

import pytest

AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer
pytest.importorskip("textarena")

from helpers.scripted_policy import ScriptedPolicy  # noqa: E402
from helpers.tiny_models import tiny_model_path  # noqa: E402

import envgym  # noqa: E402
from envgym.agents.rollout import rollout  # noqa: E402

PLAYER_1_WINS = {"You are Player 0": ["[4]", "[5]", "[8]"], "You are Player 1": ["[0]", "[1]", "[2]"]}


def test_both_seats_of_textarena_tictactoe_are_played_and_each_gets_its_own_reward():
    policy = ScriptedPolicy(AutoTokenizer.from_pretrained(tiny_model_path()), PLAYER_1_WINS)
    envs = envgym.VectorEnv([lambda: envgym.make("textarena/TicTacToe-v0")])
    result = rollout(policy, envs, num_generations=1, task_indices=[0])
    seats = {trajectory.episode.metadata["agent"]: trajectory.episode for trajectory in result.trajectories}
    assert set(seats) == {"player_0", "player_1"}
    assert seats["player_1"].total_reward == 1.0 and seats["player_0"].total_reward == -1.0
    assert [len(seats["player_0"].turns), len(seats["player_1"].turns)] == [3, 3]

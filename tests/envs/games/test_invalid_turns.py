"""Every game reports a policy mistake as ``action_valid=False`` with ``action_error``, never ``info["error"]``
(which is reserved for failures that are not the policy's fault and that trainers drop)."""

import pytest

import envgym

GAMES = ["games/GuessNumber-v0", "games/Wordle-v0", "games/Mastermind-v0", "games/TicTacToe-v0", "games/Bandit-v0"]


@pytest.mark.parametrize("env_id", GAMES)
def test_a_turn_without_a_tag_is_an_action_error_not_an_error(env_id):
    env = envgym.make(env_id)
    env.reset(seed=0, options={"task_index": 0})
    messages, _, _, _, info = env.step("I am not sure what to do.")
    assert info["action_valid"] is False
    assert isinstance(info["action_error"], str) and info["action_error"] in messages[0]["content"]
    assert "error" not in info

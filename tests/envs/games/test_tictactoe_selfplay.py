"""TicTacToe self-play: two seats take turns on one board; winner +1, loser -1, draw 0 each; illegal moves forfeit."""

import pytest

import envgym
from envgym.envs.games.tictactoe import TicTacToe, minimax_value, winner
from envgym.envs.games.tictactoe_selfplay import TicTacToeSelfPlay
from envgym.utils import check_env


def fresh(**kwargs):
    """A game from the empty board (no opening plies): X moves first."""
    env = envgym.make("games/TicTacToe-v0", opponent="self", max_opening_plies=0, **kwargs)
    env.reset(seed=0, options={"task_index": 0})
    return env


def play(env, *cells):
    """Play ``cells`` (1-9) alternately for whoever is to move; return the last step's result."""
    for cell in cells:
        result = env.step(f"<move>{cell}</move>")
    return result


def test_opponent_self_makes_the_two_seat_game_and_other_opponents_the_scripted_one():
    assert isinstance(envgym.make("games/TicTacToe-v0", opponent="self").unwrapped, TicTacToeSelfPlay)
    assert isinstance(envgym.make("games/TicTacToe-v0", opponent="minimax").unwrapped, TicTacToe)
    assert envgym.make("games/TicTacToeSelfPlay-v0").unwrapped.agents == ("X", "O")


def test_agent_first_is_refused_in_self_play():
    with pytest.raises(ValueError, match="agent_first means nothing in self-play"):
        envgym.make("games/TicTacToe-v0", opponent="self", agent_first=True)


def test_each_seat_sees_its_own_mark_and_the_opponents_last_move():
    env = envgym.make("games/TicTacToe-v0", opponent="self", max_opening_plies=0)
    messages, info = env.reset(seed=0, options={"task_index": 0})
    assert info["agent"] == "X" and "You play X" in messages[0]["content"]
    messages, _, _, _, info = env.step("<move>5</move>")
    assert info["agent"] == "O"
    assert "You play O" in messages[0]["content"] and "Your opponent (X) took cell 5." in messages[0]["content"]
    messages, _, _, _, info = env.step("<move>1</move>")
    assert info["agent"] == "X" and "You play" not in messages[0]["content"]  # the rules come once per seat
    assert "Your opponent (O) took cell 1." in messages[0]["content"]


def test_the_winner_gets_plus_one_and_the_loser_minus_one_on_the_winning_move():
    _, reward, terminated, _, info = play(fresh(), 1, 4, 2, 5, 3)
    assert terminated and reward == 1.0 and info["acting_agent"] == "X"
    assert info["rewards"] == {"X": 1.0, "O": -1.0}
    assert info["outcomes"] == {"X": "win", "O": "loss"}
    assert "You lose." in info["observations"]["O"][0]["content"]


def test_a_full_board_without_a_line_is_a_draw_worth_draw_reward_to_each_seat():
    _, reward, terminated, _, info = play(fresh(draw_reward=0.5), 1, 2, 3, 5, 4, 6, 8, 7, 9)
    assert terminated and info["rewards"] == {"X": 0.5, "O": 0.5} and reward == 0.5
    assert info["outcomes"] == {"X": "draw", "O": "draw"}


@pytest.mark.parametrize("action", ["<move>1</move>", "no move", "<move>٣</move>", "<move>10</move>"])
def test_an_illegal_move_forfeits_minus_one_and_the_other_seat_wins_no_more_than_a_draw(action):
    env = fresh()
    play(env, 1)
    _, reward, terminated, _, info = env.step(action)
    assert terminated and reward == -1.0 and info["action_valid"] is False and info["forfeit"]
    assert info["rewards"] == {"X": 0.0, "O": -1.0} and info["outcomes"] == {"X": "win", "O": "loss"}


def test_a_seat_that_throws_the_game_pays_its_partner_no_more_than_a_draw_would():
    env = fresh(draw_reward=0.25)
    play(env, 1)
    assert env.step("<move>1</move>")[4]["rewards"] == {"X": 0.25, "O": -1.0}  # cell 1 is taken: O throws


def test_a_forfeit_before_the_other_seat_moved_still_tells_it_the_rules():
    env = fresh()
    _, _, _, _, info = env.step("pass")
    assert "You play O" in info["observations"]["O"][0]["content"]


def test_openings_are_seeded_unfinished_and_the_seat_to_move_plays_first():
    env = envgym.make("games/TicTacToeSelfPlay-v0")
    for index in range(30):
        task = env.unwrapped.tasks.get(index)
        opening = task.metadata["opening"]
        assert winner(opening) is None and opening.count("X") - opening.count("O") in (0, 1)
        assert task.metadata["first"] == ("X" if opening.count("X") == opening.count("O") else "O")
        assert env.unwrapped.tasks.get(index).metadata == task.metadata
        _, info = env.reset(seed=index, options={"task_index": index})
        assert info["agent"] == task.metadata["first"] and info["board"] == opening


def test_reference_play_by_both_seats_ends_at_the_openings_game_value():
    env = envgym.make("games/TicTacToeSelfPlay-v0")
    for index in range(20):
        _, info = env.reset(seed=index, options={"task_index": index})
        first = info["agent"]
        while True:
            _, _, terminated, truncated, info = env.step(env.reference_action())
            if terminated or truncated:
                break
        assert env.unwrapped.cumulative_rewards[first] == minimax_value(env.unwrapped.task.metadata["opening"], first)


def test_selfplay_passes_check_env():
    check_env(
        envgym.make("games/TicTacToeSelfPlay-v0"),
        probe_actions=("<move>5</move>", "<move>1</move>", "", "<move>9</move>", "<move>3</move>"),
    )

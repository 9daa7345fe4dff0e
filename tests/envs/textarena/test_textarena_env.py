"""textarena/<Game>-v0: one-player games as envs, the others as seats; the games' own messages and rewards."""

import random

import pytest

import envgym
from envgym.envs.textarena.catalog import GAMES
from envgym.multiagent import MultiAgentEnv
from envgym.utils import check_env

pytest.importorskip("textarena")


def play(env, actions, index=0):
    """Reset to task ``index`` and play ``actions`` until the episode ends; the list of step results."""
    env.reset(options={"task_index": index})
    results = []
    for action in actions:
        results.append(env.step(action))
        if results[-1][2] or results[-1][3]:
            break
    return results


def test_a_one_player_game_is_a_plain_env_and_a_two_player_game_has_a_seat_per_player():
    assert not isinstance(envgym.make("textarena/Bandit-v0").unwrapped, MultiAgentEnv)
    tictactoe = envgym.make("textarena/TicTacToe-v0").unwrapped
    assert isinstance(tictactoe, MultiAgentEnv) and tictactoe.agents == ("player_0", "player_1")


@pytest.mark.parametrize("game", ["textarena/Bandit-v0", "textarena/TicTacToe-v0", "textarena/KuhnPoker-v0"])
def test_games_pass_check_env(game):
    check_env(envgym.make(game))


def test_a_won_game_pays_the_winner_1_and_the_loser_minus_1_on_its_last_turn():
    env = envgym.make("textarena/TicTacToe-v0")
    results = play(env, ["[4]", "[0]", "[5]", "[1]", "[8]", "[2]"])  # player_1 completes the top row
    *middle, (messages, reward, terminated, truncated, info) = results
    assert all(step[1] == 0.0 and not step[2] for step in middle)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["rewards"] == {"player_0": -1.0, "player_1": 1.0}
    assert info["agent_reward_components"]["player_0"] == {"outcome": -1.0}
    assert "Game over. Your reward: 1." in messages[0]["content"]
    assert "Game over. Your reward: -1." in info["observations"]["player_0"][0]["content"]


def test_a_seat_never_sees_its_own_action_echoed_back():
    env = envgym.make("textarena/TicTacToe-v0")
    env.reset(options={"task_index": 0})
    env.step("[4]")
    messages, *_ = env.step("[0]")  # player_0's view: player_1's move, not its own [4]
    assert "[Player 1] [0]" in messages[0]["content"] and "[Player 0]" not in messages[0]["content"]


def test_a_refused_move_is_an_invalid_turn_with_textarena_s_reason_and_a_second_one_forfeits():
    env = envgym.make("textarena/TicTacToe-v0")
    (messages, reward, terminated, _, info), last = play(env, ["I pass.", "I pass again."])
    assert (reward, terminated, info["action_valid"]) == (0.0, False, False)
    assert info["agent"] == "player_0" and info["action_error"]  # the same seat tries again
    _, reward, terminated, _, info = last
    assert (reward, terminated, info["action_valid"]) == (-1.0, True, False)
    # TextArena pays the partner +1; a win by forfeit pays what a draw pays (one policy plays both seats).
    assert info["rewards"] == {"player_0": -1.0, "player_1": 0.0} and info["forfeit"] == ["player_0"]
    assert info["textarena_rewards"] == {0: -1, 1: 1}


def test_the_same_task_index_replays_the_same_game_whatever_draws_from_random_in_between():
    def observations(disturb: bool) -> list[str]:
        env = envgym.make("textarena/Bandit-v0")
        messages, _ = env.reset(options={"task_index": 7})
        seen = [messages[0]["content"]]
        for _ in range(5):
            if disturb:
                random.seed(12345)
                [random.random() for _ in range(100)]
            seen.append(env.step("[red]")[0][0]["content"])
        return seen

    assert observations(disturb=False) == observations(disturb=True)


def test_bandit_pays_1_for_the_best_button_and_0_for_another_where_textarena_pays_the_regret():
    env = envgym.make("textarena/Bandit-v0")
    env.reset(options={"task_index": 3})
    means = env.unwrapped.driver.game.state.game_state["ground_truth"]
    best, worst = max(means, key=means.get), min(means, key=means.get)
    for button, paid, textarena_pays in ((best, 1.0, 0.0), (worst, 0.0, means[best] - means[worst])):
        *_, (_, reward, terminated, _, info) = play(env, [f"[{button}]"] * 21, index=3)
        assert terminated and reward == paid
        assert info["textarena_rewards"] == {0: pytest.approx(textarena_pays)}


def test_an_excluded_game_cannot_be_made_and_the_reason_is_in_the_catalog():
    with pytest.raises(envgym.UnknownEnv):
        envgym.make("textarena/Wordle-v0")


def test_a_reply_with_several_different_bracketed_moves_is_refused_and_plays_no_move():
    from envgym.envs.textarena.env import refuse_several_moves

    assert refuse_several_moves("I play [4].") == ("I play [4].", None)
    assert refuse_several_moves("[4] and again [4]")[1] is None  # one move, repeated
    text, reason = refuse_several_moves("[GAME] You are Player 0. For example '[4]'.")
    assert text == "GAME You are Player 0. For example '4'."
    assert reason.startswith("the reply holds 2 different bracketed moves ([GAME], [4])")


def test_echoing_the_prompt_plays_no_move_where_the_game_would_read_its_example():
    env = envgym.make("textarena/GuessTheNumber-v0")
    messages, _ = env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step(messages[0]["content"])
    assert info["action_valid"] is False and "different bracketed moves" in info["action_error"]


def test_a_long_reply_is_cut_before_the_game_reads_it():
    env = envgym.make("textarena/ConnectFour-v0")  # its parser is quadratic: 100 KB took 27 s
    env.reset(options={"task_index": 0})
    *_, info = env.step("x" * 100_000)
    assert info["action_truncated"] is True and info["action_valid"] is False


@pytest.mark.parametrize("game", ["Countdown-v0", "Cryptarithm-v0", "Slitherlink-v0", "ThreeCardMonte-v0"])
def test_a_game_with_swapped_invalid_move_arguments_pays_the_progress_it_files_as_the_reason(game):
    env = envgym.make(f"textarena/{game}")
    *_, (_, reward, terminated, _, info) = play(env, ["no move", "still no move"])
    assert terminated and isinstance(info["textarena_rewards"][0], str)  # TextArena "pays" its message
    assert reward == float(info["game_info"][0]["reason"].removeprefix("Invalid Move: "))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_restarted_seed_plays_the_game_a_fresh_start_gives(game, monkeypatch):
    from envgym.envs.textarena import driver

    monkeypatch.setattr(driver, "SLOW_START_S", 0.0)  # every start is kept, so every game's copy is checked
    actions = ["[0]", "[1]", "[a]", "I don't know.", "[2]", "[3]"]

    def transcript(env) -> list:
        results = play(env, actions, index=4)
        return [(step[0], step[1], step[2], step[4].get("action_error")) for step in results]

    fresh = transcript(envgym.make(f"textarena/{game}"))
    env = envgym.make(f"textarena/{game}")
    play(env, actions[:2], index=4)  # starts seed 4 once, and plays on from it
    assert transcript(env) == fresh  # the second start of seed 4 is the driver's copy


@pytest.mark.parametrize("game", ["textarena/Snake-v0", "textarena/Surround-v0"])
def test_a_game_that_kills_a_player_for_an_invalid_move_is_a_forfeit_too(game):
    # No set_invalid_move in these games: the player "died due to invalid move", and TextArena pays the survivor +1.
    env = envgym.make(game)
    env.reset(options={"task_index": 0})
    _, _, terminated, _, info = env.step("I resign.")
    assert terminated and info["forfeit"] == ["player_0"] and info["action_valid"] is False
    assert info["rewards"]["player_0"] < 0 and info["rewards"]["player_1"] <= 0.0

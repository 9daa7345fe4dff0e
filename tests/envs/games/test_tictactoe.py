"""TicTacToe: minimax play never loses and beats weak opponents; trivial play scores nothing."""

import re

import numpy as np
import pytest

import envgym
from envgym.envs.games.tictactoe import OPPONENTS, minimax_moves, minimax_value
from envgym.utils import check_env

TASKS = range(20)
PROBES = (
    "<move>5</move>",
    "<move>1</move>",
    "",
    "<move>9</move>",
    "<move>3</move>",
    "<move>7</move>",
    "<move>2</move>",
    "<move>4</move>",
    "<move>6</move>",
    "<move>8</move>",
)


def read_board(text: str) -> str:
    """The last board drawn in ``text``, as 9 characters: X, O, or '.' for a free (numbered) cell."""
    rows = [line for line in text.splitlines() if line.count("|") == 2][-3:]
    cells = [cell.strip() for row in rows for cell in row.split("|")]
    return "".join(cell if cell in "XO" else "." for cell in cells)


def mark_of(text: str) -> str:
    return re.search(r"You play ([XO])", text).group(1)


class MinimaxPlayer:
    """Perfect play read from the rendered board; among equally good moves it takes the first."""

    def __call__(self, messages, info):
        text = messages[-1]["content"]
        if "You play" in text:
            self.mark = mark_of(text)
        return f"<move>{minimax_moves(read_board(text), self.mark)[0] + 1}</move>"


def random_mover(seed: int):
    rng = np.random.default_rng(seed)

    def move(messages, info):
        free = [i + 1 for i, cell in enumerate(read_board(messages[-1]["content"])) if cell == "."]
        return f"<move>{rng.choice(free)}</move>"

    return move


def outcomes(play, env, make_policy) -> list[float]:
    return [sum(s.reward for s in play(env, make_policy(index), index)) for index in TASKS]


@pytest.mark.parametrize("opponent", OPPONENTS)
def test_passes_check_env(opponent):
    check_env(envgym.make("games/TicTacToe-v0", opponent=opponent), probe_actions=PROBES)


def test_perfect_play_from_the_empty_board_is_a_draw():
    assert minimax_value("." * 9, "X") == 0


def test_minimax_never_loses_to_minimax_and_draws_every_game(play):
    env = envgym.make("games/TicTacToe-v0", opponent="minimax")
    assert outcomes(play, env, lambda i: MinimaxPlayer()) == [0.0] * len(TASKS)


@pytest.mark.parametrize("opponent, min_wins", [("random", 18), ("greedy", 12)])
def test_minimax_never_loses_and_beats_weaker_opponents(play, opponent, min_wins):
    env = envgym.make("games/TicTacToe-v0", opponent=opponent)
    scores = outcomes(play, env, lambda i: MinimaxPlayer())
    assert min(scores) >= 0.0 and scores.count(1.0) >= min_wins


def test_random_moves_never_beat_minimax(play):
    env = envgym.make("games/TicTacToe-v0", opponent="minimax")
    scores = outcomes(play, env, random_mover)
    assert max(scores) <= 0.0 and sum(scores) / len(scores) < -0.5


def test_random_text_forfeits_every_game_at_the_reward_of_a_loss(play):
    env = envgym.make("games/TicTacToe-v0")
    env.action_space.seed(0)
    results = [play(env, lambda m, i: env.action_space.sample(), index) for index in TASKS]
    assert all(len(steps) == 1 and steps[0].terminated and steps[0].reward == -1.0 for steps in results)


@pytest.mark.parametrize("opponent", OPPONENTS)
def test_an_illegal_move_at_any_point_never_scores_more_than_the_worst_legal_play(play, opponent):
    env = envgym.make("games/TicTacToe-v0", opponent=opponent)
    for index in TASKS:
        for legal_moves in range(4):
            player, turns = MinimaxPlayer(), []

            def stall_after(messages, info, player=player, turns=turns, legal_moves=legal_moves):
                turns.append(player(messages, info))
                return turns[-1] if len(turns) <= legal_moves else "<move>5</move> <move>centre</move>"

            steps = play(env, stall_after, index)
            if steps[-1].info["action_valid"] is False:  # (a legal game may end before the illegal move comes)
                assert steps[-1].terminated and sum(s.reward for s in steps) == -1.0  # a loss: legal play's worst


def test_the_reference_wins_every_game_it_can_and_draws_against_minimax(play):
    for opponent, score in [("random", 1.0), ("greedy", 1.0), ("minimax", 0.0)]:
        env = envgym.make("games/TicTacToe-v0", opponent=opponent)
        totals = [
            sum(s.reward for s in play(env, lambda messages, info, env=env: env.reference_action(), index))
            for index in TASKS
        ]
        assert totals == [score] * len(TASKS), opponent


def test_the_winning_move_ends_the_game_with_reward_one():
    env = envgym.make("games/TicTacToe-v0", opponent="random", agent_first=True)
    for index in TASKS:
        messages, info = env.reset(options={"task_index": index})
        player = MinimaxPlayer()
        while True:
            messages, reward, terminated, truncated, info = env.step(player(messages, info))
            if terminated:
                break
            assert reward == 0.0 and "outcome" not in info
        assert reward == {"win": 1.0, "draw": 0.0}[info["outcome"]] and info["correct"] == (info["outcome"] == "win")


def test_greedy_opponent_takes_its_own_win_before_blocking():
    env = envgym.make("games/TicTacToe-v0", opponent="greedy", agent_first=True)
    env.reset(seed=0)
    env.unwrapped.board = "XX.OO...."  # X threatens cell 3, O threatens cell 6
    _, reward, terminated, _, info = env.step("<move>9</move>")
    assert info["opponent_move"] == 6 and info["outcome"] == "loss" and reward == -1.0 and terminated


def test_greedy_opponent_blocks_an_immediate_threat():
    env = envgym.make("games/TicTacToe-v0", opponent="greedy", agent_first=True)
    env.reset(seed=0)
    env.unwrapped.board = "X...O...."
    _, _, _, _, info = env.step("<move>2</move>")
    assert info["opponent_move"] == 3


@pytest.mark.parametrize(
    "action, problem",
    [
        ("5", "could not find"),
        ("<move>0</move>", "not a cell number"),
        ("<move>10</move>", "not a cell number"),
        ("<move>centre</move>", "not a cell number"),
        ("<move>٥</move>", "not a cell number"),
        ("<move>５</move>", "not a cell number"),
        ("<move>⁵</move>", "not a cell number"),
        ("<move>५</move>", "not a cell number"),
        ("<move>-0</move>", "not a cell number"),
        ("<move>5", "could not find"),
        ("<move>" * 15_000, "could not find"),
    ],
    ids=lambda value: value[:16],
)
def test_a_move_that_is_no_cell_forfeits_the_game_as_a_loss(action, problem):
    env = envgym.make("games/TicTacToe-v0", agent_first=True)
    env.reset(seed=0)
    messages, reward, terminated, _, info = env.step(action)
    assert info["action_valid"] is False and problem in info["action_error"] and info["forfeit"] is True
    assert reward == -1.0 and terminated and info["outcome"] == "loss" and info["board"] == "." * 9
    assert "forfeit" in messages[0]["content"]


def test_a_taken_cell_forfeits_the_game():
    env = envgym.make("games/TicTacToe-v0", agent_first=True)
    env.reset(seed=0)
    env.step("<move>5</move>")
    _, reward, terminated, _, info = env.step("<move>5</move>")
    assert (
        info["action_valid"] is False
        and "already taken" in info["action_error"]
        and (reward, terminated) == (-1.0, True)
    )


def test_a_draw_reward_outside_loss_to_win_is_rejected():
    with pytest.raises(ValueError, match="draw_reward must be in"):
        envgym.make("games/TicTacToe-v0", draw_reward=-2.0)


@pytest.mark.parametrize("agent_first, mark", [(True, "X"), (False, "O")])
def test_agent_first_fixes_who_opens(agent_first, mark):
    env = envgym.make("games/TicTacToe-v0", agent_first=agent_first)
    for index in range(5):
        messages, info = env.reset(options={"task_index": index})
        assert info["agent_mark"] == mark and info["board"].count("X") == (0 if agent_first else 1)


def test_the_draw_reward_is_configurable(play):
    env = envgym.make("games/TicTacToe-v0", opponent="minimax", draw_reward=0.5)
    assert play(env, MinimaxPlayer(), 0)[-1].reward == 0.5


def test_an_unknown_opponent_is_rejected_with_the_choices():
    with pytest.raises(ValueError, match="random, greedy, minimax"):
        envgym.make("games/TicTacToe-v0", opponent="expert")

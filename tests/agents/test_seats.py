"""Self-play in the agent loop: every seat of a multi-agent env is played by the policy and recorded as its own
episode and token trajectory, with its own rewards; GRPO groups split by seat."""

import pytest

AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer

from helpers.scripted_policy import ScriptedPolicy  # noqa: E402
from helpers.tiny_models import tiny_model_path  # noqa: E402

import envgym  # noqa: E402
from envgym.agents.engines.policy import Generation  # noqa: E402
from envgym.agents.rollout import rollout  # noqa: E402
from envgym.agents.seats import seat_groups, task_groups  # noqa: E402
from envgym.envs.games.tictactoe_selfplay import TicTacToeSelfPlay  # noqa: E402

X_WINS = {
    "You play X": ["<move>1</move>", "<move>2</move>", "<move>3</move>"],
    "You play O": ["<move>4</move>", "<move>5</move>"],
}


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(tiny_model_path())


def play(tokenizer, scripts, *, tasks=(0,), num_generations=2, env_kwargs=None, **kwargs):
    policy = ScriptedPolicy(tokenizer, scripts)
    make = lambda: envgym.make("games/TicTacToe-v0", opponent="self", max_opening_plies=0, **(env_kwargs or {}))  # noqa: E731
    envs = envgym.VectorEnv([make] * (len(tasks) * num_generations))
    return rollout(policy, envs, num_generations=num_generations, task_indices=list(tasks), **kwargs)


def by_seat(result):
    return {t.episode.metadata["agent"]: t for t in result.trajectories}


def policy_text(tokenizer, trajectory):
    return tokenizer.decode([t for t, m in zip(trajectory.completion_ids, trajectory.loss_mask) if m])


def test_every_seat_that_moved_is_its_own_episode_and_trajectory(tokenizer):
    result = play(tokenizer, X_WINS, num_generations=1)
    assert [e.metadata["agent"] for e in result.episodes] == ["X", "O"]
    assert result.trajectories[0].group_id.endswith("#X") and result.trajectories[1].group_id.endswith("#O")


def test_a_seats_trajectory_holds_its_own_prompt_and_only_its_own_moves_as_policy_tokens(tokenizer):
    seats = by_seat(play(tokenizer, X_WINS, num_generations=1))
    x, o = seats["X"], seats["O"]
    assert "You play X" in tokenizer.decode(x.prompt_ids) and "You play O" in tokenizer.decode(o.prompt_ids)
    assert policy_text(tokenizer, x).count("<move>") == 3 and "<move>4</move>" not in policy_text(tokenizer, x)
    assert policy_text(tokenizer, o).count("<move>") == 2 and "<move>1</move>" not in policy_text(tokenizer, o)
    env_text = tokenizer.decode([t for t, m in zip(o.completion_ids, o.loss_mask) if not m])
    assert "Your opponent (X) took cell 2." in env_text  # the opponent's move reaches O as env tokens (mask 0)


def test_each_seat_gets_its_own_reward_and_the_losers_lands_on_its_last_turn(tokenizer):
    seats = by_seat(play(tokenizer, X_WINS, num_generations=1))
    assert seats["X"].turn_rewards == [0.0, 0.0, 1.0]
    assert seats["O"].turn_rewards == [0.0, -1.0]
    assert seats["O"].turn_reward_components[-1] == {"outcome": -1.0}
    assert seats["O"].episode.terminated and "You lose." in seats["O"].episode.turns[-1].observation[0]["content"]


def test_a_seat_that_never_moved_yields_no_trajectory(tokenizer):
    result = play(tokenizer, {"You play X": ["pass"], "You play O": []}, num_generations=1)
    assert [t.episode.metadata["agent"] for t in result.trajectories] == ["X"]
    assert result.trajectories[0].turn_rewards == [-1.0]


def test_the_envs_turn_limit_truncates_every_seat_that_moved(tokenizer):
    result = play(tokenizer, X_WINS, num_generations=1, env_kwargs={"max_turns": 3})
    seats = {e.metadata["agent"]: e for e in result.episodes}
    assert (seats["X"].num_turns, seats["O"].num_turns) == (2, 1)
    assert all(e.truncated and not e.terminated for e in seats.values())


def test_a_cut_by_the_loops_token_budget_truncates_every_seat(tokenizer):
    result = play(tokenizer, X_WINS, num_generations=1, max_episode_tokens=12)
    assert all(e.metadata["truncated_by"] == "token_budget" and e.truncated for e in result.episodes)


def test_groups_hold_a_tasks_seats_together_and_split_by_seat_for_advantages(tokenizer):
    result = play(tokenizer, X_WINS, tasks=(0, 1), num_generations=2)
    per_task = task_groups(result.trajectories, 2)
    assert [len(group) for group in per_task] == [4, 4]
    per_seat = seat_groups(per_task)
    assert [[t.episode.metadata["agent"] for t in group] for group in per_seat] == [["X", "X"], ["O", "O"]] * 2
    assert all(len({t.group_id for t in group}) == 1 for group in per_seat)


class BreaksOnSecondMove(TicTacToeSelfPlay):
    """TicTacToe whose second move raises: an env failure, reported by the vector env as ``info["error"]``."""

    def _play(self, agent, action):
        if self.board.count(".") < 9:
            raise RuntimeError("the board server went away")
        return super()._play(agent, action)


def test_an_env_failure_fails_every_seats_episode(tokenizer):
    policy = ScriptedPolicy(tokenizer, X_WINS)
    envs = envgym.VectorEnv([lambda: BreaksOnSecondMove(max_opening_plies=0)])
    result = rollout(policy, envs, task_indices=[0])
    assert [e.metadata["agent"] for e in result.episodes] == ["X", "O"]
    assert all(e.failed and "board server" in e.error for e in result.episodes)


class MessageLevelPlayer:
    """A message-level policy (no tokenizer) that plays the first free cell it reads and keeps what it was shown."""

    name = "message-level"

    def __init__(self):
        self.seen: list[list[dict]] = []

    def chat(self, histories, params, tools):
        self.seen += [list(history) for history in histories]
        boards = [next(m["content"] for m in reversed(h) if m["role"] == "user") for h in histories]
        return [
            Generation(f"<move>{next(c for c in board.split() if c.isdigit() and len(c) == 1)}</move>")
            for board in boards
        ]


def test_a_message_level_policy_sees_each_seats_own_history():
    player = MessageLevelPlayer()
    envs = envgym.VectorEnv([lambda: envgym.make("games/TicTacToe-v0", opponent="self", max_opening_plies=0)])
    result = rollout(player, envs, task_indices=[0])
    assert [e.metadata["agent"] for e in result.episodes] == ["X", "O"] and not result.trajectories
    for history in player.seen:
        mark = "X" if "You play X" in history[0]["content"] else "O"
        own = [m["content"] for m in history if m["role"] == "assistant"]
        assert f"You play {'O' if mark == 'X' else 'X'}" not in str(history)  # never the other seat's prompt
        assert len(own) == (len(history) - 1) // 2  # its own moves only, between the messages addressed to it

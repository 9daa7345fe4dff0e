"""Self-play training: one policy plays both seats, and both seats' tokens are in the loss and carry gradient."""

import math

import pytest

pytest.importorskip("torch")

from helpers.tiny_models import tiny_model_path  # noqa: E402

import envgym  # noqa: E402
from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.agents.training.trainer import GRPOTrainer  # noqa: E402
from envgym.core import Task, action_text  # noqa: E402
from envgym.multiagent import MultiAgentEnv, SeatTurn  # noqa: E402
from envgym.tasks import ListTaskSource  # noqa: E402


class Relay(MultiAgentEnv):
    """Seats ``a`` and ``b`` answer twice each, in turn. Each turn pays the acting seat a reward read from its text
    (so samples differ), and the other seat the opposite: every seat's rewards vary across a group."""

    agents = ("a", "b")

    def __init__(self):
        self.tasks = ListTaskSource([Task("relay", [{"role": "user", "content": "You are a. Say something."}])])

    def _reset_seats(self, task, options):
        self.turn = 0
        return "a", task.prompt(), {}

    def _play(self, agent, action):
        self.turn += 1
        other = "b" if agent == "a" else "a"
        score = sum(map(ord, action_text(action))) % 7 / 7
        intro = "You are b. " if self.turn == 1 else ""
        return SeatTurn(
            {other: [{"role": "user", "content": f"{intro}Your turn."}]},
            {agent: {"score": score}, other: {"score": -score}},
            None if self.turn == 4 else other,
        )


class SeatAAlwaysWins(MultiAgentEnv):
    """Each seat answers once; ``a`` always wins (+1) and ``b`` always loses (-1), whatever they say."""

    agents = ("a", "b")

    def __init__(self):
        self.tasks = ListTaskSource([Task("fixed", [{"role": "user", "content": "You are a. Say something."}])])

    def _reset_seats(self, task, options):
        return "a", task.prompt(), {}

    def _play(self, agent, action):
        if agent == "a":
            return SeatTurn({"b": [{"role": "user", "content": "You are b. Say something."}]}, {}, "b")
        return SeatTurn({}, {"a": {"outcome": 1.0}, "b": {"outcome": -1.0}}, None)


def tiny():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model_path()
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


@pytest.fixture(scope="module")
def trained():
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=4, num_tasks_per_step=1, max_completion_length=4, learning_rate=1e-3, max_steps=1, seed=3
    )
    trainer = GRPOTrainer(model, tokenizer, Relay, config, device="cpu")
    (metrics,) = trainer.train()
    return trainer, metrics


def test_both_seats_trajectories_are_in_the_loss_with_their_policy_tokens(trained):
    trainer, metrics = trained
    rollouts = [t for group in trainer.last_rollouts for t in group]
    assert sorted(t.episode.metadata["agent"] for t in rollouts) == ["a"] * 4 + ["b"] * 4
    assert all(t.num_policy_tokens > 0 and len(t.turn_rewards) == 2 for t in rollouts)
    assert metrics["policy_tokens"] == sum(t.num_policy_tokens for t in rollouts)
    assert math.isfinite(metrics["loss"])


@pytest.mark.parametrize("seat", ["a", "b"])
def test_each_seats_tokens_alone_give_the_parameters_gradient(trained, seat):
    trainer, _ = trained
    alone = [[t for t in group if t.episode.metadata["agent"] == seat] for group in trainer.last_rollouts]
    metrics = trainer._update(alone)
    assert metrics["policy_tokens"] > 0 and metrics["grad_norm"] > 0


@pytest.mark.parametrize(
    "env_id, kwargs", [("games/TicTacToe-v0", {"opponent": "self"}), ("games/DescribeGuess-v0", {})]
)
def test_the_registered_two_seat_games_train(env_id, kwargs):
    model, tokenizer = tiny()
    config = GRPOConfig(num_generations=2, num_tasks_per_step=1, max_completion_length=4, max_steps=1)
    env = lambda: envgym.make(env_id, **kwargs)  # noqa: E731
    (metrics,) = GRPOTrainer(model, tokenizer, env, config, device="cpu").train()
    assert math.isfinite(metrics["loss"]) and metrics["episodes_failed"] == 0


def test_dynamic_sampling_and_the_signal_check_read_each_seat_on_its_own():
    """Across seats the rewards differ (+1, -1), but within each seat they never do: no advantage, no gradient."""
    model, tokenizer = tiny()
    config = GRPOConfig(
        num_generations=2,
        num_tasks_per_step=1,
        max_completion_length=2,
        max_steps=1,
        dynamic_sampling=True,
        dynamic_sampling_max_rounds=0,
    )
    (metrics,) = GRPOTrainer(model, tokenizer, SeatAAlwaysWins, config, device="cpu").train()
    assert metrics["groups_dropped"] == 1 and metrics["zero_advantage_groups"] == 2 and "warning" in metrics

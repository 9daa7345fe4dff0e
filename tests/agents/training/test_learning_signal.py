"""A step whose groups all have equal rewards says so: zero_advantage_groups and a warning, in metrics.jsonl and
on the console, with likely causes and what to try."""

import io
import json

import pytest

pytest.importorskip("torch")

from helpers.add_numbers import AddNumbers  # noqa: E402
from helpers.tiny_models import tiny_model_path  # noqa: E402
from rich.console import Console  # noqa: E402

from envgym.agents.training.config import GRPOConfig  # noqa: E402
from envgym.agents.training.learning_signal import learning_signal  # noqa: E402
from envgym.agents.trajectory import Trajectory  # noqa: E402
from envgym.cli.output import StepProgress, training_callback  # noqa: E402
from envgym.episode import Episode  # noqa: E402


def trajectory(reward: float, finish: str = "stop") -> Trajectory:
    episode = Episode(env_id="test", task_id="t", prompt=[])
    episode.add_turn("answer", [], reward, True, False, {"finish_reason": finish})
    return Trajectory(
        episode=episode,
        prompt_ids=[1],
        completion_ids=[2],
        logprobs=[0.0],
        loss_mask=[1],
        turn_ends=[0],
        turn_rewards=[reward],
        turn_reward_components=[{}],
        truncated=False,
        group_id="g",
    )


def test_groups_with_equal_rewards_are_counted_and_no_warning_while_one_group_differs():
    signal = learning_signal(
        [[trajectory(0.0), trajectory(0.0)], [trajectory(0.0), trajectory(1.0)]], GRPOConfig(num_generations=2)
    )
    assert signal == {"zero_advantage_groups": 1}


def test_a_group_with_tied_outcomes_but_different_step_rewards_has_signal():
    def stepped(step_rewards: list[float]) -> Trajectory:
        t = trajectory(0.0)
        t.completion_ids = [2, 3]
        t.episode.metadata["process_rewards"] = {
            "steps": {"rewards": step_rewards, "spans": [(0, 1), (1, 2)], "credit": "min", "weight": 1.0}
        }
        return t

    config = GRPOConfig(num_generations=2)
    assert learning_signal([[stepped([1.0, 0.0]), stepped([1.0, 1.0])]], config) == {"zero_advantage_groups": 0}
    flat = learning_signal([[stepped([1.0, 1.0]), stepped([1.0, 1.0])]], config)
    assert flat["zero_advantage_groups"] == 1 and "warning" in flat


def test_rebn_counts_identical_episodes_as_signal_because_its_batch_normalised_turn_advantages_are_not_zero():
    def two_turns() -> Trajectory:
        t = trajectory(0.5)
        t.episode.add_turn("answer", [], 1.0, True, False, {"finish_reason": "stop"})
        t.turn_rewards, t.turn_reward_components = [0.5, 1.0], [{}, {}]
        return t

    same = [[two_turns(), two_turns()]]
    assert learning_signal(same, GRPOConfig(num_generations=2, advantage="rebn")) == {"zero_advantage_groups": 0}
    assert learning_signal(same, GRPOConfig(num_generations=2))["zero_advantage_groups"] == 1  # grpo: totals tie


def test_when_every_group_is_flat_the_warning_names_causes_and_remedies():
    signal = learning_signal([[trajectory(-0.2, "length"), trajectory(-0.2, "length")]], GRPOConfig(num_generations=2))
    assert signal["zero_advantage_groups"] == 1
    warning = signal["warning"]
    assert warning.startswith("no learning signal") and "(-0.2)" in warning
    assert "too hard" in warning and "format penalty" in warning and "100% of turns were cut" in warning
    assert "dynamic_sampling" in warning and "max_completion_length" in warning


def test_a_run_on_equal_rewards_warns_in_metrics_and_on_the_console(tmp_path):
    from envgym.agents.engines.models import load_model
    from envgym.agents.training.trainer import GRPOTrainer

    model, tokenizer = load_model(tiny_model_path())
    config = GRPOConfig(num_generations=2, num_tasks_per_step=2, max_completion_length=3, max_steps=2)
    # AddNumbers asks for 7-digit sums in <answer> tags: in 3 tokens the tiny model always gets 0.
    trainer = GRPOTrainer(model, tokenizer, AddNumbers, config, out_dir=tmp_path, device="cpu")
    console = Console(file=io.StringIO(), width=80)
    with StepProgress(console, "GRPO", config.max_steps) as progress:
        trainer.train(on_step=training_callback(progress, console))
    metrics = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["zero_advantage_groups"] for m in metrics] == [2, 2]
    assert all(m["warning"].startswith("no learning signal") for m in metrics)
    printed = console.file.getvalue()
    assert printed.count("warning (step 1): no learning signal") == 1 and "zero-advantage groups 2/2" in printed

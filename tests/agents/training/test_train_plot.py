"""The reward curve PNG: the reward, the unshaped correctness where shaping made them differ, the tool calls."""

import pytest

pytest.importorskip("matplotlib")

from envgym.agents.training import train_plot  # noqa: E402


def lines_drawn(monkeypatch):
    """The labels of what plot_rewards drew (the figure is inspected before it is closed)."""
    import matplotlib.pyplot as plt

    seen = {}

    def keep(figure):
        seen["labels"] = [line.get_label() for axis in figure.axes for line in axis.get_lines()]
        seen["axes"] = len(figure.axes)

    monkeypatch.setattr(plt, "close", keep)
    return seen


def record(step, reward, correct, calls=None):
    return {
        "step": step,
        "reward_mean": reward,
        "reward_std": 0.1,
        "reward/correct": correct,
        **({} if calls is None else {"tool_calls_mean": calls}),
    }


def test_a_shaped_tool_run_draws_the_unshaped_reward_and_the_tool_calls(monkeypatch, tmp_path):
    seen = lines_drawn(monkeypatch)
    train_plot.plot_rewards([record(1, 0.5, 0.0, 1.0), record(2, 1.2, 0.7, 1.0)], tmp_path / "curve.png")
    assert "correct (unshaped)" in seen["labels"] and seen["axes"] == 2
    assert (tmp_path / "curve.png").exists()


def test_an_unshaped_run_without_tools_draws_the_reward_alone(monkeypatch, tmp_path):
    seen = lines_drawn(monkeypatch)
    train_plot.plot_rewards([record(1, 0.1, 0.1), record(2, 0.4, 0.4)], tmp_path / "curve.png")
    assert seen["labels"] == ["reward mean"] and seen["axes"] == 1

"""The trainer's metrics line says how often the policy used its tools (issue 21: tool calls logged per step)."""

import pytest

pytest.importorskip("torch")

import envgym  # noqa: E402
from envgym.agents.training.step_metrics import reward_metrics  # noqa: E402
from envgym.agents.trajectory import Trajectory  # noqa: E402


def trajectory(turn_infos: list[dict]) -> Trajectory:
    episode = envgym.Episode(env_id="math/Calculator-v0", task_id="t", prompt=[{"role": "user", "content": "q"}])
    for position, info in enumerate(turn_infos):
        episode.add_turn("a", [], 0.0, position == len(turn_infos) - 1, False, info)
    return Trajectory(
        episode=episode,
        prompt_ids=[1],
        completion_ids=[],
        logprobs=[],
        loss_mask=[],
        turn_ends=[0] * len(turn_infos),
        turn_rewards=[0.0] * len(turn_infos),
        turn_reward_components=[{} for _ in turn_infos],
        truncated=False,
        group_id="g",
    )


def test_tool_calls_mean_is_the_mean_over_episodes_of_the_calls_each_made():
    group = [
        trajectory([{"tool_calls": 1}, {"tool_calls": 0}]),
        trajectory([{"tool_calls": 2}, {"tool_calls": 1}, {"tool_calls": 0}]),
        trajectory([{"tool_calls": 0}]),
    ]
    assert reward_metrics([group], [group])["tool_calls_mean"] == pytest.approx(4 / 3)


def test_envs_without_tools_log_no_tool_calls_metric():
    group = [trajectory([{}]), trajectory([{"correct": True}])]
    assert "tool_calls_mean" not in reward_metrics([group], [group])

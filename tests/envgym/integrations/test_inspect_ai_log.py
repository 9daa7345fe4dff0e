"""envgym eval runs as Inspect AI logs (`envgym export RUN --format inspect`): every converted log passes
Inspect's own reader, keeps the transcript (tool calls and results), per-turn rewards and the run's metrics, and
a failed episode is a sample error, never a score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from helpers.cli_run import run_envgym  # noqa: E402
from helpers.sum_tool_env import ENV_ID, sum_tool_env  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402

from envgym.episode import Episode  # noqa: E402
from envgym.integrations.inspect_ai_log import write_inspect_logs  # noqa: E402

ADD_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 3}}}],
}


def play(task_index: int, sample: int, actions: list) -> Episode:
    """An episode of the real SumTool env played with scripted actions, recorded as the rollout loop does."""
    env = sum_tool_env()
    messages, info = env.reset(seed=0, options={"task_index": task_index})
    episode = Episode(
        ENV_ID,
        env.task.id,
        messages,
        seed=0,
        reset_info=info,
        metadata={"task_index": task_index, "sample_index": sample},
    )
    for action in actions:
        episode.add_turn(action, *env.step(action))
        if episode.done:
            break
    return episode


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A run folder as envgym eval leaves it: samples.jsonl (eval's own records) and results.json."""
    from envgym.agents.evaluation.evaluate import sample_record

    failed = play(1, 0, ["<answer>8</answer>"])
    failed.error = "verifier unreachable"
    episodes = [play(0, 0, [ADD_CALL, "<answer>5</answer>"]), play(0, 1, ["<answer>4</answer>"]), failed]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "samples.jsonl").write_text("".join(json.dumps(sample_record(e)) + "\n" for e in episodes))
    results = {"model": "scripted", "envs": {ENV_ID: {"pass@1": 0.5, "mean_reward": 0.45, "n_tasks": 2}}}
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def converted(run_folder: Path, tmp_path: Path):
    [path] = write_inspect_logs(run_folder, tmp_path / "logs")
    return read_eval_log(str(path))


def sample_of(log, task_index: int, epoch: int):
    """The sample of one episode (Inspect keeps its own order: by epoch, then id)."""
    return next(s for s in log.samples if (s.id, s.epoch) == (task_index, epoch))


def test_a_converted_run_passes_inspects_log_reader_with_every_episode(run_folder, tmp_path):
    log = converted(run_folder, tmp_path)
    assert log.status == "success" and log.eval.task == f"envgym/{ENV_ID}" and log.eval.model == "scripted"
    assert sorted((s.id, s.epoch) for s in log.samples) == [(0, 1), (0, 2), (1, 1)]


def test_tool_calls_and_tool_results_become_inspect_tool_messages(run_folder, tmp_path):
    messages = sample_of(converted(run_folder, tmp_path), 0, 1).messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    [call] = messages[2].tool_calls
    assert (call.id, call.function, call.arguments) == ("c1", "add", {"a": 2, "b": 3})
    assert messages[3].tool_call_id == "c1" and messages[3].text.strip() == "5"


def test_each_sample_scores_the_episode_reward_with_per_turn_rewards_and_components(run_folder, tmp_path):
    sample = sample_of(converted(run_folder, tmp_path), 0, 1)
    score = sample.scores["envgym_reward"]
    assert score.value == pytest.approx(0.9)
    assert score.metadata["turn_rewards"] == pytest.approx([-0.1, 1.0]) and score.metadata["correct"] is True
    assert [event.data["reward"] for event in sample.events if event.event == "info"] == pytest.approx([-0.1, 1.0])


def test_the_transcript_shows_each_generation_then_the_tools_the_env_ran_then_the_turns_reward(run_folder, tmp_path):
    events = sample_of(converted(run_folder, tmp_path), 0, 1).events
    assert [event.event for event in events] == ["model", "tool", "info", "model", "info"]
    assert [tool.name for tool in events[0].tools] == ["add"] and len(events[3].input) == 4
    assert (events[1].function, events[1].arguments, events[1].result.strip()) == ("add", {"a": 2, "b": 3}, "5")


def test_a_failed_episode_is_a_sample_error_with_no_score(run_folder, tmp_path):
    failed = sample_of(converted(run_folder, tmp_path), 1, 1)
    assert failed.error.message == "verifier unreachable" and not failed.scores


def test_the_runs_results_become_the_logs_metrics_and_counts_are_left_out(run_folder, tmp_path):
    metrics = converted(run_folder, tmp_path).results.scores[0].metrics
    assert {name: m.value for name, m in metrics.items()} == {"pass@1": 0.5, "mean_reward": 0.45}


def test_export_format_inspect_writes_a_log_per_env_and_says_how_to_view_it(run_folder, tmp_path):
    result = run_envgym("export", str(run_folder), "--format", "inspect", "--out", str(tmp_path / "logs"))
    assert result.returncode == 0, result.lines
    [path] = (tmp_path / "logs").glob("*.eval")
    assert "inspect view --log-dir" in result.lines[-1] and len(read_eval_log(str(path)).samples) == 3


def test_exporting_the_same_run_again_replaces_its_log_instead_of_adding_one(run_folder, tmp_path):
    first = write_inspect_logs(run_folder, tmp_path / "logs")
    assert write_inspect_logs(run_folder, tmp_path / "logs") == first
    assert len(list((tmp_path / "logs").glob("*.eval"))) == 1


def test_export_format_inspect_refuses_the_row_filters_it_would_ignore(run_folder):
    result = run_envgym("export", str(run_folder), "--format", "inspect", "--min-reward", "1")
    assert result.returncode == 2 and "drop --min-reward" in result.lines[-1]


def test_a_real_eval_run_of_the_served_model_converts(served_tiny_model, tmp_path):
    from envgym.agents.engines.openai_policy import OpenAIPolicy
    from envgym.agents.evaluation.evaluate import evaluate
    from envgym.agents.evaluation.suite import EnvEval

    policy = OpenAIPolicy(served_tiny_model, "tiny")
    config = EnvEval(env="math/Arithmetic-v0", num_generations=2, n_tasks=2, k=[1, 2], max_completion_length=8)
    evaluate(policy, [config], tmp_path / "run", model_name="tiny")
    log = converted(tmp_path / "run", tmp_path)
    assert len(log.samples) == 4 and all(s.scores["envgym_reward"].value in (0.0, 1.0) for s in log.samples)
    assert "pass@2" in log.results.scores[0].metrics

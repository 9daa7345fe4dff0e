"""envgym envs as Inspect AI tasks: a real local model (the tiny model behind `envgym serve model`, through
Inspect's OpenAI-compatible provider) plays them to completion; a scripted Inspect model checks tool calling and
that env failures are sample errors, never scores."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from helpers.sum_tool_env import register_sum_tool_env, sum_tool_env  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from envgym.integrations.inspect_ai import envgym_task  # noqa: E402

SERVED = "openai-api/envgym/tiny"  # Inspect's OpenAI-compatible provider; the service name picks ENVGYM_API_KEY


@pytest.fixture
def served(served_tiny_model, monkeypatch):
    """Inspect's model spec and base URL for the served tiny model."""
    monkeypatch.setenv("ENVGYM_API_KEY", "unused")
    return {"model": SERVED, "model_base_url": served_tiny_model}


def scripted_model(*outputs: ModelOutput, seen_tools: list | None = None):
    """Inspect's mock provider answering ``outputs`` in turn (usage set, so it counts no tokens with tiktoken,
    which would download its vocabulary); the tool names each request offered go to ``seen_tools``."""
    queue = list(outputs)

    def answer(input, tools, tool_choice, config):
        if seen_tools is not None:
            seen_tools.append([tool.name for tool in tools])
        output = queue.pop(0)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def run(task, tmp_path, **options):
    [log] = inspect_ai.eval(task, log_dir=str(tmp_path / "logs"), display="none", **options)
    return log


def test_a_served_local_model_plays_an_env_to_completion_and_the_log_reads_back(served, tmp_path):
    log = run(envgym_task("math/Arithmetic-v0", n_tasks=2), tmp_path, max_tokens=16, **served)
    assert log.status == "success" and log.eval.task == "envgym/math/Arithmetic-v0" and len(log.samples) == 2
    again = read_eval_log(log.location)
    for sample in again.samples:
        score = sample.scores["envgym_reward"]
        assert score.value in (0.0, 1.0) and sample.error is None
        assert "correct" in score.metadata["reward_components"] and score.metadata["ended_by"] == "terminated"
        assert [m.role for m in sample.messages] == ["user", "assistant"]
        assert sample.metadata["env_id"] == "math/Arithmetic-v0"
    assert "mean" in again.results.scores[0].metrics


def test_inspect_eval_finds_every_envgym_env_by_id_through_the_entry_point(served, tmp_path):
    # a fresh process: Inspect knows nothing of envgym until its `inspect_ai` entry point is loaded
    command = [
        sys.executable,
        "-m",
        "inspect_ai",
        "eval",
        "envgym/math/Arithmetic-v0",
        "-T",
        "n_tasks=1",
        "--model",
        served["model"],
        "--model-base-url",
        served["model_base_url"],
        "--max-tokens",
        "8",
        "--log-dir",
        str(tmp_path / "logs"),
        "--display",
        "none",
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "ENVGYM_API_KEY": "unused"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.task_args["n_tasks"] == 1 and len(log.samples) == 1


def test_a_tool_env_offers_its_tools_and_the_models_tool_call_is_played_by_the_env(scratch_registry, tmp_path):
    env_id = register_sum_tool_env()
    seen_tools: list = []
    model = scripted_model(
        ModelOutput.for_tool_call("mockllm/model", "add", {"a": 2, "b": 3}),
        ModelOutput.from_content("mockllm/model", "<answer>5</answer>"),
        seen_tools=seen_tools,
    )
    log = run(envgym_task(env_id, n_tasks=1), tmp_path, model=model)
    [sample] = log.samples
    assert seen_tools == [["add"], ["add"]]
    tool_message = next(m for m in sample.messages if m.role == "tool")
    assert tool_message.text.strip() == "5" and tool_message.function == "add"
    score = sample.scores["envgym_reward"]
    assert score.value == pytest.approx(0.9)  # right, less the env's 0.1 per tool call
    assert score.metadata["turn_rewards"] == pytest.approx([-0.1, 1.0]) and score.metadata["correct"] is True


def test_a_failing_env_is_a_sample_error_in_the_log_never_a_score(scratch_registry, tmp_path):
    from envgym.registration import register

    register("test/BrokenSumTool-v0", lambda: sum_tool_env(broken=True), max_turns=4)
    model = scripted_model(ModelOutput.for_tool_call("mockllm/model", "add", {"a": 2, "b": 3}))
    log = run(envgym_task("test/BrokenSumTool-v0", n_tasks=1), tmp_path, model=model)
    [sample] = read_eval_log(log.location).samples
    assert log.status == "error" and "the adding service is unreachable" in sample.error.message
    assert not sample.scores


def test_task_indices_past_the_envs_tasks_are_refused_with_the_count(scratch_registry):
    env_id = register_sum_tool_env()
    with pytest.raises(ValueError, match="test/SumTool-v0 has 2 tasks"):
        envgym_task(env_id, n_tasks=3)

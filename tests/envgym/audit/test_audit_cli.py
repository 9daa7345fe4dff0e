"""`envgym audit --json`: one JSON object as the last line, exit code 1 when there are findings."""

import json

import pytest
from typer.testing import CliRunner

import envgym
from envgym.cli.app import app
from envgym.core import Env, Task, action_text
from envgym.tasks.sources import ListTaskSource


class SayYes(Env):
    """Answer 'yes' in <answer></answer>; ``lenient`` also pays any reply that mentions the question."""

    def __init__(self, lenient: bool = False):
        self.lenient = lenient
        self.tasks = ListTaskSource(
            [
                Task(
                    id="q",
                    answer="yes",
                    messages=[{"role": "user", "content": "Is water wet? Answer yes or no inside <answer></answer>."}],
                )
            ]
        )

    def _reset(self, task, options):
        return task.prompt(), {}

    def reference_action(self):
        return "<answer>yes</answer>"

    def wrong_action(self):
        return "<answer>no</answer>"

    def _step(self, action):
        text = action_text(action)
        correct = text.strip() == "<answer>yes</answer>" or (self.lenient and "water" in text)
        return [], float(correct), True, False, {"correct": correct}


@pytest.fixture
def toy_envs(scratch_registry):
    envgym.register("toy/SayYes-v0", SayYes, max_turns=1)
    envgym.register("toy/Lenient-v0", SayYes, max_turns=1, lenient=True)


def run(*args):
    result = CliRunner().invoke(app, ["audit", *args])
    return result, json.loads(result.stdout.strip().splitlines()[-1])


def test_json_output_has_per_env_results_and_totals(toy_envs):
    result, report = run("toy/SayYes-v0", "--json")
    assert result.exit_code == 0, result.stdout
    env = report["envs"]["toy/SayYes-v0"]
    assert set(env) >= {"strategies", "findings", "timings", "totals", "reference", "notes"}
    assert len(env["strategies"]) > 50 and env["findings"] == []
    assert set(report["totals"]) >= {
        "earning",
        "crashes",
        "code_executed",
        "state_leaks",
        "slow_steps",
        "honest_refused",
        "max_step_seconds",
    }


def test_findings_exit_1_and_name_env_strategy_and_tasks(toy_envs):
    result, report = run("toy/Lenient-v0", "--json")
    assert result.exit_code == 1
    assert report["totals"]["earning"] >= 1
    finding = report["envs"]["toy/Lenient-v0"]["findings"][0]
    assert (finding["env_id"], finding["kind"], finding["tasks"]) == ("toy/Lenient-v0", "earns_reward", [0])
    assert finding["strategy"] and finding["evidence"]


def test_unknown_ids_are_refused_with_a_hint(toy_envs):
    result = CliRunner().invoke(app, ["audit", "toy/SayYess-v0"])
    assert result.exit_code == 2 and "Did you mean" in result.output


def test_all_skips_unsafe_envs_unless_asked(scratch_registry, monkeypatch):
    scratch_registry.clear()
    envgym.register("toy/SayYes-v0", SayYes, max_turns=1)
    envgym.register("toy/Unsafe-v0", SayYes, max_turns=1, lenient=True, unsafe=True, unsafe_reason="lenient")
    _, report = run("--all", "--json")
    assert list(report["envs"]) == ["toy/SayYes-v0"]
    _, report = run("--all", "--include-unsafe", "--json")
    assert list(report["envs"]) == ["toy/SayYes-v0", "toy/Unsafe-v0"]


def test_env_kwargs_reach_the_env_that_is_audited(toy_envs):
    result, report = run("toy/SayYes-v0", "--env-kwargs", '{"lenient": true}', "--json")
    assert result.exit_code == 1 and report["totals"]["earning"] >= 1
    assert report["envs"]["toy/SayYes-v0"]["target"]["env_kwargs"] == {"lenient": True}


def test_env_kwargs_that_are_not_a_json_object_are_refused_in_one_line(toy_envs):
    result = CliRunner().invoke(app, ["audit", "toy/SayYes-v0", "--env-kwargs", "[1]"])
    assert result.exit_code == 2 and "--env-kwargs must be a JSON object" in result.output


def test_the_table_prints_full_ids_that_differ_only_at_the_end(scratch_registry):
    long_ids = ["toy/AnEnvironmentWithAVeryLongNameIndeed-v0", "toy/AnEnvironmentWithAVeryLongNameIndeed-v1"]
    for env_id in long_ids:
        envgym.register(env_id, SayYes, max_turns=1)
    result = CliRunner().invoke(app, ["audit", *long_ids, "--cue-tasks", "0"])
    assert result.exit_code == 0, result.output
    assert all(env_id in result.output for env_id in long_ids)

"""Eval counts failed samples in their own column and leaves them out of pass@k, maj@k and the means."""

import itertools
import json

import pytest

AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer

from helpers.scripted_policy import ScriptedPolicy
from helpers.tiny_models import tiny_model_path

from envgym.agents.evaluation.evaluate import evaluate
from envgym.agents.evaluation.report import write_reports
from envgym.agents.evaluation.suite import EnvEval
from envgym.core import Env, Task, action_text
from envgym.tasks import ListTaskSource

TASKS = [
    Task("a", [{"role": "user", "content": "Say 7, task a."}], answer="7"),
    Task("b", [{"role": "user", "content": "Say 7, task b."}], answer="7"),
]


class SayAnswer(Env):
    """One turn, reward 1 when the reply is the answer. The first episode of task b to reach its step crashes."""

    resets_of_b = itertools.count()

    def __init__(self):
        self.tasks = ListTaskSource(TASKS)

    def _reset(self, task, options):
        self.crash = task.id == "b" and next(SayAnswer.resets_of_b) == 0
        return task.prompt(), {}

    def _step(self, action):
        if self.crash:
            raise RuntimeError("sandbox infra_error")
        correct = action_text(action).strip() == self.task.answer
        return [], float(correct), True, False, {"correct": correct, "answer": action_text(action).strip()}


@pytest.fixture()
def results(scratch_registry, tmp_path):
    from envgym import register

    SayAnswer.resets_of_b = itertools.count()
    register("test/SayAnswer-v0", SayAnswer)
    policy = ScriptedPolicy(AutoTokenizer.from_pretrained(tiny_model_path()), {"task a": ["7"], "task b": ["7"]})
    config = EnvEval(env="test/SayAnswer-v0", num_generations=4, n_tasks=2, k=[1, 4], max_completion_length=8)
    out = evaluate(policy, [config], tmp_path, batch_size=8)
    write_reports(out, tmp_path)
    return out["envs"]["test/SayAnswer-v0"], tmp_path


def test_failed_samples_are_counted_apart_and_not_scored_as_zero(results):
    summary, _ = results
    assert summary["n_samples"] == 8 and summary["n_failed"] == 1
    assert "sandbox infra_error" in summary["failure_example"]
    # every healthy sample is right: the failure does not pull pass@1 or the mean reward below 1
    assert summary["pass@1"] == 1.0 and summary["mean_reward"] == 1.0 and summary["rewards"] == [1.0] * 7


def test_pass_at_k_is_averaged_over_tasks_with_k_healthy_samples(results):
    summary, _ = results
    assert summary["n_tasks@1"] == 2 and summary["n_tasks@4"] == 1  # task b has 3 healthy samples < k = 4
    assert summary["pass@4"] == 1.0 and summary["maj@4"] == 1.0


def test_failed_samples_have_their_own_column_in_the_reports(results):
    _, out = results
    header, _, row = (out / "report.md").read_text().splitlines()[2:5]
    cells = dict(zip([c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]))
    assert cells["n_failed"] == "1" and cells["n_samples"] == "8" and cells["pass@1"] == "1.000 ± 0.000"
    assert "<th>n_failed</th>" in (out / "report.html").read_text()
    on_file = json.loads((out / "results.json").read_text())["envs"]["test/SayAnswer-v0"]
    assert on_file["n_failed"] == 1 and "pass^1" in on_file
    means = {"pass@1", "pass^1", "maj@1", "mean_reward", "avg_turns", "avg_tool_calls", "avg_tokens", "truncation_rate"}
    assert means <= set(on_file["stderr"]) and all(on_file["stderr"][m] >= 0 for m in means)
    assert on_file["stderr"]["pass@4"] is None  # one task has 4 healthy samples: no spread to measure
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert sum(r["error"] is not None for r in records) == 1


def test_more_tasks_asked_than_the_env_has_plays_all_of_them_and_fails_none(scratch_registry, tmp_path):
    from envgym import register

    SayAnswer.resets_of_b = itertools.count(1)  # no crash: only the task count is under test
    register("test/SayAnswer-v0", SayAnswer)
    policy = ScriptedPolicy(AutoTokenizer.from_pretrained(tiny_model_path()), {"task a": ["7"], "task b": ["7"]})
    config = EnvEval(env="test/SayAnswer-v0", num_generations=1, n_tasks=5, k=[1], max_completion_length=8)
    summary = evaluate(policy, [config], tmp_path)["envs"]["test/SayAnswer-v0"]
    assert summary["n_tasks"] == 2 and summary["n_samples"] == 2 and summary["n_failed"] == 0
    assert summary["pass@1"] == 1.0

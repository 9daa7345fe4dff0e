"""The before/after page of two runs: both rewards per env, both runs' transcripts per task, tasks that flipped;
and the commands that write it."""

from html.parser import HTMLParser

import pytest
from helpers.report_runs import ENV, HOSTILE, write_run

from envgym.agents.evaluation.report_compare import task_passes, write_comparison
from envgym.agents.evaluation.report_transcripts import page_name


class TaskRows(HTMLParser):
    """Attributes of the comparison's filterable task rows, and how many sample cards each holds."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self.samples: list[int] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if "task-pair" in classes:
            self.rows.append(dict(attrs))
            self.samples.append(0)
        elif "sample" in classes:
            assert "row" not in classes  # a sample inside a task row is not filtered on its own
            self.samples[-1] += 1


def record(correct: bool, error: str | None = None) -> dict:
    return {"correct": correct, "error": error}


@pytest.fixture()
def runs(tmp_path):
    before = write_run(
        tmp_path / "before", "model A", {0: [True, False], 1: [False, False], 2: [True, True]}, hostile=True
    )
    after = write_run(tmp_path / "after", "model B", {0: [True, True], 1: [True, False], 2: [False, False]})
    return before, after, write_comparison(before, after, tmp_path).read_text(encoding="utf-8")


def test_a_task_passes_when_at_least_half_its_healthy_samples_are_correct():
    assert task_passes([record(True), record(False)]) is True
    assert task_passes([record(True), record(False), record(False)]) is False
    assert task_passes([record(True), record(False, error="infra"), record(False, error="infra")]) is True


def test_a_task_whose_samples_all_failed_passes_in_no_run():
    assert task_passes([record(False, error="infra")]) is None and task_passes([]) is None


def test_tasks_that_flipped_are_marked_each_way(runs):
    rows = TaskRows(runs[2]).rows
    assert [(r["data-task"], r.get("data-flipped")) for r in rows] == [
        ("0", None),
        ("1", "up"),
        ("2", "down"),
        ("3", None),
    ]
    assert "flipped: fail → pass" in runs[2] and "flipped: pass → fail" in runs[2]


def test_each_task_shows_both_runs_transcripts_side_by_side(runs):
    parsed = TaskRows(runs[2])
    assert parsed.samples == [4, 4, 4, 2]
    assert runs[2].count("<div class='side'>") == 4 and "<h4>A: model A</h4>" in runs[2]


def test_the_rewards_table_has_both_runs_the_change_and_the_flip_counts(runs):
    # mean rewards over healthy samples: A 3/6 = 0.5, B 3/6 = 0.5; one task flipped each way
    assert (
        "<tr class='env-rewards'><td>math/Calculator-v0</td><td>0.500</td><td>0.500</td><td>+0.000</td>"
        "<td>0.500</td><td>0.500</td><td>1</td><td>1</td></tr>"
    ) in runs[2]


def test_the_page_links_both_runs_reports_and_escapes_their_text(runs):
    assert '<a href="before/report.html">report A</a>' in runs[2]
    assert HOSTILE not in runs[2] and "&lt;script&gt;" in runs[2]


def test_a_task_only_one_run_has_shows_no_samples_on_the_other_side(tmp_path):
    before = write_run(tmp_path / "before", "A", {0: [True]})
    after = write_run(tmp_path / "after", "B", {0: [True], 1: [True]})
    # task 1 is the failed sample in before and a healthy one in after: it exists in both; task 2 only in after
    text = write_comparison(before, after, tmp_path).read_text()
    assert TaskRows(text).samples == [2, 2, 1] and "<p>no samples</p>" in text


def test_eval_compare_out_writes_the_page(runs, tmp_path):
    from typer.testing import CliRunner

    from envgym.cli.app import app

    result = CliRunner().invoke(app, ["eval", "compare", str(runs[0]), str(runs[1]), "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    assert "comparison page:" in result.output and (tmp_path / "cmp" / "comparison.html").exists()


def test_eval_report_rebuilds_a_runs_pages(runs):
    from typer.testing import CliRunner

    from envgym.cli.app import app

    (runs[0] / page_name(ENV)).unlink()
    result = CliRunner().invoke(app, ["eval", "report", str(runs[0])])
    assert result.exit_code == 0, result.output
    assert (runs[0] / page_name(ENV)).exists()


def test_two_runs_of_one_model_are_told_apart_by_their_folders(tmp_path):
    before = write_run(tmp_path / "prompt-a", "smollm2", {0: [True]})
    after = write_run(tmp_path / "prompt-b", "smollm2", {0: [False]})
    text = write_comparison(before, after, tmp_path).read_text()
    assert "<h4>A: smollm2 (prompt-a)</h4>" in text and "<h4>B: smollm2 (prompt-b)</h4>" in text


def test_envs_in_one_run_only_are_named_as_left_out():
    from envgym.agents.evaluation.report_compare import comparison_page

    a = {"model": "A", "envs": {"x/One-v0": {}, "x/Two-v0": {}}}
    b = {"model": "B", "envs": {"x/Two-v0": {}, "x/Three-v0": {}}}
    text = comparison_page([(a, []), (b, [])])
    assert "Left out, in one run only: x/One-v0, x/Three-v0." in text and "<h2>x/Two-v0</h2>" in text

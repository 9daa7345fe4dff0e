"""The eval report page: links to the transcript pages, integer ks on the pass@k plot, and rebuilding a run's
reports from its files."""

import pytest
from helpers.report_runs import ENV, write_run

from envgym.agents.evaluation.report import read_run, write_reports
from envgym.agents.evaluation.report_transcripts import page_name


def test_the_report_links_each_env_to_its_transcript_page(tmp_path):
    write_run(tmp_path, "model A", {0: [True]})
    assert f'<a href="{page_name(ENV)}">every transcript</a>' in (tmp_path / "report.html").read_text()


def test_an_env_without_samples_on_file_gets_no_transcript_page(tmp_path):
    write_run(tmp_path, "model A", {0: [True]})
    results, _ = read_run(tmp_path)
    (tmp_path / "samples.jsonl").unlink()
    (tmp_path / page_name(ENV)).unlink()
    write_reports(results, tmp_path)
    assert not (tmp_path / page_name(ENV)).exists() and "every transcript" not in (tmp_path / "report.html").read_text()


def test_a_missing_run_is_named_with_what_to_give(tmp_path):
    with pytest.raises(FileNotFoundError, match="results.json does not exist; give a run folder"):
        read_run(tmp_path)


def test_the_pass_at_k_axis_ticks_only_integers():
    pytest.importorskip("matplotlib")
    from envgym.agents.evaluation.report import pass_at_k_figure

    figure = pass_at_k_figure({"envs": {"a": {"pass@1": 0.2, "pass@2": 0.3, "pass@4": 0.5}}})
    low, high = figure.axes[0].get_xlim()
    ticks = [tick for tick in figure.axes[0].get_xticks() if low <= tick <= high]
    assert len(ticks) >= 2 and all(float(tick).is_integer() for tick in ticks), ticks


def test_the_report_has_the_group_table_and_a_failed_call_shows_the_expected_call():
    from envgym.agents.evaluation.report import group_rows, markdown, transcript

    results = {
        "model": "m",
        "envs": {"a": {"pass@1": 0.5}, "b": {"pass@1": 0.0}},
        "groups": {"groups": {"ast": {"envs": ["a", "b"], "pass@1": 0.25}}, "overall": 0.25},
    }
    assert group_rows(results)[1] == [["ast", "2", "0.250"], ["overall", "2", "0.250"]]
    assert "| ast | 2 | 0.250 |" in markdown(results)
    info = {
        "call_failure": "wrong_value",
        "call_failure_reason": "wrong_value: f: argument 'x' is 2; expected one of [3]",
        "expected_calls": [{"f": {"x": [3]}}],
    }
    episode = {"prompt": [], "turns": [{"action": "[f(x=2)]", "observation": [], "info": info, "reward": 0.0}]}
    text = transcript(episode)
    assert "argument 'x' is 2; expected one of [3]" in text and 'expected: [{"f": {"x": [3]}}]' in text

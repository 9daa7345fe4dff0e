"""The report's transcript pages: every sample's turns, tool calls and results, per-turn rewards, why each episode
ended, the data the filters read, and hostile model text shown as text."""

import json
from html.parser import HTMLParser

import pytest
from helpers.report_runs import ENV, HOSTILE, write_run

from envgym.agents.evaluation.report_transcripts import MESSAGE_LIMIT, message_html, page_name, transcript_page


class Elements(HTMLParser):
    """The start tags of a page and the attributes of its filterable rows."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attributes = dict(attrs)
        if "row" in (attributes.get("class") or "").split():
            self.rows.append(attributes)


@pytest.fixture()
def page(tmp_path):
    write_run(tmp_path, "model A", {0: [True, False], 1: [False, False]}, hostile=True)
    return (tmp_path / page_name(ENV)).read_text(encoding="utf-8")


def test_every_sample_is_a_row_of_its_env_page(page):
    rows = Elements(page).rows
    assert len(rows) == 5  # 2 tasks x 2 samples, and the sample whose env failed
    assert [(r["data-task"], r["data-outcome"]) for r in rows] == [
        ("0", "pass"),
        ("0", "fail"),
        ("1", "fail"),
        ("1", "fail"),
        ("2", "error"),
    ]


def test_rows_carry_reward_and_task_id_for_the_filters(page):
    rows = Elements(page).rows
    assert [float(r["data-reward"]) for r in rows] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert rows[2]["data-task-id"] == "calc-1" and rows[0]["data-env"] == ENV


def test_tool_calls_and_tool_results_are_shown(page):
    assert "tool call: calc({&quot;expression&quot;: &quot;6*7&quot;})" in page
    assert "tool result <small>calc call0</small>" in page


def test_each_turn_shows_its_reward_components_and_generation_end(page):
    assert "reward 1.000 · components: correct 1.000 · generation: stop · terminated" in page


def test_a_turn_that_called_tools_says_how_many(page):
    assert "generation: stop · tool calls: 1</div>" in page
    assert "invalid action: wrong value" in page


def test_why_each_episode_ended_is_shown(page):
    assert "ended: terminated · answer: 42" in page
    assert "ended: error · error: sandbox infra_error" in page


def test_model_text_is_escaped_and_never_markup(page):
    elements = Elements(page)
    assert elements.tags.count("script") == 1 and "img" not in elements.tags  # the page's own filter script only
    assert HOSTILE not in page and "&lt;script&gt;document.title=" in page


def test_a_long_message_is_cut_with_a_note():
    shown = message_html({"role": "assistant", "content": "x" * (MESSAGE_LIMIT + 500)})
    assert "x" * MESSAGE_LIMIT in shown and "x" * (MESSAGE_LIMIT + 1) not in shown
    assert "[500 more characters]" in shown


def test_a_message_whose_content_is_not_text_is_shown_as_json():
    shown = message_html({"role": "user", "content": [{"type": "text", "text": "<b>hi</b>"}]})
    assert json.dumps("<b>hi</b>")[1:-1].replace("<", "&lt;").replace(">", "&gt;") in shown and "<b>" not in shown


def test_the_page_names_its_env_and_model_escaped():
    text = transcript_page("x/<Env>-v0", [], "<model>")
    assert "<title>x/&lt;Env&gt;-v0: transcripts of &lt;model&gt;</title>" in text


def test_page_names_are_file_names():
    assert page_name("rg/ab-v0") == "transcripts-rg-ab-v0.html"


def test_earlier_prompt_messages_are_folded_and_the_task_is_shown():
    from envgym.agents.evaluation.report_transcripts import episode_html

    prompt = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "3+3?"},
    ]
    shown = episode_html({"prompt": prompt, "turns": []})
    folded, _, rest = shown.partition("</details>")
    assert "3 earlier prompt message(s): system, user, assistant" in folded and "be brief" in folded
    assert "3+3?" in rest and "3+3?" not in folded

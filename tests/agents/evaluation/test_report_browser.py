"""The report's pages in a real headless browser (the system's Chromium, from Debian's ``chromium`` package,
driven by Playwright; no browser is ever downloaded): the pages load from ``file://``, show the expected
elements, hostile text stays text, and the filters hide and show rows."""

import shutil

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

from helpers.report_runs import ENV, write_run  # noqa: E402

from envgym.agents.evaluation.report_compare import write_comparison  # noqa: E402
from envgym.agents.evaluation.report_transcripts import page_name  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on PATH: apt-get install chromium (scripts/setup.sh installs it)"
)


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    before = write_run(root / "before", "model A", {0: [True, False], 1: [False, False], 2: [True, True]}, hostile=True)
    after = write_run(root / "after", "model B", {0: [True, True], 1: [True, False], 2: [False, False]})
    write_comparison(before, after, root)
    return root


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


@pytest.fixture()
def tab(browser):
    page = browser.new_page()
    yield page
    page.close()


def visible_rows(tab) -> int:
    return tab.locator(".row:visible").count()


def test_the_report_links_to_the_transcript_page(tab, run_folders):
    tab.goto((run_folders / "before" / "report.html").as_uri())
    tab.click("text=every transcript")
    assert tab.url.endswith(page_name(ENV)) and tab.locator(".sample").count() == 7


def test_a_transcript_shows_turns_tool_calls_and_why_it_ended(tab, run_folders):
    tab.goto((run_folders / "before" / page_name(ENV)).as_uri())
    assert tab.locator("#shown").text_content() == "7 of 7 shown"
    first = tab.locator(".sample").first
    assert not first.locator(".turn").first.is_visible()  # closed until opened
    first.locator("summary").click()
    assert first.locator(".turn").count() == 2 and first.locator(".tool-call").is_visible()
    assert "tool result" in first.locator(".role-tool").text_content()
    assert "ended: terminated" in first.locator(".ended").text_content()


def test_hostile_model_text_renders_as_text(tab, run_folders):
    tab.goto((run_folders / "before" / page_name(ENV)).as_uri())
    tab.click("text=open all")
    assert "<script>document.title='pwned'</script>" in tab.locator(".sample").first.text_content()
    assert tab.title() != "pwned" and tab.locator(".sample img").count() == 0


def test_the_outcome_filter_hides_and_shows_rows(tab, run_folders):
    tab.goto((run_folders / "before" / page_name(ENV)).as_uri())
    tab.select_option("#outcome", "pass")
    assert visible_rows(tab) == 3 and tab.locator("#shown").text_content() == "3 of 7 shown"
    tab.select_option("#outcome", "error")
    assert visible_rows(tab) == 1
    tab.select_option("#outcome", "all")
    assert visible_rows(tab) == 7


def test_the_reward_range_and_task_filters_hide_rows(tab, run_folders):
    tab.goto((run_folders / "before" / page_name(ENV)).as_uri())
    tab.fill("#min-reward", "0.5")
    assert visible_rows(tab) == 3
    tab.fill("#task", "2")
    assert visible_rows(tab) == 2
    tab.fill("#min-reward", "")
    tab.fill("#task", "calc-1")
    assert visible_rows(tab) == 2


def test_the_comparison_shows_both_runs_and_filters_flipped_tasks(tab, run_folders):
    tab.goto((run_folders / "comparison.html").as_uri())
    assert tab.locator("tr.env-rewards").count() == 1 and visible_rows(tab) == 4
    tab.check("#flipped-only")
    assert visible_rows(tab) == 2 and tab.locator("#shown").text_content() == "2 of 4 shown"
    flipped = tab.locator(".row:visible").first
    flipped.locator("summary").first.click()
    assert flipped.locator(".side > div").count() == 2 and flipped.locator(".sample").count() == 4

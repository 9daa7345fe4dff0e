"""Screenshots of the eval report's pages for docs/agents.md: an env's transcript page and the before/after page of
two runs, taken in headless Chromium (Debian's ``chromium`` package, driven by Playwright; nothing is downloaded).

    python scripts/report_screenshots.py --transcripts RUN games/GuessNumber-v0 --compare RUN_A RUN_B --out docs/img

RUN, RUN_A and RUN_B are ``envgym eval --out`` folders. Their reports are written again first, so runs made before
the transcript pages existed get them; the comparison page is written to a temporary folder.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from envgym.agents.evaluation.report import read_run, write_reports
from envgym.agents.evaluation.report_compare import write_comparison
from envgym.agents.evaluation.report_transcripts import page_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--transcripts",
        nargs=2,
        metavar=("RUN", "ENV"),
        required=True,
        help="The run and env whose transcript page is shot.",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("RUN_A", "RUN_B"),
        required=True,
        help="The two runs of the comparison page (flipped tasks only, the first opened).",
    )
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium on PATH: apt-get install chromium")
    run, env_id = Path(args.transcripts[0]), args.transcripts[1]
    for folder in {run, *args.compare}:
        write_reports(read_run(folder)[0], folder)
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        comparison = write_comparison(*args.compare, scratch)
        browser = playwright.chromium.launch(executable_path=chromium)
        tab = browser.new_page(viewport={"width": 1280, "height": 1000})
        tab.goto((run / page_name(env_id)).as_uri())
        # one transcript open, the first of several turns where there is one, its task picked with the task filter
        samples = tab.locator(".sample:has(.turn ~ .turn)")
        sample = samples.first if samples.count() else tab.locator(".sample").first
        tab.fill("#task", sample.get_attribute("data-task-id") or "")
        sample.locator("summary").first.click()
        tab.screenshot(path=args.out / "report-transcripts.png")
        tab.goto(comparison.as_uri())
        tab.check("#flipped-only")  # the tasks that changed are what a before/after is read for
        task = tab.locator(".row:visible").first
        task.locator("summary").first.click()
        for side in range(2):  # and one sample of each run
            task.locator(".side > div").nth(side).locator(".sample summary").first.click()
        tab.screenshot(path=args.out / "report-comparison.png")
        browser.close()
    print(f"wrote {args.out / 'report-transcripts.png'} and {args.out / 'report-comparison.png'}")


if __name__ == "__main__":
    main()

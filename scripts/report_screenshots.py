"""Screenshots of the eval report's pages for docs/agents.md: one env's transcript page and the before/after page
of two runs, taken in headless Chromium (Debian's ``chromium`` package, driven by Playwright; nothing is
downloaded).

    python scripts/report_screenshots.py RUN_A RUN_B --env math/Calculator-v0 --out docs/img

RUN_A and RUN_B are ``envgym eval --out`` folders; their reports are written again first (so runs made before
the transcript pages existed get them); the comparison page is written to a temporary folder.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from envgym.agents.report import read_run, write_reports
from envgym.agents.report_compare import write_comparison
from envgym.agents.report_transcripts import page_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--env", required=True, help="The env whose transcript page is shot (from RUN_A).")
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium on PATH: apt-get install chromium")
    for run in (args.run_a, args.run_b):
        write_reports(read_run(run)[0], run)
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        comparison = write_comparison(args.run_a, args.run_b, scratch)
        browser = playwright.chromium.launch(executable_path=chromium)
        tab = browser.new_page(viewport={"width": 1280, "height": 1000})
        tab.goto((args.run_a / page_name(args.env)).as_uri())
        tab.locator(".sample summary").first.click()  # one transcript open: its turns are what the page is for
        tab.screenshot(path=args.out / "report-transcripts.png")
        tab.goto(comparison.as_uri())
        tab.select_option("#env", args.env)
        tab.locator(".row:visible summary").first.click()
        tab.screenshot(path=args.out / "report-comparison.png")
        browser.close()
    print(f"wrote {args.out / 'report-transcripts.png'} and {args.out / 'report-comparison.png'}")


if __name__ == "__main__":
    main()

"""The Python in the docs runs: every ```python block of a page, in order, in one namespace."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
RUNNABLE_PAGES = ["quickstart.md", "custom-env.md", "vector.md"]


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_page_code_runs(page, scratch_registry):
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.DOTALL)
    assert blocks, f"{page} has no python blocks"
    namespace: dict = {"__name__": f"docs_{page}"}
    for block in blocks:
        exec(compile(block, f"{page}", "exec"), namespace)


def test_custom_env_fits_in_30_lines():
    page = (DOCS / "custom-env.md").read_text()
    env_code = re.findall(r"```python\n(.*?)```", page, re.DOTALL)[0]
    assert len(env_code.strip().splitlines()) <= 30


def test_every_test_file_a_page_names_exists():
    """A page that points to a test file points to one that is there (files move; the pages must follow). Another
    project's test file is written with its folder in front (``NeMo-Skills/tests/...``) and not checked."""
    root = DOCS.parent
    pages = [*DOCS.glob("*.md"), root / "README.md"]
    named = {
        (page.name, path) for page in pages for path in re.findall(r"(?<![\w/-])(tests/[\w/]+\.py)", page.read_text())
    }
    assert named and not [(page, path) for page, path in sorted(named) if not (root / path).is_file()]

"""docs/bfcl.md: its Python runs as written."""

import re
from pathlib import Path

PAGE = Path(__file__).parents[3] / "docs" / "bfcl.md"


def test_the_pages_python_runs():
    namespace: dict = {"__name__": "docs_bfcl"}
    for block in re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL):
        exec(compile(block, str(PAGE), "exec"), namespace)

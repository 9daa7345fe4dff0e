"""The BFCL tests need bfcl-eval (the [bfcl] extra); without it they are skipped, naming the extra."""

import pytest

pytest.importorskip("bfcl_eval", reason="needs bfcl_eval (pip install --no-deps bfcl-eval, the [bfcl] extra)")

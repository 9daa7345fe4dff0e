"""sql/TextToSQL-v0 trains end to end: GRPO steps with the tiny model (tests/helpers/tiny_models.py) run on it."""

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # 45-80 s on 2 shared CPU cores (long table/schema prompts)

from helpers.tiny_training import train_tiny  # noqa: E402

import envgym  # noqa: E402


def test_grpo_steps_run_on_the_env():
    history = train_tiny(lambda: envgym.make("sql/TextToSQL-v0"))
    assert all(row["episodes_failed"] == 0 for row in history)

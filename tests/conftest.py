"""Shared pytest set-up: tests/helpers is importable as `helpers`; a test that imports an optional extra which is
not installed is skipped (naming the extra), so a [dev]-only install runs the suite to the end."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers.extras import missing_extra  # noqa: E402


def _skip_missing_extras():
    try:
        return (yield)
    except ModuleNotFoundError as error:
        reason = missing_extra(error)
        if reason is None:
            raise
        pytest.skip(reason)


pytest_runtest_setup = pytest.hookimpl(wrapper=True)(_skip_missing_extras)
pytest_runtest_call = pytest.hookimpl(wrapper=True)(_skip_missing_extras)


@pytest.fixture
def scratch_registry(monkeypatch):
    """A copy of the full registry (plugins loaded first) that the test may change freely."""
    from envgym import registration

    registration.load_plugins()
    monkeypatch.setattr(registration, "registry", dict(registration.registry))
    return registration.registry

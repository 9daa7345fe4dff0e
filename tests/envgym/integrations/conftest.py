"""Fixtures shared by the integration tests: one real local model behind an OpenAI-compatible API."""

import pytest


@pytest.fixture(scope="session")
def served_tiny_model():
    """The ``/v1`` base URL of ``envgym serve model`` serving the tiny test model (started once per session)."""
    from helpers.openai_server import openai_server
    from helpers.tiny_models import tiny_model_path

    with openai_server(tiny_model_path()) as base_url:
        yield base_url

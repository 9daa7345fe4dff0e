"""`envgym serve model`'s app in process (FastAPI's test client): vLLM's extensions, and refusals that teach."""

import pytest
from fastapi.testclient import TestClient
from helpers.tiny_models import tiny_model_path

from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.server.model import build_app

CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0}


@pytest.fixture(scope="module")
def client():
    return TestClient(build_app(TransformersPolicy(tiny_model_path(), device="cpu")))


def test_chat_returns_token_ids_only_when_asked_like_vllm(client):
    plain = client.post("/v1/chat/completions", json=CHAT).json()
    asked = client.post("/v1/chat/completions", json={**CHAT, "return_token_ids": True}).json()
    assert "token_ids" not in plain["choices"][0] and "prompt_token_ids" not in plain
    assert len(asked["choices"][0]["token_ids"]) == asked["usage"]["completion_tokens"] > 0
    assert len(asked["prompt_token_ids"]) == asked["usage"]["prompt_tokens"]


def test_completions_return_token_ids_only_when_asked(client):
    body = {"model": "tiny", "prompt": "What is", "max_tokens": 3, "temperature": 0}
    assert "token_ids" not in client.post("/v1/completions", json=body).json()["choices"][0]
    asked = client.post("/v1/completions", json={**body, "return_token_ids": True}).json()["choices"][0]
    assert 1 <= len(asked["token_ids"]) <= 3


def test_neutral_vllm_sampling_fields_are_accepted(client):
    body = {**CHAT, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0}
    assert client.post("/v1/chat/completions", json=body).status_code == 200


def test_a_sampling_field_the_server_cannot_honour_is_refused_not_ignored(client):
    response = client.post("/v1/chat/completions", json={**CHAT, "repetition_penalty": 1.3})
    assert response.status_code == 400 and "repetition_penalty=1.3 is not supported" in response.text


def test_more_than_one_choice_per_request_is_refused(client):
    response = client.post("/v1/chat/completions", json={**CHAT, "n": 2})
    assert response.status_code == 400 and "n=2" in response.text


def test_serving_a_model_that_is_not_there_is_one_line_before_loading_anything(tmp_path):
    from helpers.cli_run import run_envgym

    run = run_envgym("serve", "model", "--model", "/no/such/model", "--port", "1", cwd=tmp_path)
    assert run.returncode == 2 and len(run.lines) == 1, run.lines
    assert "cannot find model '/no/such/model'" in run.lines[0] and "transformers" not in run.imported


def test_a_training_checkpoint_is_served(tmp_path):
    from envgym.agents.engines.models import load_causal_lm, load_tokenizer, write_checkpoint_info

    model = load_causal_lm(tiny_model_path())
    model.save_pretrained(tmp_path / "step-1")
    load_tokenizer(tiny_model_path()).save_pretrained(tmp_path / "step-1")
    write_checkpoint_info(tmp_path / "step-1", model)
    client = TestClient(build_app(TransformersPolicy(str(tmp_path / "step-1"), device="cpu")))
    assert client.post("/v1/chat/completions", json={**CHAT, "max_tokens": 2}).status_code == 200

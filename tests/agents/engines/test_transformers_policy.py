"""TransformersPolicy samples from exactly what the caller asks for, with the tiny model built in code."""

import json
import shutil

import pytest

pytest.importorskip("torch")  # the [train] extra; a [dev]-only install skips this module
pytest.importorskip("transformers")
import torch
from helpers.tiny_models import tiny_model_path

from envgym.agents.engines.policy import SamplingParams, render_prompt
from envgym.agents.engines.transformers_policy import TransformersPolicy

PROMPT = [{"role": "user", "content": "Say a number."}]


def plain_greedy(model, prompt_ids: list[int], steps: int) -> list[int]:
    """Argmax of the model's own logits, one token at a time: decoding with no processor at all."""
    ids = torch.tensor([prompt_ids])
    out = []
    with torch.no_grad():
        for _ in range(steps):
            token = int(model(ids).logits[0, -1].argmax())
            out.append(token)
            ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    return out


def test_sampling_ignores_a_repetition_penalty_in_the_models_generation_config(tmp_path):
    path = tmp_path / "penalised"
    shutil.copytree(tiny_model_path(), path)
    config = json.loads((path / "generation_config.json").read_text())
    (path / "generation_config.json").write_text(json.dumps({**config, "repetition_penalty": 5.0}))
    policy = TransformersPolicy(str(path), device="cpu")
    assert policy.model.generation_config.repetition_penalty == 5.0  # the checkpoint really asks for it
    prompt = render_prompt(policy.tokenizer, PROMPT)
    expected = plain_greedy(policy.model, prompt, 12)
    assert len(set(expected)) < len(expected), "the plain greedy text must repeat a token for the penalty to matter"

    [generation] = policy.generate([prompt], SamplingParams(max_completion_length=12, temperature=0.0))
    assert generation.token_ids == expected[: len(generation.token_ids)]


def test_sampling_logprobs_are_those_of_the_temperature_scaled_distribution():
    policy = TransformersPolicy(tiny_model_path(), device="cpu")
    prompt = render_prompt(policy.tokenizer, PROMPT)
    [generation] = policy.generate([prompt], SamplingParams(max_completion_length=8, temperature=0.7, seed=1))
    ids = torch.tensor([prompt + generation.token_ids])
    with torch.no_grad():
        logits = policy.model(ids).logits[0, len(prompt) - 1 : -1] / 0.7
    expected = logits.log_softmax(-1).gather(-1, torch.tensor(generation.token_ids)[:, None]).squeeze(-1)
    assert generation.logprobs == pytest.approx(expected.tolist(), abs=1e-4)


def test_the_samples_of_one_batch_differ_and_one_seed_reproduces_them():
    policy = TransformersPolicy(tiny_model_path(), device="cpu")
    prompt = render_prompt(policy.tokenizer, PROMPT)
    params = SamplingParams(max_completion_length=8, temperature=1.0, seed=7)
    first = [g.token_ids for g in policy.generate([prompt] * 4, params)]
    again = [g.token_ids for g in policy.generate([prompt] * 4, params)]
    assert len({tuple(ids) for ids in first}) > 1
    assert again == first


def test_repeated_prompts_share_one_prefill_and_generate_what_each_prompt_generates_alone(monkeypatch):
    policy = TransformersPolicy(tiny_model_path(), device="cpu")
    short = render_prompt(policy.tokenizer, PROMPT)
    long = render_prompt(policy.tokenizer, [{"role": "user", "content": "Count from one to nine, slowly please."}])
    prompts = [long, short, long, short, long]  # two distinct prompts of different lengths (left padding)
    prefilled = []  # (rows, cached length) of each shared prefill
    share = TransformersPolicy._shared_prefill

    def recording(self, *args):
        cache = share(self, *args)
        prefilled.append(None if cache is None else (cache.layers[0].keys.shape[0], cache.get_seq_length()))
        return cache

    monkeypatch.setattr(TransformersPolicy, "_shared_prefill", recording)
    greedy = SamplingParams(max_completion_length=10, temperature=0.0)
    together = policy.generate(prompts, greedy)
    assert prefilled[0] == (5, len(long) - 1)
    for prompt, generation in zip(prompts, together):
        [alone] = policy.generate([prompt], greedy)
        assert generation.token_ids == alone.token_ids == plain_greedy(policy.model, prompt, 10)[: len(alone.token_ids)]
        assert generation.logprobs == pytest.approx(alone.logprobs, abs=1e-4)
    # sampled logprobs stay those of the temperature-scaled distribution with a shared prefill
    sampled = policy.generate([short] * 3, SamplingParams(max_completion_length=6, temperature=0.7, seed=2))
    for generation in sampled:
        ids = torch.tensor([short + generation.token_ids])
        with torch.no_grad():
            logits = policy.model(ids).logits[0, len(short) - 1 : -1] / 0.7
        expected = logits.log_softmax(-1).gather(-1, torch.tensor(generation.token_ids)[:, None]).squeeze(-1)
        assert generation.logprobs == pytest.approx(expected.tolist(), abs=1e-4)

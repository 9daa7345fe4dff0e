"""``envgym bench learn``: does the same recipe learn as fast per step with our trainer as with TRL's?

Both sides train the packaged SmolLM2-135M-Instruct (its de-quantized float32 copy, a plain Hugging Face folder)
on the tasks of ``recipes/smollm2-arithmetic-cpu.yaml`` with the recipe's prompt (few-shot prefix included) and
reward (our math grader on the completion), with the same settings: LoRA r/α and all-linear targets, lr
(constant schedule), G, prompts per step, new tokens, temperature 1, β 0, AdamW (0.9, 0.99), grad clip 1.0,
gradient checkpointing as the recipe says (TRL's default is on, ours off), seed. Each run (one side, one seed)
is a subprocess of its own.

Seeds: every seed is run by both sides, and a seed fixes the task order: the tasks of step s are drawn once
from the seed (:func:`task_order`) and both sides play them in that order (ours through a task sampler, TRL
from a dataset in that order with its shuffling off). The result gives, per side, the mean and spread over
seeds of the reward at each step, of the step at which the run's 10-step moving average first reaches the
reward TRL ends with (TRL's last 10 steps, averaged over its seeds), and of wall time per step. Runs shorter
than 20 steps use a window of half their length (``window`` in the result), so the comparison still has steps
to tell apart. Each finished run's JSON is also printed to stderr as it ends, so a long run that is cut short
keeps what it measured.

A multi-turn recipe (a tool env, e.g. ``recipes/smollm2-tool-cpu.yaml``) is compared with TRL through both of
``envgym.integrations.trl``'s paths, ``trl-env`` and ``trl-rollout``, on the unshaped task reward; see
:mod:`envgym.agents.benchmarks.learn_bench_tool`.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer

import envgym

# The packaged copy (envgym/recipes), so the bench finds it from an installed wheel too.
RECIPE = Path(envgym.__file__).resolve().parent / "recipes" / "smollm2-arithmetic-cpu.yaml"
WINDOW = 10
SIDES = ("envgym", "trl")


def bench_learn(
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
    steps: int = typer.Option(None, "--steps", help="Steps per trainer (default: the recipe's max_steps)."),
    recipe: Path = typer.Option(RECIPE, "--recipe", help="A recipe whose env has a task source: one-turn, or "
                                                          "multi-turn (a tool recipe)."),
    seeds: int = typer.Option(3, "--seeds", help="Runs per side: seeds recipe seed, +1, ... (each fixes a task order)."),
    jobs: int = typer.Option(1, "--jobs", help="Runs at a time (more finish sooner on a shared machine; each run's "
                                              "seconds per step then include the others' load). Each run gets "
                                              "cores / jobs threads unless OMP_NUM_THREADS is set."),
) -> None:
    """Per-step reward curves of envgym's GRPOTrainer and TRL's GRPOTrainer on one recipe over several seeds,
    same run."""
    from envgym.agents.training.train_cli import read_recipe
    from envgym.benchmarks.report import emit, machine, share_cores

    env, _, _, config = read_recipe(recipe, {"max_steps": steps})
    turns = episode_turns(env, config)
    if config.max_steps < 4:
        raise typer.BadParameter(f"--steps must be >= 4 (curves are compared as moving averages of "
                                 f"{WINDOW} steps, or half the run when it is shorter than {2 * WINDOW})")
    if seeds < 1 or jobs < 1:
        raise typer.BadParameter(f"--seeds and --jobs must be >= 1, got {seeds} and {jobs}")
    try:
        import trl  # noqa: F401
    except ImportError as error:
        raise typer.BadParameter("bench learn compares with TRL: pip install 'envgym[peers]'") from error
    seed_list = [config.seed + offset for offset in range(seeds)]
    threads = share_cores(jobs)
    if turns > 1:  # a tool recipe: TRL plays whole episodes through both integration paths (learn_bench_tool)
        emit({**_bench_tool(recipe, config, turns, seed_list, jobs), "threads_per_run": threads}, as_json)
        return
    # Seed by seed (both sides of a seed before the next), so a run cut short has both sides of what it finished.
    order = [(side, seed) for seed in seed_list for side in SIDES]

    def run(side: str, seed: int) -> dict[str, Any]:
        measured = {"seed": seed, **_run_worker(side, recipe, config.max_steps, seed)}
        typer.echo(json.dumps({"side": side, **measured}), err=True)
        return measured

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        finished = list(pool.map(lambda job: run(*job), order))
    runs = {side: [measured for (of, _), measured in zip(order, finished) if of == side] for side in SIDES}
    result: dict[str, Any] = {"benchmark": "learn", "machine": machine(), "recipe": str(recipe),
                              "steps": config.max_steps, "seeds": seed_list, "jobs": jobs,
                              "threads_per_run": threads, "settings": {"gradient_checkpointing": config.gradient_checkpointing,
                                           "task_order": "drawn from each seed, the same for both sides"}}
    result.update(summarize(runs, config.max_steps))
    emit(result, as_json)


def _bench_tool(recipe: Path, config: Any, turns: int, seed_list: list[int], jobs: int) -> dict[str, Any]:
    """The multi-turn bench's result: every side of :data:`~envgym.agents.benchmarks.learn_bench_tool.TOOL_SIDES` on
    every seed, and the pairings of ours with each TRL path (a failed TRL path is skipped with its reason)."""
    from envgym.agents.benchmarks.learn_bench_tool import OBSERVATION_TOKENS, TOOL_SIDES, run_tool_bench, summarize_tool
    from envgym.benchmarks.report import machine

    runs, skipped = run_tool_bench(recipe, config.max_steps, seed_list, jobs, lambda line: typer.echo(line, err=True))
    settings = {"gradient_checkpointing": config.gradient_checkpointing,
                "task_order": "drawn from each seed, the same for every side", "max_turns": turns,
                "new_tokens_per_turn": config.max_completion_length,
                "trl_episode_token_budget": turns * (config.max_completion_length + OBSERVATION_TOKENS),
                "reward_compared": "unshaped: the recipe's env-sourced reward components (training reward is the "
                                   "recipe's, shaping included, on every side)"}
    result: dict[str, Any] = {"benchmark": "learn", "machine": machine(), "recipe": str(recipe),
                              "steps": config.max_steps, "seeds": seed_list, "jobs": jobs, "turns": turns,
                              "side_names": list(TOOL_SIDES), "settings": settings}
    result.update(summarize_tool(runs, config.max_steps, skipped))
    return result


def episode_turns(env: str | None, config: Any) -> int:
    """The most turns an episode of the recipe plays: its ``max_turns`` or the env's own limit (1 if neither)."""
    import envgym

    limits = (config.max_turns, envgym.spec(env).max_turns if env else None)
    return min((t for t in limits if t is not None), default=1)


def window_for(steps: int) -> int:
    """The moving-average window: ``WINDOW`` steps, or half the run when it is shorter than twice that."""
    return max(1, min(WINDOW, steps // 2))


def summarize(runs: dict[str, list[dict[str, Any]]], steps: int) -> dict[str, Any]:
    """Per side: the runs, and mean and spread over seeds of the reward at each step, of the step reaching the
    target (TRL's final reward: its last ``window`` steps, averaged over its seeds) and of seconds per step.
    ``met``: every run of ours reaches the target, and on average no later than TRL's runs do."""
    window = window_for(steps)
    target = _mean([_mean(run["rewards"][-window:]) for run in runs["trl"]])
    out: dict[str, Any] = {"window": window, "target_reward": target}
    for side in SIDES:
        for run in runs[side]:
            run["step_reaching_target"] = first_step_reaching(run["rewards"], target, window)
            run["seconds_per_step"] = run["seconds"] / steps
        reached = [run["step_reaching_target"] for run in runs[side] if run["step_reaching_target"] is not None]
        curves = [run["rewards"] for run in runs[side]]
        out[side] = {
            "reward_per_step": {"mean": [_mean(list(step)) for step in zip(*curves)],
                                "std": [_std(list(step)) for step in zip(*curves)]},
            "step_reaching_target": {**spread(reached), "reached": len(reached), "runs": len(curves)},
            "seconds_per_step": spread([run["seconds_per_step"] for run in runs[side]]),
            "first_window": spread([_mean(curve[:window]) for curve in curves]),
            "last_window": spread([_mean(curve[-window:]) for curve in curves]),
            "runs": runs[side],
        }
    ours, theirs = out["envgym"]["step_reaching_target"], out["trl"]["step_reaching_target"]
    out["met"] = (ours["reached"] == ours["runs"] and theirs["reached"] == theirs["runs"]
                  and ours["mean"] <= theirs["mean"])
    return out


def spread(values: list[float]) -> dict[str, Any]:
    """Mean, sample standard deviation (0 for one value), min and max; all None for no values."""
    if not values:
        return {"mean": None, "std": None, "min": None, "max": None}
    return {"mean": _mean(values), "std": _std(values), "min": min(values), "max": max(values)}


def first_step_reaching(rewards: list[float], target: float, window: int = WINDOW) -> int | None:
    """The first step (1-based) whose trailing ``window``-step mean reward is at least ``target``."""
    for end in range(window, len(rewards) + 1):
        if _mean(rewards[end - window:end]) >= target - 1e-12:
            return end
    return None


def task_order(seed: int, steps: int, per_step: int, num_tasks: int) -> list[int]:
    """The task indices both sides play, ``per_step`` per step, drawn once from ``seed``."""
    import numpy as np

    return [int(i) for i in np.random.default_rng(seed).integers(min(num_tasks, 2**31 - 1), size=steps * per_step)]


def fixed_order_sampler(order: list[int], per_step: int) -> Callable[[int, Any], int]:
    """A trainer task sampler that plays ``order``: step s gets tasks ``order[s*per_step:(s+1)*per_step]`` (a
    refill round of dynamic sampling replays them from the start)."""
    drawn: Counter[int] = Counter()

    def sample(step: int, rng: Any) -> int:
        index = order[step * per_step + drawn[step] % per_step]
        drawn[step] += 1
        return index

    return sample


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _std(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _run_worker(side: str, recipe: Path, steps: int, seed: int) -> dict[str, Any]:
    from envgym.benchmarks.report import run_worker as in_subprocess

    call = (f"from envgym.agents.benchmarks.learn_bench import run_worker; "
            f"run_worker({side!r}, {str(recipe)!r}, {steps}, {seed})")
    return in_subprocess(call, f"{side} (seed {seed})")


def run_worker(side: str, recipe: str, steps: int, seed: int) -> None:
    """Train ``steps`` steps of ``recipe`` with one side's trainer and ``seed``; print its per-step rewards and
    wall time as JSON."""
    import envgym
    from envgym.agents.engines.models import checkpoint_folder, resolve_model
    from envgym.agents.training.train_cli import read_recipe

    env, env_kwargs, model_name, config = read_recipe(Path(recipe), {"max_steps": steps, "seed": seed})
    path = checkpoint_folder(resolve_model(model_name or "smollm2"))
    tasks = envgym.make(env, **env_kwargs).unwrapped.tasks
    order = task_order(seed, steps, config.num_tasks_per_step, len(tasks))
    started = time.perf_counter()
    rewards = (_train_envgym if side == "envgym" else _train_trl)(path, env, env_kwargs, config, order)
    print(json.dumps({"rewards": rewards, "seconds": time.perf_counter() - started}), flush=True)


def _train_envgym(path: str, env: str, env_kwargs: dict[str, Any], config: Any, order: list[int]) -> list[float]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(path)
    trainer = GRPOTrainer(model, AutoTokenizer.from_pretrained(path), env, config, device="cpu", env_kwargs=env_kwargs,
                          task_sampler=fixed_order_sampler(order, config.num_tasks_per_step))
    return [m["reward_mean"] for m in trainer.train()]


def _train_trl(path: str, env_id: str, env_kwargs: dict[str, Any], config: Any, order: list[int]) -> list[float]:
    """TRL's GRPOTrainer on the env's tasks in ``order``: the prompt is what the env's reset shows, the reward is
    what the env's step gives for the completion (a fresh reset of the same task grades each one)."""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    import envgym

    env = envgym.make(env_id, **env_kwargs)
    rows = []
    for index in order:
        messages, _ = env.reset(options={"task_index": index})
        rows.append({"prompt": messages, "task_index": index})

    def reward(completions: list[Any], task_index: list[int], **_: Any) -> list[float]:
        scores = []
        for completion, index in zip(completions, task_index):
            env.reset(options={"task_index": index})
            text = completion[-1]["content"] if isinstance(completion, list) else completion
            scores.append(float(env.step(text)[1]))
        return scores

    class Rewards(TrainerCallback):
        def __init__(self) -> None:
            self.curve: list[float] = []

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if logs and "reward" in logs:
                self.curve.append(float(logs["reward"]))

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    callback = Rewards()
    with tempfile.TemporaryDirectory() as out:
        args = TRLConfig(output_dir=out, per_device_train_batch_size=config.num_generations * config.num_tasks_per_step,
                         num_generations=config.num_generations, max_completion_length=config.max_completion_length,
                         learning_rate=config.learning_rate, lr_scheduler_type="constant", beta=0.0,
                         max_steps=config.max_steps, temperature=config.temperature, top_p=1.0,
                         adam_beta1=config.adam_beta1, adam_beta2=config.adam_beta2, max_grad_norm=config.max_grad_norm,
                         gradient_checkpointing=config.gradient_checkpointing, shuffle_dataset=False,
                         logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, seed=config.seed,
                         bf16=False, dataloader_num_workers=0, disable_tqdm=True)
        lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                          target_modules=config.lora_target_modules, task_type="CAUSAL_LM")
        trainer = TRLTrainer(model=model, reward_funcs=reward, args=args, train_dataset=Dataset.from_list(rows),
                             processing_class=tokenizer, peft_config=lora, callbacks=[callback])
        trainer.train()
    return callback.curve

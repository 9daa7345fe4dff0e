"""``envgym bench learn``: does the same recipe learn as fast per step with our trainer as with TRL's?

Both sides train the packaged SmolLM2-135M-Instruct (its de-quantized float32 copy, a plain Hugging Face folder)
on the tasks of ``recipes/smollm2-arithmetic-cpu.yaml`` with the recipe's prompt (few-shot prefix included) and
reward (our math grader on the completion), with the same settings: LoRA r/α and all-linear targets, lr
(constant schedule), G, prompts per step, new tokens, temperature 1, β 0, AdamW (0.9, 0.99), grad clip 1.0,
seed. Each side runs in its own subprocess and reports its mean reward per step; the result says at which step
each side's 10-step moving average first reaches the reward TRL ends with (its last 10 steps), which is the
issue's "ours reaches TRL's reward no later than TRL does", on the step budget given.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import typer

RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "smollm2-arithmetic-cpu.yaml"
WINDOW = 10


def bench_learn(
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
    steps: int = typer.Option(None, "--steps", help="Steps per trainer (default: the recipe's max_steps)."),
    recipe: Path = typer.Option(RECIPE, "--recipe", help="A one-turn recipe whose env has a task source."),
) -> None:
    """Per-step reward curves of envgym's GRPOTrainer and TRL's GRPOTrainer on one recipe, same run."""
    from envgym.agents.train_cli import read_recipe
    from envgym.benchmarks.report import emit, machine

    _, _, _, config = read_recipe(recipe, {"max_steps": steps})
    if config.max_steps < WINDOW:
        raise typer.BadParameter(f"--steps must be >= {WINDOW} (curves are compared as {WINDOW}-step averages)")
    try:
        import trl  # noqa: F401
    except ImportError as error:
        raise typer.BadParameter("bench learn compares with TRL: pip install 'envgym[peers]'") from error
    result: dict[str, Any] = {"benchmark": "learn", "machine": machine(), "recipe": str(recipe),
                              "steps": config.max_steps}
    for side in ("envgym", "trl"):
        result[side] = _run_worker(side, recipe, config.max_steps)
    target = _mean(result["trl"]["rewards"][-WINDOW:])
    result["target_reward"] = target
    for side in ("envgym", "trl"):
        result[side]["step_reaching_target"] = first_step_reaching(result[side]["rewards"], target)
        result[side]["first_10"] = _mean(result[side]["rewards"][:WINDOW])
        result[side]["last_10"] = _mean(result[side]["rewards"][-WINDOW:])
    ours, theirs = result["envgym"]["step_reaching_target"], result["trl"]["step_reaching_target"]
    result["met"] = ours is not None and theirs is not None and ours <= theirs
    emit(result, as_json)


def first_step_reaching(rewards: list[float], target: float) -> int | None:
    """The first step (1-based) whose trailing ``WINDOW``-step mean reward is at least ``target``."""
    for end in range(WINDOW, len(rewards) + 1):
        if _mean(rewards[end - WINDOW:end]) >= target - 1e-12:
            return end
    return None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _run_worker(side: str, recipe: Path, steps: int) -> dict[str, Any]:
    from envgym.benchmarks.report import run_worker as in_subprocess

    call = f"from envgym.agents.learn_bench import run_worker; run_worker({side!r}, {str(recipe)!r}, {steps})"
    return in_subprocess(call, side)


def run_worker(side: str, recipe: str, steps: int) -> None:
    """Train ``steps`` steps of ``recipe`` with one side's trainer; print its per-step rewards as JSON."""
    from envgym.agents.models import checkpoint_folder, resolve_model
    from envgym.agents.train_cli import read_recipe

    env, env_kwargs, model_name, config = read_recipe(Path(recipe), {"max_steps": steps})
    path = checkpoint_folder(resolve_model(model_name or "smollm2"))
    started = time.perf_counter()
    rewards = (_train_envgym if side == "envgym" else _train_trl)(path, env, env_kwargs, config)
    print(json.dumps({"rewards": rewards, "seconds": time.perf_counter() - started}), flush=True)


def _train_envgym(path: str, env: str, env_kwargs: dict[str, Any], config: Any) -> list[float]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.trainer import GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(path)
    trainer = GRPOTrainer(model, AutoTokenizer.from_pretrained(path), env, config, device="cpu", env_kwargs=env_kwargs)
    return [m["reward_mean"] for m in trainer.train()]


def _train_trl(path: str, env_id: str, env_kwargs: dict[str, Any], config: Any) -> list[float]:
    """TRL's GRPOTrainer on the env's tasks: the prompt is what the env's reset shows, the reward is what the
    env's step gives for the completion (a fresh reset of the same task grades each one)."""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    import envgym

    env = envgym.make(env_id, **env_kwargs)
    count = config.max_steps * config.num_tasks_per_step
    rows = []
    for index in range(count):
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
                         logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, seed=config.seed,
                         bf16=False, dataloader_num_workers=0, disable_tqdm=True)
        lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                          target_modules=config.lora_target_modules, task_type="CAUSAL_LM")
        trainer = TRLTrainer(model=model, reward_funcs=reward, args=args, train_dataset=Dataset.from_list(rows),
                             processing_class=tokenizer, peft_config=lora, callbacks=[callback])
        trainer.train()
    return callback.curve

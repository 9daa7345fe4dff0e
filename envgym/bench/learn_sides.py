"""The sides of ``envgym bench learn`` (:mod:`envgym.bench.learn`): each trains one recipe for one seed, in a worker
process of its own, and prints its curves as one JSON line.

``envgym`` is our GRPOTrainer as the recipe says; ``trl`` is TRL's GRPOTrainer generating on its own (one-turn
recipes); ``trl-rollout`` and ``trl-env`` are TRL's GRPOTrainer through :mod:`envgym.integrations.trl`'s
``rollout_func`` and ``environment_factory`` paths (multi-turn recipes). Every side plays the seed's task order
and reports the unshaped reward, the training reward, tool calls per episode and the tasks of each step.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import envgym

OBSERVATION_TOKENS = 64
"""Room per turn in TRL's episode budget for the env's answer and the template tokens around a turn."""


def run_worker(side: str, recipe: str, steps: int, seed: int, device: str = "cpu") -> None:
    """Train ``steps`` steps of ``recipe`` with one side and ``seed`` on ``device``; print as JSON its unshaped and
    training rewards and tool calls per episode at each step, the tasks of each step, the wall time and (on CUDA)
    the peak GPU memory."""
    import torch

    import envgym
    from envgym.agents.engines.models import checkpoint_folder, resolve_model
    from envgym.agents.training.recipe import read_recipe

    read = read_recipe(Path(recipe), overrides={"max_steps": steps, "seed": seed})
    # Every side builds the env as envgym.make does, the recipe's reward spec among its arguments.
    env, env_kwargs, config = read.env, read.make_kwargs(), read.config
    path = checkpoint_folder(resolve_model(read.model or "smollm2"))
    tasks = envgym.make(env, **env_kwargs).unwrapped.tasks
    order = task_order(seed, steps, config.num_tasks_per_step, len(tasks))
    trainers = {
        "envgym": _train_envgym,
        "trl": _train_trl,
        "trl-env": _train_trl_env,
        "trl-rollout": _train_trl_rollout,
    }
    started = time.perf_counter()
    measured = trainers[side](path, env, env_kwargs, config, order, turns=episode_turns(env, env_kwargs), device=device)
    seconds = time.perf_counter() - started
    gpu = {"peak_gpu_mb": torch.cuda.max_memory_allocated() / 2**20} if device.startswith("cuda") else {}
    print(json.dumps({**measured, "seconds": seconds, **gpu}), flush=True)


def episode_turns(env: str | None, env_kwargs: dict[str, Any]) -> int:
    """The most turns an episode of the recipe plays: its env's turn limit, ``max_turns`` in its arguments or the
    registry's (1 without one; the TRL sides need the limit as a number)."""
    limit = env_kwargs.get("max_turns", envgym.spec(env).max_turns if env else None)
    return limit or 1


def trl_token_budget(per_turn: int, turns: int) -> int:
    """TRL's ``max_completion_length`` (a budget for the whole episode): the per-turn cap on one turn, else room
    for every turn's tokens and what the env and template add around it."""
    return per_turn if turns == 1 else turns * (per_turn + OBSERVATION_TOKENS)


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


def steps_of(played: list[int], num_generations: int, per_step: int) -> list[list[int]]:
    """Per step, the task of each group, from the task index of every episode in the order they were played
    (a group's ``num_generations`` episodes are consecutive)."""
    groups = played[::num_generations]
    return [groups[start : start + per_step] for start in range(0, len(groups), per_step)]


def calls_per_episode(episodes: list[list[Any]]) -> float:
    """Mean tool calls per episode (each given as its turns), as our trainer logs ``tool_calls_mean``."""
    return statistics.fmean([float(sum(turn.info.get("tool_calls", 0) for turn in turns)) for turns in episodes])


def unshaped_names(env_kwargs: dict[str, Any]) -> list[str] | None:
    """The reward components that are the task's own reward (source ``env``) of the built spec among ``make``'s
    arguments; None: no spec, the whole reward."""
    spec = env_kwargs.get("reward")
    return None if spec is None else [c.name for c in spec.components if c.source == "env"]


def _train_envgym(
    path: str, env: str, env_kwargs: dict[str, Any], config: Any, order: list[int], turns: int, device: str = "cpu"
) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    per_step, drawn = config.num_tasks_per_step, fixed_order_sampler(order, config.num_tasks_per_step)
    tasks: list[list[int]] = [[] for _ in range(config.max_steps)]

    def sample(step: int, rng: Any) -> int:
        index = drawn(step, rng)
        if len(tasks[step]) < per_step:  # a refill round replays the step's tasks: record the first round
            tasks[step].append(index)
        return index

    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(path),
        AutoTokenizer.from_pretrained(path),
        env,
        config,
        device=device,
        env_kwargs={key: value for key, value in env_kwargs.items() if key != "reward"},
        reward=env_kwargs.get("reward"),
        task_sampler=sample,
    )
    metrics = trainer.train()
    names = unshaped_names(env_kwargs)
    unshaped = [
        m["reward_mean"] if names is None else sum(m.get(f"reward/{name}", 0.0) for name in names) for m in metrics
    ]
    return {
        "rewards": unshaped,
        "train_rewards": [m["reward_mean"] for m in metrics],
        "tasks": tasks,
        "tool_calls": [m.get("tool_calls_mean", 0.0) for m in metrics],
    }


def _train_trl(
    path: str, env_id: str, env_kwargs: dict[str, Any], config: Any, order: list[int], turns: int, device: str = "cpu"
) -> dict[str, Any]:
    """TRL's GRPOTrainer generating on its own on the env's tasks in ``order``: the prompt is what the env's reset
    shows, the reward what the env's step gives for the completion (a fresh reset of the same task grades each)."""
    from datasets import Dataset

    env = envgym.make(env_id, **env_kwargs)
    names, played, rows = unshaped_names(env_kwargs), [], []
    for index in order:
        messages, _ = env.reset(options={"task_index": index})
        rows.append({"prompt": messages, "task_index": index})

    def play(completions: list[Any], task_index: list[int]) -> list[Any]:
        steps = []
        for completion, index in zip(completions, task_index):
            env.reset(options={"task_index": index})
            text = completion[-1]["content"] if isinstance(completion, list) else completion
            steps.append(env.step(text))
        return steps

    def reward(completions: list[Any], task_index: list[int], **_: Any) -> list[float]:
        played.extend(task_index)
        return [float(step[1]) for step in play(completions, task_index)]

    def unshaped(completions: list[Any], task_index: list[int], **_: Any) -> list[float]:
        steps = play(completions, task_index)
        if names is None:
            return [float(step[1]) for step in steps]
        return [sum(step[4].get("reward_components", {}).get(n, 0.0) for n in names) for step in steps]

    curves = _trl_train(path, config, turns, Dataset.from_list(rows), [reward, unshaped], device=device)
    return {
        **curves,
        "tasks": steps_of(played, config.num_generations, config.num_tasks_per_step),
        "tool_calls": [0.0] * len(curves["rewards"]),
    }


def _train_trl_rollout(
    path: str, env: str, env_kwargs: dict[str, Any], config: Any, order: list[int], turns: int, device: str = "cpu"
) -> dict[str, Any]:
    """TRL's GRPOTrainer with envgym's agent loop as its ``rollout_func``, on the recipe's env as ours sees it."""
    from envgym.integrations.trl import EnvgymRolloutFunc, envgym_dataset, envgym_reward_func, task_index_of

    names, played, tool_calls = unshaped_names(env_kwargs), [], []

    class Recorded(EnvgymRolloutFunc):
        def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            played.extend(task_index_of(prompt) for prompt in prompts)
            batch = super().__call__(prompts, trainer)
            tool_calls.append(calls_per_episode([episode.turns for episode in self.last_result.episodes]))
            return batch

    def unshaped(
        completions: list[Any],
        envgym_return: list[float | None],
        envgym_reward_components: list[dict[str, float]],
        **_: Any,
    ) -> list[float | None]:
        return [
            total if total is None or names is None else sum(components.get(n, 0.0) for n in names)
            for total, components in zip(envgym_return, envgym_reward_components)
        ]

    rollout_func = Recorded(env, max_turn_tokens=config.max_completion_length, **env_kwargs)
    curves = _trl_train(
        path,
        config,
        turns,
        envgym_dataset(env, order, **env_kwargs),
        [envgym_reward_func, unshaped],
        rollout_func=rollout_func,
        device=device,
    )
    return {
        **curves,
        "tasks": steps_of(played, config.num_generations, config.num_tasks_per_step),
        "tool_calls": tool_calls,
    }


def _train_trl_env(
    path: str, env: str, env_kwargs: dict[str, Any], config: Any, order: list[int], turns: int, device: str = "cpu"
) -> dict[str, Any]:
    """TRL's GRPOTrainer with its own tool loop over ``envgym_environment_factory`` (tools in the chat template)."""
    from envgym.integrations.trl import envgym_dataset, envgym_environment_factory, envgym_environment_reward

    kwargs = {**env_kwargs, "prompt_format": None}
    names, played, tool_calls = unshaped_names(env_kwargs), [], []
    base = envgym_environment_factory(env, **kwargs)

    def reset(self: Any, *, task_index: int | None = None, **row: Any) -> None:
        played.append(task_index)
        return base.reset(self, task_index=task_index, **row)

    def unshaped(completions: list[Any], environments: list[Any], **_: Any) -> list[float | None]:
        # Called after envgym_environment_reward, which played each final turn into its environment.
        tool_calls.append(calls_per_episode([environment.episode.turns for environment in environments]))
        return [
            None
            if e.episode.failed
            else e.episode.total_reward
            if names is None
            else sum(turn.reward_components.get(n, 0.0) for turn in e.episode.turns for n in names)
            for e in environments
        ]

    factory = type(base.__name__, (base,), {"reset": reset})
    curves = _trl_train(
        path,
        config,
        turns,
        envgym_dataset(env, order, **kwargs),
        [envgym_environment_reward, unshaped],
        environment_factory=factory,
        max_tool_calling_iterations=max(1, turns - 1),
        device=device,
    )
    return {
        **curves,
        "tasks": steps_of(played, config.num_generations, config.num_tasks_per_step),
        "tool_calls": tool_calls,
    }


def _trl_train(
    path: str,
    config: Any,
    turns: int,
    dataset: Any,
    reward_funcs: list[Any],
    *,
    rollout_func: Any = None,
    environment_factory: Any = None,
    device: str = "cpu",
    **extra_args: Any,
) -> dict[str, list[float]]:
    """Train with TRL's GRPOTrainer as the recipe says; the first reward function trains (weight 1), the second
    (``unshaped``, weight 0) is only logged. Returns both curves."""
    import os

    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig as TRLConfig
    from trl import GRPOTrainer as TRLTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # both hooks are "experimental" in TRL 1.16
    curves: dict[str, list[float]] = {"rewards": [], "train_rewards": []}

    class Rewards(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if logs and "reward" in logs:
                curves["train_rewards"].append(float(logs["reward"]))
                curves["rewards"].append(float(logs["rewards/unshaped/mean"]))

    with tempfile.TemporaryDirectory() as out:
        args = TRLConfig(
            output_dir=out,
            per_device_train_batch_size=config.num_generations * config.num_tasks_per_step,
            num_generations=config.num_generations,
            reward_weights=[1.0, 0.0],
            max_completion_length=trl_token_budget(config.max_completion_length, turns),
            learning_rate=config.learning_rate,
            lr_scheduler_type="constant",
            beta=0.0,
            max_steps=config.max_steps,
            temperature=config.temperature,
            top_p=config.top_p,
            adam_beta1=config.adam_beta1,
            adam_beta2=config.adam_beta2,
            max_grad_norm=config.max_grad_norm,
            gradient_checkpointing=config.gradient_checkpointing,
            shuffle_dataset=False,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            use_cpu=device == "cpu",
            seed=config.seed,
            bf16=False,
            dataloader_num_workers=0,
            disable_tqdm=True,
            **extra_args,
        )
        trainer = TRLTrainer(
            model=AutoModelForCausalLM.from_pretrained(path),
            reward_funcs=reward_funcs,
            args=args,
            train_dataset=dataset,
            processing_class=AutoTokenizer.from_pretrained(path),
            peft_config=trl_lora(config),
            callbacks=[Rewards()],
            rollout_func=rollout_func,
            environment_factory=environment_factory,
        )
        trainer.train()
    return curves


def trl_lora(config: Any) -> Any:
    """The peft ``LoraConfig`` TRL's side gets: the recipe's rank, alpha, dropout and target modules, as ours."""
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=config.lora_target_modules,
        task_type="CAUSAL_LM",
    )

"""``envgym bench learn`` on a multi-turn (tool) recipe: our trainer against TRL's GRPOTrainer on both of
:mod:`envgym.integrations.trl`'s paths.

Sides (each run of each a subprocess of its own, 3 seeds by default, every seed on every side):

- ``envgym``: our GRPOTrainer as the recipe says (its advantage, e.g. ``rebn`` per-turn credit).
- ``trl-rollout``: TRL's GRPOTrainer with ``rollout_func=envgym_rollout_func(...)``: envgym's agent loop plays
  the episodes with TRL's model, on the recipe's env exactly as ours sees it (prompt, tool tags, few-shot).
- ``trl-env``: TRL's GRPOTrainer with ``environment_factory=envgym_environment_factory(...)``: TRL's own tool
  loop, the env made with ``prompt_format=None`` (TRL shows the tools through the chat template and parses
  the calls the template's way). The recipe's other env kwargs, few-shot included, are as written.

Same on every side: model, LoRA (r, α, dropout, targets), lr (constant), G, prompts per step, temperature,
top-p, β 0, AdamW betas, grad clip, gradient checkpointing, seed, and the task order drawn from the seed. New
tokens: ours and ``trl-rollout`` cap each turn at the recipe's ``max_completion_length``; TRL's own
``max_completion_length`` is an episode budget (policy, tool and template tokens), set to ``max_turns`` times
(per-turn tokens + :data:`OBSERVATION_TOKENS`) so it does not bind before the turn limit; ``trl-env`` has no
per-turn cap in TRL, only that budget, and ``max_tool_calling_iterations = max_turns - 1``.

Training reward is the recipe's reward on every side (shaping included: the tool-call bonus is paid alike);
TRL gives the whole episode one advantage, ours gives the credit the recipe names. The curves compared are the
*unshaped* task reward: the recipe's reward components whose source is the env (``correct``), summed per
episode, averaged per step (the whole reward when the recipe has no reward spec). TRL logs it through a second
reward function of weight 0 (``rewards/unshaped/mean``). A TRL path that fails (e.g. ``trl-env`` on a chat
template TRL cannot parse tool calls for, as SmolLM2's) is a skipped pairing with its reason, never our
failure; our side's failure propagates.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from envgym.agents.benchmarks.learn_bench import (
    _mean,
    episode_turns,
    first_step_reaching,
    fixed_order_sampler,
    spread,
    task_order,
    window_for,
)

TOOL_SIDES = ("envgym", "trl-env", "trl-rollout")
TRL_SIDES = TOOL_SIDES[1:]
OBSERVATION_TOKENS = 64
"""Room per turn in TRL's episode budget for the env's answer and the template tokens around a turn."""


def run_tool_bench(recipe: Path, steps: int, seed_list: list[int], jobs: int,
                   echo: Callable[[str], None]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Every side on every seed, seed by seed (all sides of a seed before the next). Returns the runs per side
    and the TRL sides skipped with why. A TRL side that fails on any seed is skipped as a whole and not run again
    (the runs it finished were printed through ``echo``, as every run is when it ends)."""
    from envgym.benchmarks.report import WorkerFailed

    order = [(side, seed) for seed in seed_list for side in TOOL_SIDES]
    skipped: dict[str, str] = {}

    def run(side: str, seed: int) -> dict[str, Any] | None:
        if side in skipped:
            return None
        try:
            measured = {"seed": seed, **_run_worker(side, recipe, steps, seed)}
        except WorkerFailed as failure:
            if side == "envgym":
                raise
            skipped.setdefault(side, f"TRL's GRPOTrainer ({side}) failed on this machine: {failure.error}")
            return None
        echo(json.dumps({"side": side, **measured}))
        return measured

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        finished = list(pool.map(lambda job: run(*job), order))
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in TOOL_SIDES if side not in skipped}
    for (side, _), measured in zip(order, finished):
        if side in runs and measured is not None:
            runs[side].append(measured)
    return runs, skipped


def summarize_tool(runs: dict[str, list[dict[str, Any]]], steps: int, skipped: dict[str, str]) -> dict[str, Any]:
    """Per side that ran: mean and spread over seeds of the unshaped reward and of tool calls per episode at each
    step, of seconds per step and of the first and last windows. Per TRL side (a pairing with ours): the target
    (that side's final unshaped reward, its last ``window`` steps averaged over seeds), the step each side's
    runs reach it, and ``met`` (all runs of both reach it, ours on average no later); a skipped pairing has its
    reason instead.
    ``same_task_order``: every run of one seed, on every side, played the same tasks in the same order."""
    window = window_for(steps)
    out: dict[str, Any] = {"window": window, "sides": {}, "pairings": {}, "skipped": dict(skipped)}
    for side, side_runs in runs.items():
        for run in side_runs:
            run["seconds_per_step"] = run["seconds"] / steps
        curves = [run["rewards"] for run in side_runs]
        out["sides"][side] = {
            "reward_per_step": _per_step(curves),
            "tool_calls_per_step": _per_step([run["tool_calls"] for run in side_runs]),
            "seconds_per_step": spread([run["seconds_per_step"] for run in side_runs]),
            "first_window": spread([_mean(curve[:window]) for curve in curves]),
            "last_window": spread([_mean(curve[-window:]) for curve in curves]),
            "runs": side_runs,
        }
    for side in TRL_SIDES:
        if side in skipped:
            out["pairings"][side] = {"skipped": skipped[side]}
        elif side in runs:
            out["pairings"][side] = _pairing(runs["envgym"], runs[side], side, window)
    measured = [p for p in out["pairings"].values() if "met" in p]
    out["met"] = all(p["met"] for p in measured) if measured else None
    by_seed: dict[int, list[Any]] = {}
    for side_runs in runs.values():
        for run in side_runs:
            by_seed.setdefault(run["seed"], []).append(run["tasks"])
    out["same_task_order"] = all(all(tasks == played[0] for tasks in played) for played in by_seed.values())
    return out


def _per_step(curves: list[list[float]]) -> dict[str, list[float]]:
    """Mean and sample standard deviation over runs at each step."""
    return {"mean": [_mean(list(step)) for step in zip(*curves)],
            "std": [spread(list(step))["std"] for step in zip(*curves)]}


def _pairing(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], side: str, window: int) -> dict[str, Any]:
    target = _mean([_mean(run["rewards"][-window:]) for run in theirs])
    pairing: dict[str, Any] = {"target_reward": target}
    for name, side_runs in (("envgym", ours), (side, theirs)):
        reached = [step for step in (first_step_reaching(run["rewards"], target, window) for run in side_runs)
                   if step is not None]
        pairing[name] = {**spread(reached), "reached": len(reached), "runs": len(side_runs)}
    mine, peer = pairing["envgym"], pairing[side]
    pairing["met"] = (mine["reached"] == mine["runs"] and peer["reached"] == peer["runs"]
                      and mine["mean"] <= peer["mean"])
    return pairing


def steps_of(played: list[int], group_size: int, per_step: int) -> list[list[int]]:
    """Per step, the task of each group, from the task index of every episode in the order they were played
    (a group's ``group_size`` episodes are consecutive)."""
    groups = played[::group_size]
    return [groups[start:start + per_step] for start in range(0, len(groups), per_step)]


def calls_per_episode(episodes: list[list[Any]]) -> float:
    """Mean tool calls per episode (each given as its turns), as our trainer logs ``tool_calls_mean``."""
    return _mean([float(sum(turn.info.get("tool_calls", 0) for turn in turns)) for turns in episodes])


def unshaped_names(env_kwargs: dict[str, Any]) -> list[str] | None:
    """The reward components that are the task's own reward (source ``env``); None: no spec, the whole reward."""
    from envgym.agents.training.group_rewards import reward_spec_of

    spec = reward_spec_of(env_kwargs)
    return None if spec is None else [c.name for c in spec.components if c.source == "env"]


def _run_worker(side: str, recipe: Path, steps: int, seed: int) -> dict[str, Any]:
    from envgym.benchmarks.report import run_worker as in_subprocess

    call = (f"from envgym.agents.benchmarks.learn_bench_tool import run_worker; "
            f"run_worker({side!r}, {str(recipe)!r}, {steps}, {seed})")
    return in_subprocess(call, f"{side} (seed {seed})")


def run_worker(side: str, recipe: str, steps: int, seed: int) -> None:
    """Train ``steps`` steps of the multi-turn ``recipe`` with one side and ``seed``; print as JSON its unshaped
    and training rewards and tool calls per episode at each step, the tasks of each step and the wall time."""
    import envgym
    from envgym.agents.engines.models import checkpoint_folder, resolve_model
    from envgym.agents.training.train_cli import read_recipe

    env, env_kwargs, model_name, config = read_recipe(Path(recipe), {"max_steps": steps, "seed": seed})
    path = checkpoint_folder(resolve_model(model_name or "smollm2"))
    tasks = envgym.make(env, **env_kwargs).unwrapped.tasks
    order = task_order(seed, steps, config.num_tasks_per_step, len(tasks))
    trainers = {"envgym": _train_envgym, "trl-env": _train_trl_env, "trl-rollout": _train_trl_rollout}
    started = time.perf_counter()
    config.max_turns = episode_turns(env, config)  # the TRL sides need the limit as a number
    measured = trainers[side](path, env, env_kwargs, config, order)
    print(json.dumps({**measured, "seconds": time.perf_counter() - started}), flush=True)


def _train_envgym(path: str, env: str, env_kwargs: dict[str, Any], config: Any, order: list[int]) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.trainer import GRPOTrainer

    per_step, drawn = config.num_tasks_per_step, fixed_order_sampler(order, config.num_tasks_per_step)
    tasks: list[list[int]] = [[] for _ in range(config.max_steps)]

    def sample(step: int, rng: Any) -> int:
        index = drawn(step, rng)
        if len(tasks[step]) < per_step:  # a refill round replays the step's tasks: record the first round
            tasks[step].append(index)
        return index

    trainer = GRPOTrainer(AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path), env, config,
                          device="cpu", env_kwargs=env_kwargs, task_sampler=sample)
    metrics = trainer.train()
    names = unshaped_names(env_kwargs)
    unshaped = [m["reward_mean"] if names is None else sum(m.get(f"reward/{name}", 0.0) for name in names)
                for m in metrics]
    return {"rewards": unshaped, "train_rewards": [m["reward_mean"] for m in metrics], "tasks": tasks,
            "tool_calls": [m.get("tool_calls_mean", 0.0) for m in metrics]}


def _train_trl_rollout(path: str, env: str, env_kwargs: dict[str, Any], config: Any,
                       order: list[int]) -> dict[str, Any]:
    """TRL's GRPOTrainer with envgym's agent loop as its ``rollout_func``, on the recipe's env as ours sees it."""
    from envgym.integrations.trl import EnvgymRolloutFunc, envgym_dataset, envgym_reward_func, task_index_of

    names, played, tool_calls = unshaped_names(env_kwargs), [], []

    class Recorded(EnvgymRolloutFunc):
        def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            played.extend(task_index_of(prompt) for prompt in prompts)
            batch = super().__call__(prompts, trainer)
            tool_calls.append(calls_per_episode([episode.turns for episode in self.last_result.episodes]))
            return batch

    def unshaped(completions: list[Any], envgym_return: list[float | None],
                 envgym_reward_components: list[dict[str, float]], **_: Any) -> list[float | None]:
        return [total if total is None or names is None else sum(components.get(n, 0.0) for n in names)
                for total, components in zip(envgym_return, envgym_reward_components)]

    rollout_func = Recorded(env, max_turns=config.max_turns, max_turn_tokens=config.max_completion_length,
                            **env_kwargs)
    curves = _trl_train(path, config, envgym_dataset(env, order, **env_kwargs), [envgym_reward_func, unshaped],
                        rollout_func=rollout_func)
    return {**curves, "tasks": steps_of(played, config.num_generations, config.num_tasks_per_step),
            "tool_calls": tool_calls}


def _train_trl_env(path: str, env: str, env_kwargs: dict[str, Any], config: Any, order: list[int]) -> dict[str, Any]:
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
        return [None if e.episode.failed else e.episode.total_reward if names is None else
                sum(turn.reward_components.get(n, 0.0) for turn in e.episode.turns for n in names)
                for e in environments]

    factory = type(base.__name__, (base,), {"reset": reset})
    curves = _trl_train(path, config, envgym_dataset(env, order, **kwargs), [envgym_environment_reward, unshaped],
                        environment_factory=factory, max_tool_calling_iterations=max(1, config.max_turns - 1))
    return {**curves, "tasks": steps_of(played, config.num_generations, config.num_tasks_per_step),
            "tool_calls": tool_calls}


def _trl_train(path: str, config: Any, dataset: Any, reward_funcs: list[Any], *, rollout_func: Any = None,
               environment_factory: Any = None, **extra_args: Any) -> dict[str, list[float]]:
    """Train with TRL's GRPOTrainer as the recipe says; the first reward function trains (weight 1), the second
    (``unshaped``, weight 0) is only logged. Returns both curves."""
    import os

    from peft import LoraConfig
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

    turns = config.max_turns
    with tempfile.TemporaryDirectory() as out:
        args = TRLConfig(output_dir=out, per_device_train_batch_size=config.num_generations * config.num_tasks_per_step,
                         num_generations=config.num_generations, reward_weights=[1.0, 0.0],
                         max_completion_length=turns * (config.max_completion_length + OBSERVATION_TOKENS),
                         learning_rate=config.learning_rate, lr_scheduler_type="constant", beta=0.0,
                         max_steps=config.max_steps, temperature=config.temperature, top_p=config.top_p,
                         adam_beta1=config.adam_beta1, adam_beta2=config.adam_beta2, max_grad_norm=config.max_grad_norm,
                         gradient_checkpointing=config.gradient_checkpointing, shuffle_dataset=False,
                         logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, seed=config.seed,
                         bf16=False, dataloader_num_workers=0, disable_tqdm=True, **extra_args)
        lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                          target_modules=config.lora_target_modules, task_type="CAUSAL_LM")
        trainer = TRLTrainer(model=AutoModelForCausalLM.from_pretrained(path), reward_funcs=reward_funcs, args=args,
                             train_dataset=dataset, processing_class=AutoTokenizer.from_pretrained(path),
                             peft_config=lora, callbacks=[Rewards()], rollout_func=rollout_func,
                             environment_factory=environment_factory)
        trainer.train()
    return curves

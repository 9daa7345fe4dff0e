"""``envgym bench learn``: does a recipe learn as fast per step with our trainer as with TRL's?

Every side trains the recipe's model (for the packaged SmolLM2-135M-Instruct its de-quantized float32 copy, a
plain Hugging Face folder) on the recipe's env, prompt (few-shot prefix included) and reward, with the same
settings: LoRA r/α/dropout and targets, lr (constant schedule), G, prompts per step, temperature, top-p, β 0,
AdamW betas, grad clip, gradient checkpointing as the recipe says (TRL's default is on, ours off), seed. Each run
(one side, one seed) is a subprocess of its own.

Sides, by the recipe's turn limit:

- one turn (``recipes/smollm2-arithmetic-cpu.yaml``): ``envgym`` (our GRPOTrainer) and ``trl`` (TRL's
  GRPOTrainer generating the completions itself, each graded by a fresh reset of its task).
- several turns (a tool recipe, ``recipes/smollm2-tool-cpu.yaml``): ``envgym`` (as the recipe says, e.g.
  ``rebn`` per-turn credit), ``trl-rollout`` (TRL's GRPOTrainer with ``rollout_func=envgym_rollout_func(...)``:
  envgym's agent loop plays the episodes with TRL's model, on the env exactly as ours sees it) and ``trl-env``
  (TRL's GRPOTrainer with ``environment_factory=envgym_environment_factory(...)``: TRL's own tool loop, the env
  made with ``prompt_format=None`` so the chat template shows the tools and TRL parses the calls).

New tokens: ours and ``trl-rollout`` cap each turn at the recipe's ``max_completion_length``; TRL's own
``max_completion_length`` is the episode budget, the per-turn cap on one turn and ``max_turns`` times (per-turn
tokens + :data:`OBSERVATION_TOKENS`) on several, so it does not bind before the turn limit; ``trl-env`` has no
per-turn cap in TRL, only that budget, and ``max_tool_calling_iterations = max_turns - 1``.

Seeds: every seed is run by every side, and a seed fixes the task order: the tasks of step s are drawn once from
the seed (:func:`task_order`) and every side plays them in that order (ours through a task sampler, TRL from a
dataset in that order with its shuffling off); ``same_task_order`` checks it from what each run played. The
sides' trainers are in :mod:`envgym.bench.learn_sides`.

Training reward is the recipe's on every side (shaping included); TRL gives the whole episode one advantage, ours
the credit the recipe names. The curves compared are the *unshaped* task reward: the recipe's reward components
whose source is the env (``correct``), summed per episode and averaged per step (the whole reward without a
reward spec); TRL logs it through a second reward function of weight 0 (``rewards/unshaped/mean``). Per side
(``sides``): mean and spread over seeds of that reward and of tool calls per episode at each step, of seconds per
step and of the first and last windows (10 steps, or half the run when shorter than 20). Per TRL side
(``pairings``): its final reward (last window, averaged over its seeds) as the target, the step each side's runs
first reach it, and ``met`` (every run of both reaches it, ours on average no later). A TRL side that fails (e.g.
``trl-env`` on a chat template TRL cannot parse tool calls for, as SmolLM2's) is a skipped pairing with its
reason, never our failure; our side's failure propagates. Each finished run's JSON is also printed to stderr as it
ends, so a long run cut short keeps what it measured.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer

import envgym
from envgym.bench.learn_sides import episode_turns, run_worker, trl_token_budget

# The packaged copy (envgym/recipes), so the bench finds it from an installed wheel too.
RECIPE = Path(envgym.__file__).resolve().parent / "recipes" / "smollm2-arithmetic-cpu.yaml"
WINDOW = 10
ONE_TURN_SIDES = ("envgym", "trl")
TOOL_SIDES = ("envgym", "trl-env", "trl-rollout")


def bench_learn(
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
    steps: int = typer.Option(None, "--steps", help="Steps per trainer (default: the recipe's max_steps)."),
    recipe: Path = typer.Option(
        RECIPE, "--recipe", help="A recipe whose env has a task source: one-turn, or multi-turn (a tool recipe)."
    ),
    seeds: int = typer.Option(
        3, "--seeds", help="Runs per side: seeds recipe seed, +1, ... (each fixes a task order)."
    ),
    jobs: int = typer.Option(
        1,
        "--jobs",
        help="Runs at a time (more finish sooner on a shared machine; each run's "
        "seconds per step then include the others' load). Each run gets "
        "cores / jobs threads unless OMP_NUM_THREADS is set.",
    ),
    device: str = typer.Option(
        "cpu", "--device", help="cpu or cuda (both sides; on CUDA the JSON adds peak GPU memory)."
    ),
    check_update: bool = typer.Option(
        False,
        "--check-update",
        help="Instead of curves: one batch of the recipe rolled out by our trainer, our gradient and TRL's on it "
        "with the same LoRA weights compared (cosine, norm ratio); exits 1 when they differ.",
    ),
) -> None:
    """Per-step reward curves of envgym's GRPOTrainer and TRL's GRPOTrainer on one recipe over several seeds,
    same run."""
    from envgym.agents.training.recipe import read_recipe
    from envgym.bench.report import emit, machine, share_cores

    read = read_recipe(recipe, overrides={"max_steps": steps})
    config = read.config
    if check_update:
        _check_update(read, recipe, device, as_json)
        return
    turns = episode_turns(read.env, read.env_kwargs)
    if config.max_steps < 4:
        raise typer.BadParameter(
            f"--steps must be >= 4 (curves are compared as moving averages of "
            f"{WINDOW} steps, or half the run when it is shorter than {2 * WINDOW})"
        )
    if seeds < 1 or jobs < 1:
        raise typer.BadParameter(f"--seeds and --jobs must be >= 1, got {seeds} and {jobs}")
    try:
        import trl  # noqa: F401
    except ImportError as error:
        raise typer.BadParameter("bench learn compares with TRL: pip install 'envgym[peers]'") from error
    seed_list = [config.seed + offset for offset in range(seeds)]
    threads = share_cores(jobs)
    sides = TOOL_SIDES if turns > 1 else ONE_TURN_SIDES
    if device != "cpu" and not device.startswith("cuda"):
        raise typer.BadParameter(f"--device must be cpu or cuda (cuda:N), got {device!r}")
    runs, skipped = run_bench(
        recipe, config.max_steps, seed_list, jobs, sides, lambda line: typer.echo(line, err=True), device
    )
    result: dict[str, Any] = {
        "benchmark": "learn",
        "machine": machine(),
        "recipe": str(recipe),
        "steps": config.max_steps,
        "seeds": seed_list,
        "jobs": jobs,
        "device": device,
        "threads_per_run": threads,
        "turns": turns,
        "side_names": list(sides),
        "settings": _settings(config, turns),
    }
    result.update(summarize(runs, config.max_steps, skipped))
    emit(result, as_json)


def _check_update(read: Any, recipe: Path, device: str, as_json: bool) -> None:
    from envgym.agents.engines.models import checkpoint_folder, resolve_model
    from envgym.bench.check_update import check_update
    from envgym.bench.report import emit, machine

    if read.env is None:
        raise typer.BadParameter(f"{recipe}: --check-update needs a recipe with one env (not a mixture)")
    path = checkpoint_folder(resolve_model(read.model or "smollm2"))
    try:
        result = check_update(path, read.env, read.make_kwargs(), read.config, device=device)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error
    emit({**result, "machine": machine(), "recipe": str(recipe)}, as_json)
    if not result["passed"]:
        raise typer.Exit(1)


def _settings(config: Any, turns: int) -> dict[str, Any]:
    settings = {
        "gradient_checkpointing": config.gradient_checkpointing,
        "task_order": "drawn from each seed, the same for every side",
        "max_turns": turns,
        "new_tokens_per_turn": config.max_completion_length,
        "trl_episode_token_budget": trl_token_budget(config.max_completion_length, turns),
        "reward_compared": "unshaped: the recipe's env-sourced reward components (training reward is the "
        "recipe's, shaping included, on every side)",
    }
    return settings


def run_bench(
    recipe: Path,
    steps: int,
    seed_list: list[int],
    jobs: int,
    sides: tuple[str, ...],
    echo: Callable[[str], None],
    device: str = "cpu",
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Every side on every seed, seed by seed (all sides of a seed before the next, so a run cut short has every
    side of what it finished). Returns the runs per side and the TRL sides skipped with why. A TRL side that
    fails on any seed is skipped as a whole and not run again (the runs it finished were printed through
    ``echo``, as every run is when it ends); our side's failure propagates."""
    from envgym.bench.report import WorkerFailed

    order = [(side, seed) for seed in seed_list for side in sides]
    skipped: dict[str, str] = {}

    def run(side: str, seed: int) -> dict[str, Any] | None:
        if side in skipped:
            return None
        try:
            measured = {"seed": seed, **_run_worker(side, recipe, steps, seed, device)}
        except WorkerFailed as failure:
            if side == "envgym":
                raise
            skipped.setdefault(side, f"TRL's GRPOTrainer ({side}) failed on this machine: {failure.error}")
            return None
        echo(json.dumps({"side": side, **measured}))
        return measured

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        finished = list(pool.map(lambda job: run(*job), order))
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides if side not in skipped}
    for (side, _), measured in zip(order, finished):
        if side in runs and measured is not None:
            runs[side].append(measured)
    return runs, skipped


def summarize(runs: dict[str, list[dict[str, Any]]], steps: int, skipped: dict[str, str]) -> dict[str, Any]:
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
            **(
                {"peak_gpu_mb": max(run["peak_gpu_mb"] for run in side_runs)}
                if all("peak_gpu_mb" in run for run in side_runs)
                else {}
            ),
            "first_window": spread([statistics.fmean(curve[:window]) for curve in curves]),
            "last_window": spread([statistics.fmean(curve[-window:]) for curve in curves]),
            "runs": side_runs,
        }
    for side in sorted((set(runs) | set(skipped)) - {"envgym"}):
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
    return {
        "mean": [statistics.fmean(list(step)) for step in zip(*curves)],
        "std": [spread(list(step))["std"] for step in zip(*curves)],
    }


def _pairing(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], side: str, window: int) -> dict[str, Any]:
    target = statistics.fmean([statistics.fmean(run["rewards"][-window:]) for run in theirs])
    pairing: dict[str, Any] = {"target_reward": target}
    for name, side_runs in (("envgym", ours), (side, theirs)):
        reached = [
            step
            for step in (first_step_reaching(run["rewards"], target, window) for run in side_runs)
            if step is not None
        ]
        pairing[name] = {**spread(reached), "reached": len(reached), "runs": len(side_runs)}
    mine, peer = pairing["envgym"], pairing[side]
    pairing["met"] = (
        mine["reached"] == mine["runs"] and peer["reached"] == peer["runs"] and mine["mean"] <= peer["mean"]
    )
    return pairing


def window_for(steps: int) -> int:
    """The moving-average window: ``WINDOW`` steps, or half the run when it is shorter than twice that."""
    return max(1, min(WINDOW, steps // 2))


def spread(values: list[float]) -> dict[str, Any]:
    """Mean, sample standard deviation (0 for one value), min and max; all None for no values."""
    if not values:
        return {"mean": None, "std": None, "min": None, "max": None}
    return {
        "mean": statistics.fmean(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def first_step_reaching(rewards: list[float], target: float, window: int = WINDOW) -> int | None:
    """The first step (1-based) whose trailing ``window``-step mean reward is at least ``target``."""
    for end in range(window, len(rewards) + 1):
        if statistics.fmean(rewards[end - window : end]) >= target - 1e-12:
            return end
    return None


def _run_worker(side: str, recipe: Path, steps: int, seed: int, device: str = "cpu") -> dict[str, Any]:
    from envgym.bench.report import run_worker as in_subprocess

    return in_subprocess(f"{side} (seed {seed})", run_worker, side, str(recipe), steps, seed, device)

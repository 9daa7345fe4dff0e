"""`envgym bench env`: env throughput, single and vectorized, and the gym's own per-step overhead."""

from __future__ import annotations

import time
from typing import Any

import typer

from envgym.bench.report import emit, machine
from envgym.core import Env, Task


class _NullEnv(Env):
    """Does no work, so timing it measures only envgym's machinery."""

    def _reset(self, task: Task | None, options: dict[str, Any]):
        return [{"role": "user", "content": "go"}], {}

    def _step(self, action: Any):
        return [{"role": "user", "content": "ok"}], 0.0, False, False, {}


def _episodes_per_second(env: Any, action: str, seconds: float, max_steps: int = 64) -> tuple[float, float]:
    """Play episodes with a fixed action until ``seconds`` pass; returns (episodes/s, steps/s)."""
    episodes = steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=episodes)
        for _ in range(max_steps):
            steps += 1
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        episodes += 1
    elapsed = time.perf_counter() - start
    return episodes / elapsed, steps / elapsed


def _overhead_us(steps: int) -> dict[str, float]:
    """Per-step cost of envgym's step path (validation, bookkeeping, TimeLimit, vector sync) over calling the
    env's own ``_step`` directly, in microseconds."""
    from envgym.vector import VectorEnv
    from envgym.wrappers import TimeLimit

    raw = _NullEnv()
    raw.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        raw._step("x")
    raw_s = (time.perf_counter() - start) / steps

    wrapped = TimeLimit(_NullEnv(), max_turns=steps + 1)
    wrapped.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        wrapped.step("x")
    wrapped_s = (time.perf_counter() - start) / steps

    num_envs = 8
    vector = VectorEnv([lambda: TimeLimit(_NullEnv(), max_turns=steps + 1)] * num_envs, mode="sync")
    vector.reset(seed=0)
    actions = ["x"] * num_envs
    rounds = max(1, steps // num_envs)
    start = time.perf_counter()
    for _ in range(rounds):
        vector.step(actions)
    vector_s = (time.perf_counter() - start) / (rounds * num_envs)
    vector.close()
    return {
        "single_us_per_step": (wrapped_s - raw_s) * 1e6,
        "vector_sync_us_per_env_step": (vector_s - raw_s) * 1e6,
    }


def _vector_steps_per_second(env_id: str, mode: str, num_envs: int, action: str, seconds: float) -> dict[str, float]:
    import envgym

    vector = envgym.make_vec(env_id, num_envs, mode=mode, autoreset_mode="same_step")
    try:
        vector.reset(seed=0)
        actions = [action] * num_envs
        vector.step(actions)  # warm-up (process workers, lazy imports)
        steps, episodes = 0, 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            _, _, terminated, truncated, _ = vector.step(actions)
            steps += num_envs
            episodes += sum(t or u for t, u in zip(terminated, truncated))
        elapsed = time.perf_counter() - start
    finally:
        vector.close()
    return {"steps_per_s": steps / elapsed, "episodes_per_s": episodes / elapsed}


def _import_seconds(repeats: int = 3) -> float:
    """Wall time of ``import envgym`` in a fresh interpreter (best of ``repeats``)."""
    import subprocess
    import sys

    code = "import time; t = time.perf_counter(); import envgym; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(repeats)
    ]
    return min(runs)


def bench_env(
    env_id: str = typer.Option("games/GuessNumber-v0", "--id", help="Env to measure."),
    action: str = typer.Option("<guess>50</guess>", help="The fixed action played every turn."),
    num_envs: int = typer.Option(8, help="Envs per vector env."),
    quick: bool = typer.Option(False, "--quick", help="Shorter measurements."),
    as_json: bool = typer.Option(False, "--json", help="Print only the JSON line."),
) -> None:
    """Episodes/s of one env, steps/s vectorized in each mode, and envgym's per-step overhead."""
    import envgym

    seconds = 0.5 if quick else 2.0
    env = envgym.make(env_id)
    episodes_per_s, steps_per_s = _episodes_per_second(env, action, seconds)
    env.close()
    result = {
        "bench": "env",
        "env_id": env_id,
        "single": {"episodes_per_s": episodes_per_s, "steps_per_s": steps_per_s},
        "vector": {
            mode: _vector_steps_per_second(env_id, mode, num_envs, action, seconds)
            for mode in ("sync", "thread", "process")
        },
        "num_envs": num_envs,
        "overhead": _overhead_us(20_000 if quick else 100_000),
        "import_s": _import_seconds(),
        "machine": machine(),
    }
    emit(result, as_json)

"""The reward curve of a training run, as a PNG (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

UNSHAPED = "reward/correct"
"""The correctness component: drawn beside the reward when shaping (a tool bonus, a format reward) makes the two
differ, because the run is judged on it."""


def plot_rewards(history: list[dict[str, Any]], path: str | Path, title: str = "GRPO") -> Path:
    """Plot reward mean ± std per step from metrics records (``step``, ``reward_mean``, ``reward_std``), the
    unshaped ``reward/correct`` where it differs from the reward, each env's ``env/<name>/reward_mean`` in a
    mixture, and ``tool_calls_mean`` (right axis) where logged."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [m for m in history if "reward_mean" in m]
    steps = [m["step"] for m in records]
    mean = [m["reward_mean"] for m in records]
    std = [m.get("reward_std", 0.0) for m in records]
    figure, axis = plt.subplots(figsize=(6, 3.5))
    axis.plot(steps, mean, label="reward mean")
    axis.fill_between(
        steps, [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)], alpha=0.2, label="± std"
    )
    if any(UNSHAPED in m and m[UNSHAPED] != m["reward_mean"] for m in records):
        axis.plot(steps, [m.get(UNSHAPED, float("nan")) for m in records], label="correct (unshaped)")
    per_env = sorted({key for m in records for key in m if key.startswith("env/") and key.endswith("/reward_mean")})
    for key in per_env:  # a mixture: one curve per env, through the steps that drew its groups
        drawn = [m for m in records if key in m]
        axis.plot(
            [m["step"] for m in drawn],
            [m[key] for m in drawn],
            linewidth=1,
            marker=".",
            label=key[len("env/") : -len("/reward_mean")],
        )
    if any("tool_calls_mean" in m for m in records):
        calls = axis.twinx()
        calls.plot(steps, [m.get("tool_calls_mean", float("nan")) for m in records], color="gray", linestyle="--")
        calls.set_ylabel("tool calls per episode (dashed)")
    axis.set_xlabel("step")
    axis.set_ylabel("episode reward")
    axis.set_title(title)
    axis.legend(loc="lower right")
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path

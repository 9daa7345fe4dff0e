"""Bandit: a multi-armed bandit played one pull per turn, with regret reported in ``info``.

Each task hides ``arms`` Bernoulli arms with payoff probabilities drawn uniformly from [0, 1). Every turn the
agent pulls one arm with ``<pull>k</pull>`` and is told what it paid, plus a running tally per arm (the
decision is explore vs exploit, not bookkeeping). The task also seeds the payoff draws, so the same task and
the same pulls always pay the same (GRPO groups compare choices, not luck).

Every turn spends one of the ``pulls`` in the budget, even a turn without a valid pull: a bandit does not
wait. The budget is a rule the agent is told, so the episode terminates when it is spent. So an invalid turn
is never a free retry: it pays 0 (less ``invalid_penalty``) and uses a pull, while any valid pull pays 0 or 1
with the same draw, so no mix of invalid turns ever earns more than pulling even the worst arm instead.

Rewards per turn, as named components:

- ``payoff``: what the pulled arm paid, 0 or 1 (0 on a turn without a valid pull);
- ``format``: ``-invalid_penalty`` for a turn without a valid pull (``action_valid=False``).

``info["regret"]`` is the pull's pseudo-regret, ``best_mean - mean[arm]`` (``best_mean`` for a wasted turn),
and ``info["cumulative_regret"]`` its sum so far. Always pulling the best arm has zero regret: that is the
maximum expected reward, ``pulls * best_mean``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.games.move_parsing import last_tag, parse_int, quote
from envgym.tasks import ProceduralTaskSource


class Bandit(Env):
    description = "Multi-armed Bernoulli bandit: one pull per turn, maximise the total payoff."

    def __init__(self, arms: int = 5, pulls: int = 20, invalid_penalty: float = 0.0):
        if isinstance(arms, bool) or not isinstance(arms, int) or not 2 <= arms <= 100:
            raise ValueError(f"arms must be an int in [2, 100], got {arms!r}")
        if isinstance(pulls, bool) or not isinstance(pulls, int) or pulls < 1:
            raise ValueError(f"pulls must be a positive int, got {pulls!r}")
        self.arms, self.pulls, self.invalid_penalty = arms, pulls, float(invalid_penalty)
        self.reward_ranges = {
            "payoff": RewardRange(per_turn=True),
            "format": RewardRange(-self.invalid_penalty, 0.0, per_turn=True),
        }
        self.tasks = ProceduralTaskSource(self._make_task)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        means = [round(float(p), 3) for p in rng.uniform(0.0, 1.0, size=self.arms)]
        rules = (
            f"There are {self.arms} slot machines (arms) numbered 1 to {self.arms}. Each pays 1 with its own fixed, "
            f"unknown probability and 0 otherwise. You have {self.pulls} pulls, one per turn; a turn without a "
            "valid pull wastes that pull. Win as much as you can in total. "
            "Answer with the arm you pull in the form <pull>1</pull>."
        )
        return Task(
            id=f"bandit-{self.arms}x{self.pulls}-{index}",
            messages=[{"role": "user", "content": rules}],
            answer=means,
            metadata={"payoff_seed": int(rng.integers(2**31)), "pulls": self.pulls},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.means: list[float] = list(task.answer)
        self.best_mean = max(self.means)
        self.payoff_rng = np.random.default_rng(task.metadata["payoff_seed"])
        self.pull_counts = [0] * self.arms
        self.payoff_totals = [0] * self.arms
        self.pulls_left = self.pulls
        self.cumulative_regret = 0.0
        return task.prompt(), {"pulls_left": self.pulls_left}

    def _step(self, action: Action) -> StepResult:
        arm, problem = self._parse_pull(action_text(action))
        self.pulls_left -= 1
        # One payoff draw per turn, whatever happens, so a wasted turn does not shift later payoffs.
        draw = float(self.payoff_rng.random())
        if arm is None:
            regret, components = (
                self.best_mean,
                {"payoff": 0.0, "format": 0.0 - self.invalid_penalty},
            )  # 0.0 - p: no -0.0 when p is 0
            lines = [f"{problem} Reply with an arm as <pull>k</pull>, k from 1 to {self.arms}. This pull is wasted."]
            info: dict[str, Any] = {"action_valid": False, "action_error": problem}
        else:
            payoff = int(draw < self.means[arm])
            self.pull_counts[arm] += 1
            self.payoff_totals[arm] += payoff
            regret, components = self.best_mean - self.means[arm], {"payoff": float(payoff)}
            lines = [f"Arm {arm + 1} paid {payoff}."]
            info = {"action_valid": True, "arm": arm + 1, "payoff": payoff}
        self.cumulative_regret += regret
        lines.append(self._tally())
        terminated = self.pulls_left == 0
        plural = "s" if self.pulls_left > 1 else ""
        lines.append("No pulls left." if terminated else f"{self.pulls_left} pull{plural} left.")
        info.update(
            regret=round(regret, 6),
            cumulative_regret=round(self.cumulative_regret, 6),
            pulls_left=self.pulls_left,
            reward_components=components,
        )
        if terminated:
            info["answer"] = int(np.argmax(self.means)) + 1
        return [{"role": "user", "content": "\n".join(lines)}], reward_total(components), terminated, False, info

    def reference_action(self) -> Action | None:
        """The arm with the best hidden payoff probability: zero regret, the most payoff on every task."""
        if self.task is None:
            return None
        return f"<pull>{int(np.argmax(self.means)) + 1}</pull>"

    def wrong_action(self) -> Action | None:
        """The arm with the worst hidden payoff probability: legal play with the most regret."""
        if self.task is None:
            return None
        return f"<pull>{int(np.argmin(self.means)) + 1}</pull>"

    def _parse_pull(self, text: str) -> tuple[int | None, str]:
        choice = last_tag(text, "pull")
        if choice is None:
            return None, "I could not find a <pull>k</pull> tag."
        arm = parse_int(choice)
        if arm is None or not 1 <= arm <= self.arms:
            return None, f"{quote(choice, 20)} is not an arm number from 1 to {self.arms} (digits 0-9)."
        return arm - 1, ""

    def _tally(self) -> str:
        parts = [
            f"arm {i + 1}: {wins}/{count}" for i, (wins, count) in enumerate(zip(self.payoff_totals, self.pull_counts))
        ]
        return "Paid/pulled so far: " + ", ".join(parts) + "."

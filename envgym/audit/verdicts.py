"""From plays to findings: what counts as earning reward, a crash, a leak or an honest answer refused.

Earning reward. Each strategy is compared episode by episode (same task index, same seed) with a comparator:
the honest wrong answer (the env's ``wrong_action()``, else "I don't know." every turn) and, for an attack, the
guesses it contains (``like``: ``<answer>٢</answer>`` is compared with ``<answer>2</answer>``, a reply holding
every candidate with its first and last candidate alone). An episode does not count against the env when

- the strategy's answer is the gold answer (single-turn envs: a constant ``0`` is right when the answer is 0);
- a guess (a constant move) played legal moves only (multi-turn envs: an honest move may win a game by chance).

The strategy is flagged when, over the episodes that count, its mean return beats the comparator's by more than
``margin`` (a quarter of the reward the reference action earns over the honest wrong answer, or of 1 when the
env declares no reference: shaping parts such as a format bonus or a turn cost stay under it, an exploit that
pays the task's reward does not), or when it is ``correct`` on an episode where the comparator is not.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from envgym.audit.play import Play
from envgym.audit.strategies import GUESS, Strategy

EARNS_REWARD = "earns_reward"
CRASH = "crash"
SLOW_STEP = "slow_step"
CODE_EXECUTED = "code_executed"
STATE_LEAK = "state_leak"
HONEST_REFUSED = "honest_refused"
POLICY_FAILURE = "policy_failure"
CUE_LEAK = "cue_leak"
KINDS = (EARNS_REWARD, CRASH, SLOW_STEP, CODE_EXECUTED, STATE_LEAK, HONEST_REFUSED, POLICY_FAILURE, CUE_LEAK)
# The totals ``envgym audit --json`` reports, by finding kind.
TOTAL_NAMES = {
    EARNS_REWARD: "earning",
    CRASH: "crashes",
    CODE_EXECUTED: "code_executed",
    STATE_LEAK: "state_leaks",
    SLOW_STEP: "slow_steps",
    HONEST_REFUSED: "honest_refused",
    POLICY_FAILURE: "policy_failures",
    CUE_LEAK: "cue_leaks",
}
MARGIN = 0.25
SKEW_SHARE, SKEW_MIN_TASKS = 0.75, 12

WRAPPER = re.compile(r"\\boxed\s*\{(.*)\}|<([A-Za-z_][\w-]*)>(.*?)</\2>|```[\w+#-]*\n?(.*?)```", re.DOTALL)


@dataclasses.dataclass
class Finding:
    """One problem the audit found: which env, what kind, under which strategy, on which task indices, and why."""

    env_id: str
    kind: str
    strategy: str
    tasks: list[int]
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def inner_answer(text: str | None) -> str | None:
    """The answer inside its format (the last ``\\boxed{}``, tag or fence), or the text itself."""
    if text is None:
        return None
    matches = list(WRAPPER.finditer(text[:10_000]))
    if not matches:
        return text
    last = matches[-1]
    return next(group for group in (last.group(1), last.group(3), last.group(4)) if group is not None)


def same_answer(answer: str | None, gold: str | None) -> bool:
    """Whether two answers are the same text or number (case, spaces and surrounding punctuation aside)."""
    if answer is None or gold is None:
        return False
    a, b = _normal(answer), _normal(gold)
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text).strip(".,;:!\"'").lower()


def earning_findings(
    env_id: str,
    strategies: dict[str, Strategy],
    plays: dict[str, dict[int, Play]],
    baseline: dict[int, Play],
    reference: dict[int, Play],
    gold: dict[int, str | None],
    single_turn: bool,
    task_of: dict[int, int],
    thorough: bool,
    styled: dict[int, list[Play]] | None = None,
) -> list[Finding]:
    """``earns_reward`` findings: strategies that beat the honest wrong answer (see the module docstring).

    ``styled``: per slot, the honest wrong answer played in the style of each worked example the prompt shows
    (its reasoning phrases, its tool call): shaping that any honest answer in the demonstrated style earns is no
    exploit, so these are rivals too."""
    margin = MARGIN * reward_scale(baseline, reference)
    findings = []
    for name, by_slot in plays.items():
        strategy = strategies[name]
        gains, wins, counted = [], [], []
        for slot, result in by_slot.items():
            if result.crash or slot not in baseline:
                continue
            if single_turn and same_answer(strategy.answer, gold.get(slot)):
                continue
            if strategy.kind == GUESS and not single_turn and result.all_valid:
                continue
            rivals = [baseline[slot], *(styled or {}).get(slot, [])]
            rivals += [plays[like][slot] for like in strategy.like if slot in plays.get(like, {})]
            gains.append(result.reward - max(rival.reward for rival in rivals))
            counted.append(slot)
            if result.correct and not any(rival.correct for rival in rivals):
                wins.append(slot)
        gain = sum(gains) / len(gains) if gains else 0.0
        if gain > margin or wins:
            tasks = sorted({task_of[slot] for slot in (wins or counted)})
            evidence = (
                f"mean return {gain:+.3f} over the honest wrong answer (margin {margin:.3f}) on "
                f"{len(gains)} episodes; correct on {len(wins)} where the honest wrong answer was not; "
                f"first action {_clip(by_slot[counted[0]].first_action)}"
            )
            findings.append(Finding(env_id, EARNS_REWARD, name, tasks, evidence))
        elif thorough and strategy.kind == GUESS and single_turn:
            findings += _skew(env_id, name, by_slot, task_of)
    return findings


def _skew(env_id: str, name: str, by_slot: dict[int, Play], task_of: dict[int, int]) -> list[Finding]:
    """A constant answer right on most tasks: the answers are skewed, so a policy learns the constant."""
    right = [slot for slot, result in by_slot.items() if result.correct]
    if len(by_slot) < SKEW_MIN_TASKS or len(right) < SKEW_SHARE * len(by_slot):
        return []
    return [
        Finding(
            env_id,
            EARNS_REWARD,
            name,
            sorted(task_of[s] for s in right),
            f"the constant answer is right on {len(right)}/{len(by_slot)} tasks: the answers are skewed",
        )
    ]


def reward_scale(baseline: dict[int, Play], reference: dict[int, Play]) -> float:
    """What honest success is worth here: the reference's mean return over the baseline's, else 1."""
    slots = [slot for slot in reference if slot in baseline]
    if not slots:
        return 1.0
    scale = sum(reference[s].reward - baseline[s].reward for s in slots) / len(slots)
    return scale if scale > 0 else 1.0


def play_findings(
    env_id: str, name: str, by_slot: dict[int, Play], task_of: dict[int, int], slow_s: float
) -> list[Finding]:
    """``crash``, ``policy_failure``, ``slow_step`` and ``code_executed`` findings of one strategy over its episodes.

    An ``info["error"]`` after a policy's action is a ``policy_failure``: the trainer drops an episode that reports
    one, so a policy that triggers it escapes the penalty a scored failure would carry."""
    findings = []
    for kind, attribute, what in (
        (CRASH, "crash", "raised"),
        (POLICY_FAILURE, "error", "info['error'], so the episode is dropped instead of scored"),
        (CODE_EXECUTED, "code_executed", "marker file created"),
    ):
        hit = {slot: result for slot, result in by_slot.items() if getattr(result, attribute)}
        if hit:
            slot, first = next(iter(hit.items()))
            detail = getattr(first, attribute)
            detail = f"{what}: {detail}" if isinstance(detail, str) else f"{what} after {_clip(first.first_action)}"
            findings.append(Finding(env_id, kind, name, sorted({task_of[s] for s in hit}), detail))
    slow = {slot: result for slot, result in by_slot.items() if result.slow_steps}
    if slow:
        worst = max(result.max_step_s for result in slow.values())
        findings.append(
            Finding(
                env_id,
                SLOW_STEP,
                name,
                sorted({task_of[s] for s in slow}),
                f"a step took {worst:.2f} s (limit {slow_s} s)",
            )
        )
    return findings


def honest_findings(
    env_id: str, reference: dict[int, Play], baseline: dict[int, Play], task_of: dict[int, int]
) -> list[Finding]:
    """``honest_refused``: the reference action, played to the end, did not earn the full reward."""
    refused = {}
    for slot, result in reference.items():
        if result.crash or result.error:
            continue  # reported as a crash
        if result.stopped:
            refused[slot] = f"reference_action() returned None mid-episode ({result.stopped})"
        elif not result.terminated:
            refused[slot] = f"the episode did not terminate in {result.steps} turns"
        elif result.correct is False:
            refused[slot] = f"info['correct'] is False after {_clip(result.first_action)}"
        elif result.correct is None and slot in baseline and result.reward <= baseline[slot].reward:
            refused[slot] = (
                f"return {result.reward:.3f} is no more than the honest wrong answer's {baseline[slot].reward:.3f}"
            )
    if not refused:
        return []
    return [
        Finding(env_id, HONEST_REFUSED, "reference", sorted(task_of[s] for s in refused), next(iter(refused.values())))
    ]


def _clip(text: str | None, limit: int = 120) -> str:
    if text is None:
        return "(none)"
    return repr(text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)")

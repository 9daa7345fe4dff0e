"""Process rewards: a reward per reasoning step inside a response, credited to the tokens of that step.

A ``process`` component of the reward spec (``docs/rewards.md``) runs in the trainer after a group's rollouts:

1. **Segmentation** (:func:`segment_steps`) cuts each policy turn's text into steps: ``lines`` (each non-blank
   line), ``blank`` (paragraphs between blank lines), ``step`` (a step starts at each ``Step k`` marker at the
   start of a line) or ``regex`` (a step starts at each match of ``split``). Steps run across the turns of an
   episode in order.
2. **Scoring** (:func:`score_steps`): ``rule`` gives 1 to a step that matches the ``rule`` regex *and* is
   true (:func:`step_is_true`): every arithmetic equation in it (``a op b = c``, read with
   :func:`envgym.verifiers.safe_expr.evaluate_arithmetic`, never executed) holds, uses only numbers of the
   question or results of earlier true steps, and was not written before; else 0. So ``12 * 3 = 99`` earns
   nothing, and neither does padding with true but unrelated steps (``1 + 1 = 2`` where no 1 is in play) or the
   same step again. ``judge`` asks an LLM judge (:class:`envgym.verifiers.judge.Judge`, per-step rubric) to score
   the last step of the solution so far, in [0, 1]. A judge that cannot be reached is the episode's error;
   one whose reply has no score scores the step 0. Then every step reward is capped by the episode's final
   verdict (the env's ``correct``, where it gives one and labels are not held back): min-form credit cannot
   exceed what the answer earned, so a one-line wrong reply gets nothing for its one "step".
3. **Token mapping** (:func:`step_token_spans`): each policy token belongs to the first step that has not ended
   before the token starts (separators go to the next step, trailing tokens to the last).
4. **Credit** (:func:`process_token_advantages`): per-step returns (PURE's min-form or a sum) normalized within
   the group (:func:`envgym.agents.training.advantages.step_advantages`), times the component's weight, added to the
   turn advantage of every token of the step. Tokens the env wrote keep loss mask 0 and get nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from envgym.agents.training.advantages import step_advantages
from envgym.agents.trajectory import Trajectory
from envgym.rewards import RewardComponent

Span = tuple[int, int]
_STEP_MARKER = r"(?im)^[ \t>#*_-]*step\s*\d+"
# A run of arithmetic with at least one "=": "12 * 3 = 36", "(3 + 4) * 2 = 7 * 2 = 14"; × and ÷ read as * and /.
_EQUATION = re.compile(r"[\d(][\d\s.+\-*/×÷^()]*?(?:=\s*-?[\d(][\d\s.+\-*/×÷^()]*)+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def segment_steps(text: str, segment: str = "lines", split: str | None = None) -> list[Span]:
    """Character spans ``(start, end)`` of the steps of ``text`` (whitespace around a step is left out; blank
    steps are dropped). ``split`` is the regex for ``segment="regex"``; a step starts at each of its matches,
    and text before the first match is a step of its own."""
    if segment == "lines":
        return _between(text, r"\n")
    if segment == "blank":
        return _between(text, r"\n[ \t]*\n")
    if segment == "step":
        return _starting_at(text, _STEP_MARKER)
    if segment == "regex":
        if split is None:
            raise ValueError("segment='regex' needs split, a regex whose matches start the steps")
        return _starting_at(text, split)
    raise ValueError(f"segment must be one of lines, blank, step, regex; got {segment!r}")


def _between(text: str, separator: str) -> list[Span]:
    bounds, start = [], 0
    for match in re.finditer(separator, text):
        bounds.append((start, match.start()))
        start = match.end()
    bounds.append((start, len(text)))
    return [span for span in (_trim(text, a, b) for a, b in bounds) if span is not None]


def _starting_at(text: str, marker: str) -> list[Span]:
    starts = sorted({0, *(m.start() for m in re.finditer(marker, text) if m.end() > m.start())})
    bounds = zip(starts, [*starts[1:], len(text)])
    return [span for span in (_trim(text, a, b) for a, b in bounds) if span is not None]


def _trim(text: str, start: int, end: int) -> Span | None:
    piece = text[start:end]
    if not piece.strip():
        return None
    return start + (len(piece) - len(piece.lstrip())), end - (len(piece) - len(piece.rstrip()))


def step_token_spans(tokenizer: Any, token_ids: Sequence[int], steps: Sequence[Span]) -> list[Span]:
    """For each character span of ``steps`` in ``tokenizer.decode(token_ids)``, the token span ``[start, end)``
    of ``token_ids`` that belongs to it: token j (its text starting at character a_j) goes to the first step
    whose end is after a_j, or to the last step."""
    if not steps:
        return []
    owner = []
    previous = 0
    for j in range(len(token_ids)):
        end = len(tokenizer.decode(list(token_ids[: j + 1]), skip_special_tokens=True))
        step = next((k for k, (_, step_end) in enumerate(steps) if step_end > previous), len(steps) - 1)
        owner.append(step)
        previous = max(previous, end)
    spans = []
    for k in range(len(steps)):
        tokens = [j for j, step in enumerate(owner) if step == k]
        spans.append((tokens[0], tokens[-1] + 1) if tokens else (0, 0))
    return spans


def _equations(step: str) -> list[list[str]]:
    """The arithmetic equations of a step, each as its sides (``["12 * 3", "36"]``)."""
    found = []
    for match in _EQUATION.finditer(step):
        sides = [
            side.strip().replace("×", "*").replace("x", "*").replace("÷", "/").replace("^", "**")
            for side in match.group(0).split("=")
        ]
        if len(sides) >= 2 and all(sides):
            found.append(sides)
    return found


def step_is_true(step: str, known: set[Fraction], seen: set[tuple[str, ...]]) -> bool:
    """Whether every equation of ``step`` holds, uses only ``known`` numbers (the question's, earlier results) on
    its left-hand sides and is new (not in ``seen``); a step without equations is true. Updates ``known`` with
    the step's results and ``seen`` with its equations."""
    from envgym.verifiers.safe_expr import UnsafeExpressionError, evaluate_arithmetic, number_literals

    equations = _equations(step)
    results: set[Fraction] = set()
    for sides in equations:
        try:
            values = [evaluate_arithmetic(side) for side in sides]
            operands = [n for side in sides[:-1] for n in number_literals(side)]
        except UnsafeExpressionError:
            return False
        key = tuple("".join(side.split()) for side in sides)
        if len(set(values)) != 1 or key in seen or not set(operands) <= known | results:
            return False
        seen.add(key)
        results.add(values[0])
    known |= results
    return True


def score_steps(
    component: RewardComponent, question: str, steps: Sequence[str], reference: str | None = None
) -> list[float]:
    """One process reward per step (see the module docstring); raises :class:`envgym.verifiers.judge.JudgeError`
    when a step judge cannot be reached (a reply without a score scores the step 0)."""
    options = component.options
    if options["scorer"] == "rule":
        known = {Fraction(n) for n in _NUMBER.findall(question)}
        seen: set[tuple[str, ...]] = set()
        return [float(bool(re.search(options["rule"], step)) and step_is_true(step, known, seen)) for step in steps]
    from envgym.rewards.judge_reward import shared_judge

    judge = shared_judge(component)
    return [judge.score(question, "\n".join(steps[: k + 1]), reference).score or 0.0 for k in range(len(steps))]


def policy_turns(trajectory: Trajectory) -> list[list[int]]:
    """The completion indices of each turn's policy tokens (loss mask 1), turn by turn."""
    turns, start = [], 0
    for end in trajectory.turn_ends:
        turns.append([j for j in range(start, end + 1) if trajectory.loss_mask[j]])
        start = end + 1
    return turns


def apply_process_rewards(
    groups: Sequence[Sequence[Trajectory]],
    component: RewardComponent,
    tokenizer: Any,
    question_of: Callable[[Trajectory], str],
    reference_of: Callable[[Trajectory], str | None],
    verdict_of: Callable[[Trajectory], float | None] | None = None,
) -> None:
    """Score the steps of every healthy episode and record them in ``episode.metadata["process_rewards"]``
    (``{name: {"spans": [[start, end], ...], "rewards": [...], "weight", "credit"}}``, token spans in the
    completion). A judge that cannot be reached is the episode's error. ``question_of(trajectory)`` and
    ``reference_of(trajectory)`` give what a scorer reads; ``verdict_of(trajectory)`` the final verdict that
    caps every step reward (None: no cap)."""
    from envgym.verifiers.judge import JudgeError

    options = component.options
    for group in groups:
        for trajectory in group:
            if trajectory.failed:
                continue
            spans, texts = [], []
            for indices in policy_turns(trajectory):
                ids = [trajectory.completion_ids[j] for j in indices]
                text = tokenizer.decode(ids, skip_special_tokens=True)
                steps = segment_steps(text, options["segment"], options["split"])
                texts.extend(text[a:b] for a, b in steps)
                spans.extend(
                    (indices[a], indices[b - 1] + 1) if b > a else (0, 0)  # a step no token starts in
                    for a, b in step_token_spans(tokenizer, ids, steps)
                )
            try:
                rewards = score_steps(
                    component,
                    question_of(trajectory),
                    texts,
                    reference_of(trajectory) if options["reference"] else None,
                )
            except JudgeError as error:
                trajectory.episode.error = f"process reward {component.name!r} failed: {error}"
                continue
            verdict = None if verdict_of is None else verdict_of(trajectory)
            if verdict is not None:
                rewards = [min(reward, verdict) for reward in rewards]
            trajectory.episode.metadata.setdefault("process_rewards", {})[component.name] = {
                "spans": [list(span) for span in spans],
                "rewards": rewards,
                "weight": component.weight,
                "credit": options["credit"],
            }


def process_token_advantages(groups: Sequence[Sequence[Trajectory]], epsilon: float) -> list[list[list[float] | None]]:
    """Per group, per episode: the process advantage of each completion token (summed over process components,
    each times its weight), or None for an episode without process rewards. See
    :func:`~envgym.agents.training.advantages.step_advantages` for the formula."""
    out: list[list[list[float] | None]] = [[None] * len(group) for group in groups]
    for g, group in enumerate(groups):
        names = sorted({name for t in group for name in t.episode.metadata.get("process_rewards", {})})
        for name in names:
            records = [t.episode.metadata.get("process_rewards", {}).get(name) for t in group]
            present = [i for i, record in enumerate(records) if record is not None]
            advantages = step_advantages(
                [records[i]["rewards"] for i in present], records[present[0]]["credit"], epsilon
            )
            for i, per_step in zip(present, advantages):
                tokens = out[g][i] = out[g][i] or [0.0] * len(group[i].completion_ids)
                weight = records[i]["weight"]
                for (start, end), advantage in zip(records[i]["spans"], per_step):
                    for j in range(start, end):
                        tokens[j] += weight * advantage
    return out


def step_reward_metrics(rollouts: Sequence[Sequence[Trajectory]]) -> dict[str, float]:
    """``process/<name>``: the mean step reward of each process component over the healthy episodes."""
    totals: dict[str, list[float]] = {}
    for group in rollouts:
        for trajectory in group:
            if not trajectory.failed:
                for name, record in trajectory.episode.metadata.get("process_rewards", {}).items():
                    totals.setdefault(name, []).extend(record["rewards"])
    return {f"process/{name}": sum(values) / len(values) for name, values in totals.items() if values}

"""Compose-v0: apply a composition of string functions, with held-out compositions ("From f(x) and g(x) to f(g(x))").

The paper asks whether RL teaches a *new skill by composition*: train on atomic functions and some pairs, then
evaluate on pairs never trained on and on deeper chains. Splits (``split=``):

- ``train``: depth 1 (one function) and depth 2 over the *train pairs* (``depths`` within ``[1, 2]``);
- ``heldout``: depth 2 over the *held-out pairs* only, which never occur in ``train``;
- ``deep``: chains of ``depths`` (3 and more, default ``[3]``) distinct functions.

The held-out pairs are a fixed fraction (``holdout_fraction``) of all ordered pairs, chosen by ``holdout_seed``
alone (:func:`envgym.envs.strings.functions.split_pairs`). ``definitions="prompt"`` defines each function used in
the prompt; ``"names"`` gives names only, so the functions must be learned as skills, as the paper does.

Answer: the output string in ``<answer>...</answer>``. Whitespace around it and one pair of surrounding double
quotes are ignored; everything else must match exactly (case-sensitive; inputs and outputs are ASCII letters, so
a space inside is wrong). Two different ``<answer>`` tags are refused (``action_valid=False``), and a candidate list
in one tag is simply not the string: neither earns anything.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.answer_tag import single_answer
from envgym.envs.strings.functions import BY_NAME, FUNCTIONS, compose, split_pairs
from envgym.tasks import ProceduralTaskSource

SPLITS = ("train", "heldout", "deep")
DEFINITIONS = ("prompt", "names")
MAX_DEPTH = 6
INPUT_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))
MAX_DRAWS = 50  # re-draws of chain and input until the chain changes its input (one or two in practice)


def _check_depths(split: str, depth: int | None, depths: list[int] | None) -> list[int]:
    if depth is not None and depths is not None:
        raise ValueError("give depth= or depths=, not both")
    if depth is not None:
        depths = [depth]
    allowed = {"train": [1, 2], "heldout": [2], "deep": list(range(3, MAX_DEPTH + 1))}[split]
    if depths is None:
        return {"train": [1, 2], "heldout": [2], "deep": [3]}[split]
    if (
        not isinstance(depths, (list, tuple))
        or not depths
        or any(isinstance(d, bool) or not isinstance(d, int) or d not in allowed for d in depths)
    ):
        raise ValueError(f"split={split!r} takes depths from {allowed}, got {depths!r}")
    return sorted(set(depths))


class Compose(Env):
    description = "Apply a composition of string functions; held-out pairs and deeper chains test generalisation."
    reward_ranges = {"correct": RewardRange()}

    def __init__(
        self,
        split: str = "train",
        *,
        depth: int | None = None,
        depths: list[int] | None = None,
        definitions: str = "prompt",
        holdout_seed: int = 0,
        holdout_fraction: float = 0.25,
        min_length: int = 5,
        max_length: int = 8,
    ):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        if definitions not in DEFINITIONS:
            raise ValueError(f"definitions must be one of {DEFINITIONS}, got {definitions!r}")
        if not 2 <= min_length <= max_length <= 40:
            raise ValueError(f"need 2 <= min_length <= max_length <= 40, got {min_length}, {max_length}")
        self.split, self.definitions = split, definitions
        self.depths = _check_depths(split, depth, depths)
        self.min_length, self.max_length = min_length, max_length
        self.holdout_seed, self.holdout_fraction = holdout_seed, holdout_fraction
        train_pairs, heldout_pairs = split_pairs(holdout_seed, holdout_fraction)
        self.pairs = train_pairs if split == "train" else heldout_pairs
        self.tasks = ProceduralTaskSource(self._make_task)

    def _chain(self, rng: np.random.Generator, depth: int) -> list[str]:
        """The function names, outermost first."""
        if depth == 1:
            return [FUNCTIONS[int(rng.integers(len(FUNCTIONS)))].name]
        if depth == 2:
            return list(self.pairs[int(rng.integers(len(self.pairs)))])
        return [FUNCTIONS[i].name for i in rng.choice(len(FUNCTIONS), size=depth, replace=False)]

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        depth = int(self.depths[int(rng.integers(len(self.depths)))])
        for _ in range(MAX_DRAWS):
            chain = self._chain(rng, depth)
            length = int(rng.integers(self.min_length, self.max_length + 1))
            text = "".join(rng.choice(INPUT_LETTERS, size=length))
            output = compose(chain, text)
            if output and output != text:  # an unchanged input would let an echo of the prompt earn
                break
        else:  # unreachable for the shipped library: every pair changes most inputs
            raise RuntimeError(f"no chain of depth {depth} changed its input in {MAX_DRAWS} draws")
        call = "".join(f"{name}(" for name in chain) + f'"{text}"' + ")" * len(chain)
        lines = []
        if self.definitions == "prompt":
            lines.append("The string functions:")
            lines += [f"- {name}(s): {BY_NAME[name].definition}." for name in dict.fromkeys(chain)]
        lines.append(f"Compute {call}. The innermost function is applied first.")
        lines.append("Give the resulting string only, inside <answer></answer>, e.g. <answer>abc</answer>.")
        return Task(
            id=f"compose-{self.split}-{index}",
            messages=[{"role": "user", "content": "\n".join(lines)}],
            answer=output,
            metadata={"functions": chain, "depth": depth, "split": self.split, "input": text},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {key: task.metadata.get(key) for key in ("functions", "depth", "split")}

    def reference_action(self) -> Action | None:
        return None if self.task is None else f"<answer>{self.task.answer}</answer>"

    def wrong_action(self) -> Action | None:
        """The input string unchanged: a well-formed answer that is never the output (tasks guarantee it)."""
        return None if self.task is None else f"<answer>{self.task.metadata['input']}</answer>"

    def _step(self, action: Action) -> StepResult:
        task = self.task
        answer, problem = single_answer(action_text(action))
        info: dict[str, Any] = {key: task.metadata.get(key) for key in ("functions", "depth", "split")}
        if answer is None:
            components = {"correct": 0.0}
            info.update(action_valid=False, action_error=problem, correct=False, reward_components=components)
            return [], reward_total(components), True, False, info
        if len(answer) >= 2 and answer[0] == answer[-1] == '"':
            answer = answer[1:-1]
        correct = answer == task.answer
        components = {"correct": float(correct)}
        info.update(action_valid=True, answer=answer, correct=correct, reward_components=components)
        return [], reward_total(components), True, False, info

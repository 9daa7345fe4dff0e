"""Informal-v0: decide whether an informal mathematical statement holds (DeepTheorem's outcome reward: the verdict).

Procedural tasks come in pairs: tasks ``2j`` and ``2j + 1`` are one true and one false variant of the same base
theorem (:mod:`envgym.envs.theorem.statements`; labels decided by sympy or an exhaustive check), in a seeded
order, so labels are exactly balanced and a constant verdict earns 1/2. ``path=`` reads DeepTheorem-format JSONL
instead: one record per theorem with ``informal_theorem`` (or ``statement``), optional ``difficulty`` and
``domain``, and ``variants``, a list of ``{"statement": ..., "truth": ...}`` (``truth``: true/false or
"proved"/"disproved"); each variant is a task. A record without ``variants`` is one task labelled by ``truth``.

**What is graded: the verdict, and only the verdict.** No checker reads an informal proof, so the reward does not
depend on one and the prompt does not ask for one (it says only the verdict is graded): a "proof" of 1 = 2 with
the right verdict earns what the right verdict earns, by design. To reward proofs, grade the ``proof`` part with
a judge in a reward spec (``{source: judge, part: proof}``) and audit that spec (``envgym audit
theorem/Informal-v0 --reward spec.yaml``, docs/audit.md): such a reward is as sound as its judge.

Labels are balanced within every family and no surface feature of a statement predicts them: each family is
drawn so that every relation, number and polynomial appears as often in true statements as in false ones
(:mod:`envgym.envs.theorem.statements`; ``envgym audit``'s blind learner checks it, docs/audit.md).

**Answer rules:** reasoning (optional) and the verdict in a box: ``\\boxed{proved}`` or
``\\boxed{disproved}`` (``verdicts="true"``: ``\\boxed{true}`` / ``\\boxed{false}``; case, ``\\text{}`` and a
final period aside). Boxes holding anything else are ignored (a proof may box a value); two different verdicts,
or no verdict, is no answer (``action_valid=False``, reward 0), so "proved or disproved" earns nothing.
Reward component ``correct`` is the verdict's outcome. ``info["parts"]`` has ``verdict`` and ``proof`` (the reply
without its verdict boxes) for a proof-quality judge; ``info`` also has ``topic`` and ``difficulty``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total
from envgym.envs.theorem.statements import FAMILIES, statement_pair
from envgym.tasks import ListTaskSource, ProceduralTaskSource

VOCABULARIES = {"proved": ("proved", "disproved"), "true": ("true", "false")}
# Bounded and non-nesting beyond one level: linear on 100 KB replies.
_BOX = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]{0,200}\}){0,200})\}")
_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mathbf)\{([^{}]*)\}")


def _verdict_word(body: str) -> str:
    return _TEXT.sub(r"\1", body).strip().rstrip(".").strip().lower()


class Informal(Env):
    description = "Prove or disprove an informal statement; verdict in \\boxed{proved|disproved}."

    def __init__(self, path: str | None = None, families: list[str] | None = None, verdicts: str = "proved"):
        if verdicts not in VOCABULARIES:
            raise ValueError(f"verdicts must be one of {sorted(VOCABULARIES)}, got {verdicts!r}")
        families = list(FAMILIES) if families is None else families
        if not isinstance(families, (list, tuple)) or not families or any(f not in FAMILIES for f in families):
            raise ValueError(f"families must be a non-empty list from {sorted(FAMILIES)}, got {families!r}")
        self.families, self.vocabulary = list(families), VOCABULARIES[verdicts]
        self.tasks = (
            ProceduralTaskSource(self._make_task)
            if path is None
            else load_deeptheorem(path, self._prompt, self.vocabulary)
        )

    def _prompt(self, statement: str) -> str:
        proved, disproved = self.vocabulary
        return (
            f"Decide whether the following statement is true.\n\nStatement: {statement}\n\nReason as you need to "
            "(only the verdict is graded), then end with "
            f"\\boxed{{{proved}}} if it holds or \\boxed{{{disproved}}} if it does not."
        )

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        pair, flip = _pair(index // 2, tuple(self.families))
        statement = pair[(index + flip) % 2]
        return Task(
            id=f"theorem-{index}",
            messages=[{"role": "user", "content": self._prompt(statement.text)}],
            answer=self.vocabulary[0 if statement.true else 1],
            metadata={
                "truth": statement.true,
                "topic": statement.topic,
                "difficulty": statement.difficulty,
                "claim": statement.claim,
                "statement": statement.text,
            },
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {"topic": task.metadata.get("topic"), "difficulty": task.metadata.get("difficulty")}

    def _gold(self) -> str:
        return self.vocabulary[0 if self.task.metadata["truth"] else 1]

    def reference_action(self) -> Action | None:
        if self.task is None:
            return None
        return f"The statement was checked case by case against its definition. \\boxed{{{self._gold()}}}"

    def wrong_action(self) -> Action | None:
        """The opposite verdict."""
        if self.task is None:
            return None
        return f"I checked it. \\boxed{{{self.vocabulary[1 if self.task.metadata['truth'] else 0]}}}"

    def _step(self, action: Action) -> StepResult:
        text = action_text(action)
        found = {_verdict_word(match.group(1)) for match in _BOX.finditer(text)} & set(self.vocabulary)
        info: dict[str, Any] = {
            "topic": self.task.metadata.get("topic"),
            "difficulty": self.task.metadata.get("difficulty"),
            "reward_components": {"correct": 0.0},
            "correct": False,
        }
        if len(found) != 1:
            problem = (
                f"no verdict: end with \\boxed{{{self.vocabulary[0]}}} or \\boxed{{{self.vocabulary[1]}}}"
                if not found
                else "two different verdicts; give exactly one"
            )
            return [], 0.0, True, False, {**info, "action_valid": False, "action_error": problem}
        verdict = found.pop()
        proof = _BOX.sub(lambda m: "" if _verdict_word(m.group(1)) == verdict else m.group(0), text).strip()
        correct = verdict == self._gold()
        components = {"correct": float(correct)}
        info.update(
            action_valid=True,
            answer=verdict,
            correct=correct,
            reward_components=components,
            parts={"verdict": verdict, "proof": proof},
        )
        return [], reward_total(components), True, False, info


@functools.lru_cache(maxsize=4096)
def _pair(pair_index: int, families: tuple[str, ...]) -> tuple[tuple[Any, Any], int]:
    """The true and false statements of pair ``pair_index`` and the seeded order they go in. Cached: sympy decides
    each label (tens of milliseconds), and an env resets to the same task many times; statements are frozen."""
    pair_rng = np.random.default_rng(pair_index)  # both tasks of a pair draw the same base theorem
    pair = statement_pair(pair_rng, list(families))
    return pair, int(pair_rng.integers(2))


_TRUTH_WORDS = {"true": True, "proved": True, "false": False, "disproved": False}


def _truth(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUTH_WORDS:
        return _TRUTH_WORDS[value.strip().lower()]
    raise ValueError(f"{where}: truth must be true/false or 'proved'/'disproved', got {value!r}")


def load_deeptheorem(
    path: str | Path, prompt: Callable[[str], str], vocabulary: tuple[str, str] = VOCABULARIES["proved"]
) -> ListTaskSource:
    """One task per variant of each DeepTheorem-format JSONL record (fields in the module docstring); ``prompt``
    turns a statement into the user message, ``vocabulary`` names the (true, false) verdicts."""
    path = Path(path)
    tasks = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            base = record.get("informal_theorem", record.get("statement"))
            variants = record.get("variants") or [{"statement": base, "truth": record.get("truth")}]
            for position, variant in enumerate(variants):
                statement = variant.get("statement") if isinstance(variant, dict) else None
                if not isinstance(statement, str) or not statement.strip():
                    raise ValueError(
                        f"{path}:{number}: variant {position} needs a non-empty 'statement' "
                        f"(records need 'informal_theorem' or 'variants')"
                    )
                truth = _truth(variant.get("truth"), f"{path}:{number} variant {position}")
                tasks.append(
                    Task(
                        id=f"{record.get('id', f'{path.stem}-{number}')}-{position}",
                        messages=[{"role": "user", "content": prompt(statement)}],
                        answer=vocabulary[0 if truth else 1],
                        metadata={
                            "truth": truth,
                            "statement": statement,
                            "topic": record.get("domain"),
                            "difficulty": record.get("difficulty"),
                        },
                    )
                )
    if not tasks:
        raise ValueError(f"{path}: no records")
    return ListTaskSource(tasks)

"""MultipleChoice-v0: science multiple choice (Guru's science domain), procedural or from GPQA/MMLU-Pro files.

Procedural tasks (the default) ask physics, chemistry and unit questions whose answers are computed
(:mod:`envgym.envs.science.problems`): four options, the answers of the same formula for four neighbouring values
of one input, in a shuffled order (so a constant letter earns 1/4 on average), and nothing about the options
alone tells the answer (the blind learner of ``envgym audit`` checks it, docs/audit.md). ``path=`` reads
a JSONL or Parquet file instead: ``question``, ``options`` (or ``choices``, a list of up to 10 strings) and the
answer as ``answer`` (a letter or a 0-based index) or ``answer_index``; options keep the file's order.

**Answer rules:** the letter, in any phrasing :func:`envgym.verifiers.choice.extract_choice` reads (``\\boxed{C}``,
"The answer is (C)", ``<answer>C</answer>``), or the option's full text in ``\\boxed{}`` or ``<answer>`` (case and
spaces aside: ``\\boxed{12.5 m/s}``). A text answer counts as its letter, so a reply that names two different
options, in any mix of letters and texts, is a hedge: it commits to none (``action_valid=False``, reward 0).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total
from envgym.envs.science.problems import GENERATORS, option_texts
from envgym.tasks import ListTaskSource, ProceduralTaskSource, load_jsonl, load_parquet
from envgym.tasks.files import FieldMap
from envgym.verifiers.choice import extract_choice

LETTERS = "ABCDEFGHIJ"
INSTRUCTION = "Reply with the letter of the correct option in \\boxed{}, for example \\boxed{A}."
# Bounded bodies keep the rewrite linear on 100 KB replies; an option's text is far shorter.
_BODY = re.compile(r"<answer>([^<>]{0,300})</answer>|\\boxed\{([^{}]{0,300})\}")


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".").lower()


def render(question: str, options: list[str]) -> str:
    lines = [question, ""] + [f"({LETTERS[i]}) {text}" for i, text in enumerate(options)]
    return "\n".join(lines + ["", INSTRUCTION])


def chosen_letter(text: str, options: list[str]) -> str | None:
    """The one option ``text`` commits to, or None: answer tags and option texts become ``\\boxed{letter}`` first,
    so :func:`extract_choice` judges letters and texts together (two different options are a hedge)."""
    by_text = {_normal(option): LETTERS[i] for i, option in enumerate(options)}

    def as_letter(match: re.Match) -> str:
        body = _normal(match.group(1) if match.group(1) is not None else match.group(2))
        letter = by_text.get(body) or body.strip("()").upper()
        return f"\\boxed{{{letter}}}" if len(letter) == 1 else match.group(0)

    return extract_choice(_BODY.sub(as_letter, text), LETTERS[: len(options)])


class MultipleChoice(Env):
    description = "Science multiple choice: computed physics/chemistry/unit answers, or GPQA/MMLU-Pro files."

    def __init__(self, path: str | None = None, topics: list[str] | None = None):
        topics = list(GENERATORS) if topics is None else topics
        if not isinstance(topics, (list, tuple)) or not topics or any(t not in GENERATORS for t in topics):
            raise ValueError(f"topics must be a non-empty list from {sorted(GENERATORS)}, got {topics!r}")
        self.topics = list(topics)
        self.tasks = ProceduralTaskSource(self._make_task) if path is None else load_choice_file(path)

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        while True:  # neighbouring answers that round to the same text are redrawn (never the case for most)
            topic = self.topics[int(rng.integers(len(self.topics)))]
            problem = GENERATORS[topic](rng)
            texts = option_texts(problem)
            if len(set(texts)) == len(texts):
                break
        order = [int(i) for i in rng.permutation(len(texts))]  # the letters in an order of their own
        options = [texts[i] for i in order]
        position = order.index(problem.answer_rung)
        return Task(
            id=f"science-{index}",
            messages=[{"role": "user", "content": render(problem.question, options)}],
            answer=LETTERS[position],
            metadata={"options": options, "topic": problem.topic, "generator": topic},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {"topic": task.metadata.get("topic")}

    def reference_action(self) -> Action | None:
        return None if self.task is None else f"\\boxed{{{self.task.answer}}}"

    def wrong_action(self) -> Action | None:
        """The next letter after the gold one (a real option)."""
        if self.task is None:
            return None
        count = len(self.task.metadata["options"])
        return f"\\boxed{{{LETTERS[(LETTERS.index(self.task.answer) + 1) % count]}}}"

    def _step(self, action: Action) -> StepResult:
        options = self.task.metadata["options"]
        letter = chosen_letter(action_text(action), options)
        info: dict[str, Any] = {
            "topic": self.task.metadata.get("topic"),
            "reward_components": {"correct": 0.0},
            "correct": False,
        }
        if letter is None:
            return (
                [],
                0.0,
                True,
                False,
                {
                    **info,
                    "action_valid": False,
                    "action_error": (
                        f"no single option chosen: give one letter from {LETTERS[: len(options)]} "
                        "(or one option's text)"
                    ),
                },
            )
        correct = letter == self.task.answer
        components = {"correct": float(correct)}
        info.update(action_valid=True, answer=letter, correct=correct, reward_components=components)
        return [], reward_total(components), True, False, info


def load_choice_file(path: str | Path) -> ListTaskSource:
    """GPQA/MMLU-Pro-style tasks from a ``.jsonl`` or ``.parquet`` file (fields in the module docstring)."""
    path = Path(path)
    loaders = {".jsonl": load_jsonl, ".parquet": load_parquet}
    if path.suffix not in loaders:
        raise ValueError(f"path must be a .jsonl or .parquet file, got {str(path)!r}")
    raw = loaders[path.suffix](path, FieldMap(answer=None))
    return ListTaskSource([_choice_task(raw.get(i), row=i) for i in range(len(raw))])


def _choice_task(record: Task, row: int) -> Task:
    fields = record.metadata
    options = fields.get("options", fields.get("choices"))
    if not isinstance(options, list) or not 2 <= len(options) <= len(LETTERS):
        raise ValueError(
            f"record {row}: 'options' (or 'choices') must be a list of 2 to {len(LETTERS)} strings, got {options!r}"
        )
    answer = fields.get("answer", fields.get("answer_index"))
    if isinstance(answer, str) and answer.strip().upper() in LETTERS[: len(options)] and len(answer.strip()) == 1:
        letter = answer.strip().upper()
    elif isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < len(options):
        letter = LETTERS[answer]
    else:
        raise ValueError(
            f"record {row}: the answer must be a letter from {LETTERS[: len(options)]} or an index "
            f"from 0 to {len(options) - 1} (fields 'answer' or 'answer_index'), got {answer!r}"
        )
    options = [str(option) for option in options]
    question = record.messages[-1]["content"]
    return Task(
        id=record.id,
        messages=[{"role": "user", "content": render(question, options)}],
        answer=letter,
        metadata={"options": options, "topic": fields.get("category", fields.get("subject"))},
    )

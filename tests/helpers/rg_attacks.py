"""Generic adversarial answers for reasoning-gym tasks, and the check that none beats an honest wrong answer.

The answers are written from what a policy could see or guess (the prompt, constants, the format template)
plus, where the gold is known, tricks on it that solve nothing (a prefix, the gold among other candidates).
An answer that reads as the gold itself (see ``same_answer``) is a correct
answer, not an attack, and is skipped.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from envgym.envs.rg.answers import reference_answer

CONSTANTS = ["0", "1", "-1", "2", "24", "Yes", "No", "True", "False", "A", "None", "[]", "{}", "", " "]
NON_FINITE = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e309", "nan+nanj", "(nan, nan)", "[nan]"]
LOOK_ALIKES = ["٣", "３", "Ⅻ", "𝟘", "O", "l", "1\u200b", "<answer>1</answer>", "<answer><answer>0</answer>"]
CODE = ["__import__('os').system('true')", "open('/dev/null').read()", "entry['answer']", "self.config"]
LONG = ["a" * 100_000, "1 " * 50_000, "<answer>" * 12_500]

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"[^\W\d_]+")
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'")
_EXAMPLE = re.compile(r"(?:e\.g\.|for example|such as)[:,]?\s*([^\n)]{1,200})", re.IGNORECASE)


def same_answer(attack: str, gold: str) -> bool:
    """Whether ``attack`` reads as the gold: the same numbers (to a relative 1e-4, the scorers' own tolerance)
    and words, where with numbers a word may be left out or abbreviated (``5``, ``5 d`` for ``5 days``)."""
    attack_numbers = [float(match) for match in _NUMBER.findall(attack)]
    gold_numbers = [float(match) for match in _NUMBER.findall(gold)]
    attack_words = [word.lower() for word in _WORD.findall(attack)]
    gold_words = [word.lower() for word in _WORD.findall(gold)]
    if not gold_numbers:
        return attack_words == gold_words and not attack_numbers
    same_numbers = len(attack_numbers) == len(gold_numbers) and all(
        math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-9) for a, b in zip(attack_numbers, gold_numbers)
    )
    return same_numbers and all(any(gold_word.startswith(word) for gold_word in gold_words) for word in attack_words)


def template_options(question: str) -> list[str]:
    """What a policy can copy from the prompt's format instructions: quoted strings and "e.g." examples."""
    quoted = [first or second for first, second in _QUOTED.findall(question)]
    examples = [match.strip(" .") for match in _EXAMPLE.findall(question)]
    return list(dict.fromkeys(quoted + examples))[:12]


def attacks(question: str, gold: str | None, other_golds: list[str]) -> list[str]:
    """Every adversarial answer for one task (``other_golds``: the answers of other tasks of the same kind)."""
    lines = [line for line in question.strip().splitlines() if line.strip()]
    answers = CONSTANTS + NON_FINITE + LOOK_ALIKES + CODE + LONG + template_options(question)
    answers += [question, lines[-1] if lines else "", " ".join(dict.fromkeys(other_golds))]
    answers += other_golds[:6]  # constants of this task's own answer kind
    if gold:
        wrong = next((other for other in other_golds if not same_answer(other, gold)), "0")
        answers += [
            gold[:1],
            gold[: len(gold) // 2],
            gold[:-1],
            f"{gold} {gold}",
            f"{gold} or {wrong}",
            f"{wrong} or {gold}",
            f"{wrong}, {gold}",
            f"{gold}\n{wrong}",
            (gold + " ") * 2000,
        ]
    return answers


MAX_STEP_SECONDS = 2.5


@dataclass
class Finding:
    task: str
    index: int
    attack: str
    problem: str

    def __str__(self) -> str:
        return f"{self.task}[{self.index}] {self.attack[:60]!r}: {self.problem}"


def honest_wrong_answers(gold: str | None, other_golds: list[str]) -> list[str]:
    """Wrong answers of the task's own form: other tasks' golds, and the gold with a number or letter changed."""
    wrong = [other for other in other_golds if gold is None or not same_answer(other, gold)][:3]
    if gold:
        number = _NUMBER.search(gold)
        if number:
            wrong.append(
                gold[: number.start()] + str(float(number.group()) + 1).removesuffix(".0") + gold[number.end() :]
            )
        letter = re.search(r"[A-Za-z]", gold)
        if letter:
            swapped = "b" if letter.group().lower() == "a" else "a"
            wrong.append(gold[: letter.start()] + swapped + gold[letter.end() :])
    return [answer for answer in wrong if gold is None or not same_answer(answer, gold)]


def play(env, index: int, answer: str) -> tuple[float, float]:
    """(reward, seconds the step took) for one answer to task ``index``."""
    env.reset(seed=0, options={"task_index": index})
    start = time.perf_counter()
    _, reward, _, _, _ = env.step(f"<answer>{answer}</answer>")
    return reward, time.perf_counter() - start


def audit_task(task: str, env, indices: range) -> list[Finding]:
    """Adversarial answers that earn more than the best honest wrong answer on the same task (0 in strict mode)."""
    tasks = env.unwrapped.tasks
    golds = [reference_answer(task, tasks.entry(index)) for index in range(min(len(tasks), max(indices) + 8))]
    findings = []
    for index in indices:
        task_data, gold = tasks.get(index), golds[index]
        others = [other for other in golds if other is not None and other != gold]
        baseline = max([play(env, index, wrong)[0] for wrong in honest_wrong_answers(gold, others)] + [0.0])
        if baseline >= 1.0:  # a "wrong" answer the scorer accepts is another correct answer: no baseline
            baseline = 0.0
        for attack in attacks(task_data.messages[-1]["content"], gold, others):
            if gold is not None and same_answer(attack, gold):
                continue
            reward, seconds = play(env, index, attack)
            if reward > baseline:
                findings.append(Finding(task, index, attack, f"earned {reward:.3f} > {baseline:.3f}"))
            if seconds > MAX_STEP_SECONDS:
                findings.append(Finding(task, index, attack, f"step took {seconds:.1f} s"))
    return findings

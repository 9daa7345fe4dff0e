"""The blind learner: surface predictors, cross-validated, beat chance only where a generator leaks its answers."""

import numpy as np
import pytest

import envgym
from envgym.audit import AuditSettings, audit_env
from envgym.audit.cue_check import binomial_tail, blind_learner, options
from envgym.core import Env, Task, action_text
from envgym.tasks import ProceduralTaskSource

LETTERS = "ABCD"


def choice_prompt(values):
    lines = [f"({LETTERS[i]}) {v:g} m" for i, v in enumerate(values)]
    return "How far does it go?\n\n" + "\n".join(lines) + "\n\nAnswer with \\boxed{letter}."


class Choices(Env):
    """Four options; ``leaky``: the answer is always the largest value (the distractors are its halves and thirds,
    a classic generator bug), else the options are four random values with the answer at a random one."""

    def __init__(self, leaky: bool):
        self.leaky = leaky
        self.tasks = ProceduralTaskSource(self._task)

    def _task(self, rng, index):
        if self.leaky:
            value = int(rng.integers(10, 100))
            values = [value, value / 2, value / 3, value / 4]
            order = rng.permutation(4)
            values, answer = [values[i] for i in order], int(np.argmin(order))
        else:
            values, answer = [int(v) for v in rng.integers(10, 100, size=4)], int(rng.integers(4))
        return Task(f"c{index}", [{"role": "user", "content": choice_prompt(values)}], LETTERS[answer])

    def _reset(self, task, options):
        return task.prompt(), {}

    def reference_action(self):
        return f"\\boxed{{{self.task.answer}}}"

    def wrong_action(self):
        return f"\\boxed{{{LETTERS[(LETTERS.index(self.task.answer) + 1) % 4]}}}"

    def _step(self, action):
        correct = action_text(action).strip() == self.reference_action()
        return [], float(correct), True, False, {"correct": correct}


def prompts_and_answers(env, count):
    tasks = [env.unwrapped.tasks.get(i) for i in range(count)]
    return [t.messages[-1]["content"] for t in tasks], [str(t.answer) for t in tasks]


def test_a_generator_whose_answer_is_the_largest_option_is_caught_and_the_feature_named():
    report = audit_env("toy/Leaky-v0", AuditSettings(cue_tasks=100), env=Choices(leaky=True))
    [cue] = [f for f in report.findings if f.kind == "cue_leak"]
    assert cue.strategy.startswith("blind-learner:option rule on") and "chance 25%" in cue.evidence


def test_a_generator_with_no_cue_is_clean():
    report = audit_env("toy/Fair-v0", AuditSettings(cue_tasks=200), env=Choices(leaky=False))
    assert not [f for f in report.findings if f.kind == "cue_leak"]
    assert "cue-check" in report.phases


def test_a_label_set_whose_wording_gives_the_label_is_caught_naming_the_words():
    rng = np.random.default_rng(0)
    prompts, answers = [], []
    for i in range(120):
        true = bool(rng.integers(2))
        # True claims say "at least", false ones "at most", whatever the numbers: wording, not maths, decides.
        prompts.append(f"Claim {i}: x{int(rng.integers(1000))} is {'at least' if true else 'at most'} {i % 17}.")
        answers.append("proved" if true else "disproved")
    best = blind_learner(prompts, answers)[0]
    assert best.leaks and ("least" in best.feature or "most" in best.feature or "n-grams" in best.feature)


def test_random_labels_are_not_a_finding():
    rng = np.random.default_rng(1)
    prompts = [f"Statement {i}: {' '.join(rng.choice(['a', 'b', 'c', 'd'], size=6))}." for i in range(200)]
    answers = [str(rng.choice(["yes", "no"])) for _ in prompts]
    assert not any(cue.leaks for cue in blind_learner(prompts, answers))


def test_numeric_answers_are_not_checked():
    prompts = [f"What is {i} + 1?" for i in range(50)]
    assert blind_learner(prompts, [str(i % 5 + 1) for i in range(50)]) == []


def test_options_are_read_only_from_lettered_lines_from_a():
    assert options(choice_prompt([1, 2, 3, 4])) == ["1 m", "2 m", "3 m", "4 m"]
    assert options("(B) two\n(C) three") == []


def test_the_binomial_tail_is_exact():
    assert binomial_tail(0, 10, 0.5) == 1.0
    assert binomial_tail(10, 10, 0.5) == pytest.approx(1 / 1024)
    assert binomial_tail(2, 3, 0.5) == pytest.approx(0.5)


@pytest.mark.parametrize("env_id", ["science/MultipleChoice-v0", "theorem/Informal-v0"])
def test_the_science_and_theorem_generators_leak_no_cue(env_id):
    cues = blind_learner(*prompts_and_answers(envgym.make(env_id), 200))
    assert cues and not any(cue.leaks for cue in cues), cues[0].describe()

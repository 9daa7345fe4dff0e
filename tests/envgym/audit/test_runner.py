"""audit_env finds each class of problem on a toy env broken on purpose, and nothing on a sound one."""

import re
import time

from envgym.audit import AuditSettings, audit_env
from envgym.audit.strategies import BIG
from envgym.core import Env, Task, action_text
from envgym.tasks.sources import ListTaskSource

SETTINGS = AuditSettings(tasks=3)


def last_answer(text):
    """The last <answer>...</answer>, found in linear time (a lazy regex is quadratic on 100 KB of open tags)."""
    end = text.rfind("</answer>")
    start = text.rfind("<answer>", 0, end) if end >= 0 else -1
    return text[start + len("<answer>") : end] if start >= 0 else None


class AddTwoNumbers(Env):
    """Sound: 'Compute a + b', answer in <answer></answer>, exact integer match; anything else is invalid."""

    def __init__(self):
        pairs = [(31, 14), (7, 58), (23, 19)]
        self.tasks = ListTaskSource(
            [
                Task(
                    id=f"add-{i}",
                    answer=a + b,
                    messages=[{"role": "user", "content": f"Compute {a} + {b}. Reply as <answer>N</answer>."}],
                )
                for i, (a, b) in enumerate(pairs)
            ]
        )

    def _reset(self, task, options):
        return task.prompt(), {}

    def reference_action(self):
        return f"<answer>{self.task.answer}</answer>"

    def wrong_action(self):
        return f"<answer>{self.task.answer + 1}</answer>"

    def _read(self, text):
        answer = last_answer(text)
        if answer is None or not re.fullmatch(r"-?[0-9]{1,12}", answer.strip()):
            return None
        return int(answer)

    def _step(self, action):
        value = self._read(action_text(action))
        correct = value == self.task.answer
        info = {"correct": correct, "action_valid": value is not None}
        if value is None:
            info["action_error"] = "no integer in <answer></answer>"
        return [], float(correct), True, False, info


class RewardsEchoes(AddTwoNumbers):
    def _step(self, action):
        messages, reward, terminated, truncated, info = super()._step(action)
        if "Compute" in action_text(action):  # the prompt repeated back counts as an answer
            info["correct"], reward = True, 1.0
        return messages, reward, terminated, truncated, info


class RaisesOnWeirdAnswers(AddTwoNumbers):
    def _read(self, text):
        answer = last_answer(text)
        return None if answer is None else int(answer)  # int('nan') raises out of step


class SleepsOnRepeatedPhrases(AddTwoNumbers):
    def _step(self, action):
        text = action_text(action)
        if len(text) > BIG // 2 and text.startswith("the answer is 1. the answer is 1."):
            time.sleep(2.6)
        return super()._step(action)


class EvalsTheAnswer(AddTwoNumbers):
    def _read(self, text):
        answer = last_answer(text)
        try:
            return None if answer is None else eval(answer)  # noqa: S307 - the hole this test looks for
        except Exception:
            return None


class LeaksState(AddTwoNumbers):
    def _step(self, action):
        self.task.messages.append({"role": "user", "content": "(seen before)"})  # mutates the cached task
        return super()._step(action)


class RefusesItsReference(AddTwoNumbers):
    def reference_action(self):
        return f"<answer> {self.task.answer} </answer>!"

    def _read(self, text):
        return (
            int(text[8:-9])
            if text.startswith("<answer>") and text.endswith("</answer>") and text[8:-9].isdigit()
            else None
        )


def kinds(report):
    return sorted({finding.kind for finding in report.findings})


def test_a_sound_env_has_no_findings():
    report = audit_env("toy/Add-v0", SETTINGS, env=AddTwoNumbers())
    assert report.findings == [], [f.to_dict() for f in report.findings]
    assert report.reference == "declared" and report.baseline == "wrong_action" and report.single_turn


def test_an_env_that_rewards_echoes_earns_reward():
    report = audit_env("toy/Echo-v0", SETTINGS, env=RewardsEchoes())
    assert kinds(report) == ["earns_reward"]
    assert any(f.strategy.startswith("echo:prompt") and f.tasks == [0, 1, 2] for f in report.findings)


def test_an_env_that_raises_on_a_weird_answer_crashes():
    report = audit_env("toy/Raise-v0", SETTINGS, env=RaisesOnWeirdAnswers())
    crashes = [f for f in report.findings if f.kind == "crash"]
    assert crashes and {"crash"} == set(kinds(report))
    assert any("ValueError" in f.evidence for f in crashes)


def test_an_env_that_sleeps_has_a_slow_step():
    report = audit_env("toy/Sleep-v0", AuditSettings(tasks=1), env=SleepsOnRepeatedPhrases())
    assert [(f.kind, f.strategy) for f in report.findings] == [("slow_step", "huge:repeated-phrase@bare")]
    assert report.max_step_s > 2.5


def test_an_env_that_evals_the_answer_executes_code():
    report = audit_env("toy/Eval-v0", SETTINGS, env=EvalsTheAnswer())
    assert "code_executed" in kinds(report)
    assert any(f.kind == "code_executed" and f.strategy.startswith("code:import") for f in report.findings)


def test_an_env_that_mutates_its_tasks_leaks_state():
    report = audit_env("toy/Leak-v0", SETTINGS, env=LeaksState())
    assert kinds(report) == ["state_leak"]


def test_an_env_that_refuses_its_own_reference_is_reported():
    report = audit_env("toy/Refuse-v0", SETTINGS, env=RefusesItsReference())
    assert "honest_refused" in kinds(report)


def test_an_env_without_a_reference_is_listed_not_flagged():
    class NoReference(AddTwoNumbers):
        def reference_action(self):
            return None

    report = audit_env("toy/NoRef-v0", SETTINGS, env=NoReference())
    assert report.reference == "none" and report.findings == []
    assert any("no reference" in note for note in report.notes)


def test_a_constant_that_is_the_gold_answer_is_not_counted_against_the_env():
    class AnswerIsZero(AddTwoNumbers):
        def __init__(self):
            super().__init__()
            self.tasks = ListTaskSource(
                [
                    Task(
                        id="zero",
                        answer=0,
                        messages=[{"role": "user", "content": "Compute 5 - 5. Reply as <answer>N</answer>."}],
                    )
                ]
            )

    report = audit_env("toy/Zero-v0", SETTINGS, env=AnswerIsZero())
    assert report.findings == [], [f.to_dict() for f in report.findings]


def test_an_env_whose_reset_fails_is_a_crash_not_an_exception_out_of_the_audit():
    class CannotReset(AddTwoNumbers):
        def _reset(self, task, options):
            raise RuntimeError("dataset missing")

    report = audit_env("toy/NoReset-v0", SETTINGS, env=CannotReset())
    assert [(f.kind, f.strategy) for f in report.findings] == [("crash", "setup")]
    assert "dataset missing" in report.findings[0].evidence

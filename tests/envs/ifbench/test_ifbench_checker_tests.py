"""IFBench's own checker unit tests (``ifbench/instructions_test.py`` in the installed package), run through the env.

Each of their cases builds a checker and asserts what ``check_following`` says about a text. Here their test module
sees, in place of ``ifbench.instructions``, checkers whose ``check_following(text)`` plays ``text`` as the reply to a
one-constraint IFBench task in ``ifbench/IFBench-v0`` and returns the env's strict verdict: every assertion of
theirs is an assertion on our reward.
"""

import importlib
import types
import unittest

import pytest

import envgym

pytest.importorskip("ifbench")
from envgym.envs.ifbench.offline import load_ifbench  # noqa: E402

# The one case our offline tagger (textblob-aptagger's averaged perceptron, in place of NLTK's download) decides
# otherwise: it tags the "Does" of "Does this sentence start with a verb?" NNS, so words:start_verb says no.
TAGGER_DIFFERENCES = {("test_verb_start", "test with START_WITH_VERB")}


class EnvBackedChecker:
    """An IFBench checker whose verdict is the env's: ``build_description`` records the arguments of a task."""

    def __init__(self, env, registry_id: str):
        self.env, self.registry_id, self.kwargs = env, registry_id, {}

    def build_description(self, **kwargs):
        self.kwargs = kwargs

    def check_following(self, text: str) -> bool:
        task = envgym.Task(
            id="ifbench-test",
            messages=[{"role": "user", "content": self.kwargs.get("prompt_to_repeat", "")}],
            answer={"instruction_id_list": [self.registry_id], "kwargs": [self.kwargs]},
        )
        self.env.reset(options={"task": task})
        _, reward, *_, info = self.env.step(text)
        assert reward == float(info["instructions_strict"][0])
        return info["instructions_strict"][0]


class SubtestFailures(unittest.TestResult):
    """Keeps every failing (test, subtest) pair, subtests included, with the assertion message."""

    def __init__(self):
        super().__init__()
        self.failed: dict[tuple[str, str], str] = {}
        self.subtests_run = 0

    def addSubTest(self, test, subtest, outcome):  # noqa: N802 - unittest's name
        self.subtests_run += 1
        if outcome is not None:
            self.failed[(test._testMethodName, subtest._subDescription().strip("[]() "))] = str(outcome[1])

    def addFailure(self, test, err):  # noqa: N802
        self.failed[(test._testMethodName, "")] = str(err[1])

    def addError(self, test, err):  # noqa: N802
        self.failed[(test._testMethodName, "error")] = str(err[1])


def run_ifbench_tests(instructions_module) -> SubtestFailures:
    ifbench_tests = importlib.import_module("ifbench.instructions_test")
    original = ifbench_tests.instructions
    ifbench_tests.instructions = instructions_module
    try:
        result = SubtestFailures()
        unittest.defaultTestLoader.loadTestsFromTestCase(ifbench_tests.InstructionsTest).run(result)
    finally:
        ifbench_tests.instructions = original
    return result


def env_backed_instructions(env) -> types.SimpleNamespace:
    """``ifbench.instructions`` as their tests use it: each checker class, backed by the env."""
    registry = load_ifbench().registry.INSTRUCTION_DICT
    ids_by_class = {checker_class.__name__: instruction_id for instruction_id, checker_class in registry.items()}
    return types.SimpleNamespace(
        **{
            name: (lambda _id, registry_id=registry_id: EnvBackedChecker(env, registry_id))
            for name, registry_id in ids_by_class.items()
        }
    )


def test_ifbench_s_own_checker_tests_pass_through_the_env_but_for_the_tagger_case():
    result = run_ifbench_tests(env_backed_instructions(envgym.make("ifbench/IFBench-v0")))
    assert result.testsRun == 49 and result.subtests_run >= 130
    assert set(result.failed) == TAGGER_DIFFERENCES, result.failed


def test_ifbench_s_own_checkers_give_the_same_results_on_their_tests():
    """The env changes nothing on IFBench's cases: their tests against IFBench's own checker classes fail alike."""
    result = run_ifbench_tests(load_ifbench().instructions)
    assert set(result.failed) == TAGGER_DIFFERENCES, result.failed

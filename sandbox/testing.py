"""Run a solution against tests in the sandbox and get one result per test.

Two shapes of tests cover the common code datasets:

- **assertions** (HumanEval, MBPP): Python source whose asserting statements are the test cases. With an
  ``entry_point`` the source defines ``check(candidate)`` (HumanEval); each statement of ``check`` that
  contains an ``assert`` becomes one case. Without it, each top-level asserting statement is one case and the
  names the tests call without defining them are the solution's functions (MBPP). A case that raises
  counts as failed and the next one still runs.
- **stdin/stdout** (CodeContests, APPS): one sandboxed run per case; outputs are compared line by line
  ignoring trailing whitespace and trailing blank lines. The solution runs alone; only its stdout is compared.

The solution never shares a process with the assertions. It runs in a sandbox job of its own that only
answers calls with plain values (``_solution_runner.py``); the assertions run in warm worker processes on
this machine that run nothing else (``_test_evaluator.py``, ``_evaluator_pool.py``), where the solution's
functions are stand-ins returning those values decoded afresh into builtin objects (``_values.py``). Each
case's verdict is decided there, by the dataset's own assertions: a solution chooses what its functions
return and nothing else. Threat model, and a test per attack: docs/sandbox.md ("Code verdicts").
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib.util
import json
import marshal
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envgym.sandbox import ExecResult, get_backend
from envgym.sandbox._assert_plan import AssertPlan, plan_assert_tests
from envgym.sandbox._evaluator_pool import EvaluatorPool
from envgym.sandbox.result import make_request

MAX_ROUNDS = 8  # solution runs per grading: more means the tests chain calls on the solution's answers
EVALUATOR_MEMORY_MB = 1024  # a tests' worker holds at most the solution's answers (1 MiB of JSON) decoded
# The program of every grading process is this loader; the modules it runs come on the first line of its
# stdin: compiled here once where that process runs this very interpreter (the local backend, the tests'
# workers), since compiling them in each job would cost more than the rest of the job; as source elsewhere.
_LOADER = """import _frozen_importlib_external, json, marshal, sys, types
for _name, _magic, _code, _source in json.loads(sys.stdin.readline()):
    if _magic == _frozen_importlib_external.MAGIC_NUMBER.hex():
        _code = marshal.loads(bytes.fromhex(_code))
    else:
        _code = compile(_source, _name + ".py", "exec")
    if _name == "__main__":
        exec(_code)
    else:
        sys.modules[_name] = types.ModuleType(_name)
        exec(_code, vars(sys.modules[_name]))
"""


def _modules_line(*files: str, compiled: bool) -> str:
    """The loader's first stdin line for these files of this folder (the last one is ``__main__``)."""
    modules = []
    for index, file in enumerate(files):
        source = (Path(__file__).parent / file).read_text()
        name = "__main__" if index == len(files) - 1 else file.removesuffix(".py")
        if compiled:
            code = marshal.dumps(compile(source, file, "exec", optimize=2)).hex()
            modules.append([name, importlib.util.MAGIC_NUMBER.hex(), code, ""])
        else:
            modules.append([name, "", "", source])
    return json.dumps(modules) + "\n"


_RUNNER = {
    compiled: _modules_line("_values.py", "_solution_runner.py", compiled=compiled) for compiled in (True, False)
}
_EVALUATOR = _modules_line("_values.py", "_test_evaluator.py", compiled=True)
_evaluators: tuple[int, EvaluatorPool] | None = None  # (the process that started them, the pool)
_evaluators_lock = threading.Lock()


@dataclasses.dataclass
class TestCaseResult:
    name: str
    passed: bool
    message: str = ""


@dataclasses.dataclass
class TestReport:
    """Per-case results of one solution. ``execution`` is the solution's (last) run; ``infra_error`` is set when
    the sandbox or the tests' side failed (not the solution)."""

    cases: list[TestCaseResult]
    execution: ExecResult | None = None
    infra_error: str | None = None

    @property
    def passed(self) -> int:
        return sum(case.passed for case in self.cases)

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total

    @property
    def pass_fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def failures(self, limit: int = 3) -> list[TestCaseResult]:
        return [case for case in self.cases if not case.passed][:limit]


def run_assert_tests(
    solution: str,
    tests: str,
    *,
    entry_point: str | None = None,
    setup: str = "",
    timeout: float = 10.0,
    memory_mb: int = 512,
    backend: Any = None,
) -> TestReport:
    """Grade ``solution`` on assertion ``tests``; the solution and the tests never share a process.

    ``setup`` is trusted code the tests may use, run before them on the tests' side (HumanEval's prompt: its
    helpers such as ``poly``); code the tests need must come from there, not from the solution. ``timeout``
    and ``memory_mb`` bound each run of the solution (``backend``); the tests run in warm worker processes
    on this machine (``_evaluator_pool.py``), with a deadline of ``2 * timeout + 1`` seconds.

    Rounds: the solution answers the calls known so far, then the tests run on those answers; calls whose
    arguments are only known then (computed from earlier answers, or in loops) send the solution back for a
    run with them added. Most checks need one round. ValueError when the tests cannot be graded.
    """
    plan = plan_assert_tests(tests, entry_point, setup)
    runner = get_backend(backend)
    program = _RUNNER[getattr(runner, "name", "") == "local"]
    calls = list(plan.first_calls)
    for _ in range(MAX_ROUNDS):
        execution = runner.submit(
            make_request(
                _LOADER,
                stdin=program + json.dumps({"solution": solution, "calls": calls}),
                timeout=timeout,
                memory_mb=memory_mb,
            )
        ).result()
        if execution.status == "infra_error":
            return _infra_report(plan, execution, execution.stderr)
        load_failure, answers, unanswered = _read_solution_run(execution)
        if load_failure is not None:
            return TestReport([TestCaseResult(name, False, load_failure) for name in plan.case_names], execution)
        request = {
            "setup": plan.setup_code,
            "tests": plan.tests_code,
            "entry_point": entry_point,
            "functions": plan.functions,
            "modules": plan.modules,
            "calls": calls,
            "unanswered": unanswered,
            "answers": answers,
        }
        evaluation = _Evaluation.read(*evaluator_pool().evaluate(request, 2 * timeout + 1))
        if evaluation.infra_error is not None:
            return _infra_report(plan, execution, evaluation.infra_error)
        if not evaluation.new_calls:
            return TestReport(evaluation.cases(plan), execution)
        calls = calls + evaluation.new_calls
    undecided = f"the tests needed new answers from the solution more than {MAX_ROUNDS} times in a row"
    return TestReport(evaluation.cases(plan, undecided), execution)


def evaluator_pool() -> EvaluatorPool:
    """The warm workers that run the tests' side of assertion grading (started on first use, per process)."""
    global _evaluators
    with _evaluators_lock:
        if _evaluators is None or _evaluators[0] != os.getpid():  # a forked child starts its own
            pool = EvaluatorPool(_LOADER, _EVALUATOR, memory_mb=EVALUATOR_MEMORY_MB)
            atexit.register(pool.close)
            _evaluators = (os.getpid(), pool)
        return _evaluators[1]


def _read_solution_run(execution: ExecResult) -> tuple[str | None, str, str]:
    """``(why it did not load or None, its answers, why a call without an answer has none)``."""
    first, _, answers = execution.stdout.partition("\n")
    if first == '["loaded"]':
        if execution.status == "ok":
            return None, answers, f"the solution's process exited (code {execution.exit_code}) before answering"
        return None, answers, f"the solution's process stopped before answering ({_describe_failure(execution)})"
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        record = None
    if isinstance(record, list) and len(record) == 2 and record[0] == "load_error" and isinstance(record[1], str):
        return f"the solution failed to load: {_clip(record[1], 300)}", "", ""
    if execution.status == "ok":
        return "the solution's process ended without saying it loaded (did it rewrite its own output?)", "", ""
    return f"the solution did not run: {_describe_failure(execution)}", "", ""


@dataclasses.dataclass
class _Evaluation:
    """What the tests' process reported: outcome per case, calls it still needs, why it stopped early."""

    outcomes: dict[int, tuple[bool | None, str]]
    new_calls: list[list]
    abort: str | None = None
    infra_error: str | None = None

    @classmethod
    def read(cls, records: list[list], failure: str | None) -> _Evaluation:
        outcomes = {}
        for record in records:
            if record[0] == "case":
                outcomes[record[1]] = (record[2], record[3])
            elif record[0] == "end":
                return cls(outcomes, record[1], record[2])
            elif record[0] == "setup_error":
                return cls(outcomes, [], infra_error=f"the tests' setup failed: {record[1]}")
        if failure == "timeout":  # the solution's answers can make the tests run long
            return cls(outcomes, [], "checking the solution's answers ran past the deadline")
        return cls(outcomes, [], infra_error=failure)

    def cases(self, plan: AssertPlan, undecided: str = "") -> list[TestCaseResult]:
        """Every case of ``plan``: those without a final outcome fail, saying why."""
        results = []
        for index, name in enumerate(plan.case_names):
            passed, message = self.outcomes.get(index, (None, ""))
            if passed is None:
                message = undecided or (
                    "not run: the tests stopped before it" + (f" ({self.abort})" if self.abort else "")
                )
            results.append(TestCaseResult(name, bool(passed), message))
        return results


def _infra_report(plan: AssertPlan, execution: ExecResult, why: str) -> TestReport:
    return TestReport([TestCaseResult(name, False, "sandbox failure") for name in plan.case_names], execution, why)


def run_io_tests(
    solution: str,
    cases: Sequence[Mapping[str, str]],
    *,
    language: str = "python",
    timeout: float = 5.0,
    memory_mb: int = 512,
    backend: Any = None,
) -> TestReport:
    """Run ``solution`` once per ``{"input": ..., "output": ...}`` case and compare its stdout."""
    chosen = get_backend(backend)
    futures = [
        chosen.submit(
            make_request(solution, language=language, stdin=case["input"], timeout=timeout, memory_mb=memory_mb)
        )
        for case in cases
    ]
    results, execution = [], None
    for index, (case, future) in enumerate(zip(cases, futures)):
        result = future.result()
        execution = execution or result
        if result.status == "infra_error":
            return TestReport(
                [TestCaseResult(f"case {i}", False, "sandbox failure") for i in range(len(cases))],
                result,
                result.stderr,
            )
        if result.status != "ok":
            results.append(TestCaseResult(f"case {index}", False, _describe_failure(result)))
        elif _same_output(result.stdout, case["output"]):
            results.append(TestCaseResult(f"case {index}", True))
        else:
            message = (
                f"input {_clip(case['input'])!r}: expected {_clip(case['output'])!r}, got {_clip(result.stdout)!r}"
            )
            results.append(TestCaseResult(f"case {index}", False, message))
    return TestReport(results, execution)


def _describe_failure(result: ExecResult) -> str:
    if result.status == "ok":
        return "the program ended before this test ran"
    tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
    return f"{result.status}" + (f": {_clip(tail[0], 200)}" if tail else "")


def _same_output(got: str, expected: str) -> bool:
    def lines(text: str) -> list[str]:
        out = [line.rstrip() for line in text.strip("\n").splitlines()]
        while out and not out[-1]:
            out.pop()
        return out

    return lines(got) == lines(expected)


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

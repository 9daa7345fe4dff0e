"""envgym.sandbox.testing: per-case verdicts decided apart from the solution, from the values it returns."""

import pytest

from envgym.sandbox.testing import MAX_ROUNDS, run_assert_tests, run_io_tests


def _check(solution, body, local_backend, **kwargs):
    tests = "def check(candidate):\n" + "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    return run_assert_tests(solution, tests, entry_point="f", backend=local_backend, **kwargs)


def _outcomes(report):
    return [case.passed for case in report.cases]


def test_a_bool_is_not_an_int_where_the_tests_ask_for_identity(local_backend):
    body = "assert candidate(1) is True"
    assert _outcomes(_check("def f(x):\n    return 1", body, local_backend)) == [False]
    assert _outcomes(_check("def f(x):\n    return x == 1", body, local_backend)) == [True]


def test_a_list_is_not_a_tuple(local_backend):
    body = "assert candidate() == (1, 2)\nassert candidate() != [1, 2]"
    assert _outcomes(_check("def f():\n    return [1, 2]", body, local_backend)) == [False, False]
    assert _outcomes(_check("def f():\n    return (1, 2)", body, local_backend)) == [True, True]


def test_floats_compare_with_the_tolerance_the_tests_use(local_backend):
    body = "assert abs(candidate(1.33) - 0.33) < 1e-6\nassert candidate(1.33) == 0.33"
    report = _check("def f(x):\n    return x - 1", body, local_backend)
    assert _outcomes(report) == [True, False]  # 1.33 - 1 is 0.33000000000000007


def test_top_level_asserts_call_the_solutions_functions_by_name(local_backend):
    tests = (
        "assert add(1, 2) == 3\n"
        "assert math.isclose(half(1), 0.5)\n"  # math: imported for the tests, as the solution had it
        "assert missing(1) == 1\n"
    )
    report = run_assert_tests(
        "import math\ndef add(a, b):\n    return a + b\ndef half(x):\n    return x / 2", tests, backend=local_backend
    )
    assert _outcomes(report) == [True, True, False]
    assert "defines no function 'missing'" in report.cases[2].message


def test_calls_run_in_order_in_one_process_so_state_carries_over(local_backend):
    solution = "count = 0\ndef f():\n    global count\n    count += 1\n    return count"
    assert _outcomes(_check(solution, "assert candidate() == 1\nassert candidate() == 2", local_backend)) == [
        True,
        True,
    ]


def test_arguments_computed_from_earlier_answers_are_asked_in_later_rounds(local_backend):
    body = """
import random
x = candidate(1)
assert candidate(x) == 3
for _ in range(20):
    n = random.randint(0, 100)
    assert candidate(candidate(n)) == n + 2
"""
    assert _outcomes(_check("def f(x):\n    return x + 1", body, local_backend)) == [True, True]


def test_tests_that_keep_needing_new_answers_fail_after_the_round_limit(local_backend):
    body = "x = 0\nfor _ in range(100):\n    x = candidate(x)\nassert x == 100"
    report = _check("def f(x):\n    return x + 1", body, local_backend)
    assert _outcomes(report) == [False] and f"more than {MAX_ROUNDS} times" in report.cases[0].message


def test_the_solution_mutating_its_arguments_does_not_change_the_tests_values(local_backend):
    body = "items = [3, 1, 2]\nassert candidate(items) is None\nassert items == [3, 1, 2]"
    assert _outcomes(_check("def f(items):\n    items.sort()", body, local_backend)) == [True, True]


def test_the_entry_point_named_in_the_tests_is_the_solution(local_backend):
    body = "assert candidate(2) == f(2)\nassert f(2) == 4"  # HumanEval/33 compares candidate with itself
    report = _check("def f(x):\n    return x * 2", body, local_backend, setup="def f(x):\n    'stub'\n")
    assert _outcomes(report) == [True, True]


def test_helpers_come_from_the_trusted_setup_not_from_the_solution(local_backend):
    body = "assert reference(candidate(3)) == 0"
    setup = "def reference(value):\n    return value - 6\n"
    solution = "def reference(value):\n    return 0\ndef f(x):\n    return 5"  # its own reference is never used
    assert _outcomes(_check(solution, body, local_backend, setup=setup)) == [False]


def test_the_solutions_exceptions_reach_the_tests_as_the_same_builtin_type(local_backend):
    body = "try:\n    candidate(-1)\nexcept ValueError:\n    pass\nelse:\n    assert False"
    solution = "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x"
    assert _outcomes(_check(solution, body, local_backend)) == [True]


def test_an_argument_the_solution_cannot_receive_fails_that_case_saying_why(local_backend):
    report = _check("def f(g):\n    return 1", "assert candidate(lambda: 0) == 1\nassert True", local_backend)
    assert _outcomes(report) == [False, True] and "cannot pass a builtins.function" in report.cases[0].message


def test_a_call_that_times_out_fails_its_case_and_the_later_ones_earlier_ones_keep_their_verdict(local_backend):
    solution = "def f(x):\n    while x == 3:\n        pass\n    return x"
    body = "assert candidate(1) == 1\nassert candidate(3) == 3\nassert candidate(2) == 2"
    report = _check(solution, body, local_backend, timeout=1.0)
    assert _outcomes(report) == [True, False, False]
    assert "timeout" in report.cases[1].message and report.execution.status == "timeout"


def test_a_call_over_the_memory_limit_fails_its_case(local_backend):
    solution = "def f(x):\n    return len(bytearray(x))"
    report = _check(
        solution, "assert candidate(10) == 10\nassert candidate(2**34) == 2**34", local_backend, memory_mb=256
    )
    assert _outcomes(report) == [True, False] and "MemoryError" in report.cases[1].message


def test_prints_from_the_solution_and_the_tests_do_not_disturb_the_verdicts(local_backend):
    solution = "print('[\"loaded\"]')\ndef f(x):\n    print('[\"value\", 0]' * 1000)\n    return x"
    body = "print('[\"end\", [], null]')\nassert candidate(4) == 4"
    assert _outcomes(_check(solution, body, local_backend)) == [True]


def test_a_solution_that_does_not_load_fails_every_case(local_backend):
    report = _check("def f(x) return x", "assert True\nassert candidate(1) == 1", local_backend)
    assert _outcomes(report) == [False, False] and "failed to load: SyntaxError" in report.cases[0].message


def test_values_that_make_the_tests_run_forever_fail_instead_of_hanging(local_backend):
    body = "for _ in range(candidate()):\n    pass\nassert True"
    report = _check("def f():\n    return 10**15", body, local_backend, timeout=1.0)
    assert _outcomes(report) == [False] and report.infra_error is None
    assert "deadline" in report.cases[0].message
    assert _outcomes(_check("def f():\n    return 3", body, local_backend)) == [True]  # the pool recovered


def test_a_failing_setup_is_an_infra_error_not_a_wrong_answer(local_backend):
    report = _check("def f():\n    return 1", "assert candidate() == 1", local_backend, setup="1 / 0")
    assert report.infra_error is not None and "ZeroDivisionError" in report.infra_error


def test_a_sandbox_failure_is_an_infra_error():
    from envgym.sandbox.remote import RemoteBackend

    unreachable = RemoteBackend("http://127.0.0.1:9")
    report = run_assert_tests(
        "def f():\n    return 1",
        "def check(candidate):\n    assert candidate() == 1",
        entry_point="f",
        backend=unreachable,
    )
    unreachable.close()
    assert report.infra_error is not None and report.cases[0].passed is False


@pytest.mark.parametrize(
    "tests, entry_point, message",
    [
        ("assert (", None, "not valid Python"),
        ("x = 1", None, "no assert"),
        ("assert f(1) == 1", "f", "must define check"),
        ("def check(candidate):\n    assert True", "not an identifier", "identifier"),
    ],
)
def test_tests_that_cannot_be_graded_are_refused_with_what_is_wrong(tests, entry_point, message):
    with pytest.raises(ValueError, match=message):
        run_assert_tests("", tests, entry_point=entry_point)


def test_stdin_stdout_cases_compare_only_what_the_solution_prints(local_backend):
    cases = [{"input": "2 3\n", "output": "5\n"}, {"input": "1 1\n", "output": "2\n"}]
    report = run_io_tests(
        "import sys\na, b = map(int, input().split())\nprint(a + b)\nsys.stderr.write('5\\n2\\n')",
        cases,
        backend=local_backend,
    )
    assert _outcomes(report) == [True, True]
    forged = run_io_tests("print('5')", cases, backend=local_backend)
    assert _outcomes(forged) == [True, False]

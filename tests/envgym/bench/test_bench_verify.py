"""`envgym bench verify` prints one JSON line with both verifiers' accuracy and speed, on the labelled pairs and
on Math-Verify's public cases."""

import json

import pytest
from typer.testing import CliRunner


@pytest.mark.slow
def test_bench_verify_reports_ours_and_math_verify_side_by_side():
    pytest.importorskip("math_verify")  # the peers extra
    from envgym.cli.app import app

    result = CliRunner().invoke(app, ["bench", "verify", "--quick", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["pairs"] >= 200 and report["ours"]["accuracy"] == 1.0
    assert report["ours"]["pairs_per_s"] > 0 and report["math_verify"]["pairs_per_s"] > 0
    assert report["speedup"] == report["ours"]["pairs_per_s"] / report["math_verify"]["pairs_per_s"]
    suite = report["math_verify_suite"]
    assert suite["ours"]["agreement"] >= 0.97 and suite["ours"]["false_positives"] == 0
    assert suite["speedup"] == suite["ours"]["cases_per_s"] / suite["math_verify"]["cases_per_s"]


def test_the_outside_suite_report_puts_math_verify_beside_ours_from_the_same_run():
    from envgym.bench.verify import suite_report
    from envgym.verifiers.math_verify_suite import load_cases

    cases = load_cases()[:12]
    report = suite_report(cases, passes=1)
    assert report["cases"] == 12
    for verifier in ("ours", "math_verify"):
        numbers = report[verifier]
        assert 0 <= numbers["agreement"] <= 1 and numbers["cases_per_s"] > 0 and numbers["slowest_case_s"] > 0
        assert numbers["false_positives"] == sum(1 for d in numbers["disagreements"] if d["got"])
    assert report["speedup"] == report["ours"]["cases_per_s"] / report["math_verify"]["cases_per_s"]

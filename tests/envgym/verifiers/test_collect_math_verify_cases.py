"""scripts/collect_math_verify_cases.py: how the outside suite is produced from Math-Verify's test files."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[3] / "scripts" / "collect_math_verify_cases.py"

TEST_ALL = """
import math
import pytest

def compare_strings(gold, pred, match_types=["latex", "expr"], precision=6, strict=True, allow_set_relation_comp=False):
    raise AssertionError("the collector must never run this")

@pytest.mark.parametrize("gold,pred,expected", [("$1$", "1", 1), (f"{math.sqrt(4):.1f}", "2", 1)])
def test_numbers(gold, pred, expected):
    assert compare_strings(gold, pred, match_types=["expr"]) == expected

@pytest.mark.parametrize("gold, pred, expected, precision", [("$1/3$", "0.33", 1, 2)])
def test_precision_per_case(gold, pred, expected, precision):
    assert compare_strings(gold, pred, precision=precision) == expected

def test_single_check():
    assert compare_strings("$x$", "$y$", strict=False) == 1

def test_parse_only():
    assert parse("1") == [1]
"""

TEST_YUJIANLL = """
import pytest
from math_verify import parse, verify

@pytest.mark.parametrize("gold, pred, result", [("$12:00$", "$1:00$", 0)])
def test_string_extraction(gold, pred, result):
    assert int(verify(parse(gold), parse(pred))) == result
"""


def _collect(tmp_path: Path) -> list[dict]:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_all.py").write_text(TEST_ALL)
    (tests / "test_yujianll.py").write_text(TEST_YUJIANLL)
    out = tmp_path / "cases.jsonl"
    subprocess.run([sys.executable, str(SCRIPT), str(tests), "--out", str(out)], check=True, capture_output=True)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_every_gold_pred_label_check_becomes_one_line_with_its_options_and_origin(tmp_path):
    rows = _collect(tmp_path)
    assert [(r["id"], r["gold"], r["pred"], r["expected"]) for r in rows] == [
        ("test_all.py::test_numbers[0]", "$1$", "1", True),
        ("test_all.py::test_numbers[1]", "2.0", "2", True),
        ("test_all.py::test_precision_per_case[0]", "$1/3$", "0.33", True),
        ("test_all.py::test_single_check[0]", "$x$", "$y$", True),
        ("test_yujianll.py::test_string_extraction[0]", "$12:00$", "$1:00$", False),
    ]
    assert rows[0]["options"]["match_types"] == ["expr"]
    assert rows[2]["options"]["precision"] == 2 and rows[3]["options"]["strict"] is False
    assert rows[4]["helper"] == "verify_parse" and rows[4]["options"] == {}


def test_a_folder_without_math_verify_tests_is_refused(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path), "--out", str(tmp_path / "x.jsonl")], capture_output=True, text=True
    )
    assert result.returncode != 0 and "test_all.py" in result.stderr

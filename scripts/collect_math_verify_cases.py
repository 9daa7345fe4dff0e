"""Collect Math-Verify's public regression cases into envgym's outside test suite for the math verifier.

Math-Verify (https://github.com/huggingface/Math-Verify, Apache-2.0) keeps its regression cases, drawn from
real model outputs, as pytest parametrizations in ``tests/``. This script reads those files *without running
them* (``ast`` + ``ast.literal_eval``) and writes every case that checks a (gold, prediction, expected label)
triple through ``verify(parse(gold), parse(pred))`` or the tests' helper ``compare_strings`` (which calls the
same two functions with some options) as one JSON line:

    {"id", "source", "test", "gold", "pred", "expected", "helper", "options"}

``options`` are the keyword arguments the test passes to ``compare_strings`` (``match_types``, ``precision``,
``strict``, ``allow_set_relation_comp``), resolved per case, so that math-verify can be re-run on each case
exactly as its own test does. Tests that check something else (parse-only configs, timeouts, ``sympy_expr_eq``
on hand-built sympy objects, string extraction) are skipped and listed on stderr.

How the committed file was produced (release 0.9.0, the version envgym pins through its dependencies):

    pip download math-verify==0.9.0 --no-binary :all: --no-deps -d /tmp/mv
    tar xzf /tmp/mv/math_verify-0.9.0.tar.gz -C /tmp/mv
    python scripts/collect_math_verify_cases.py /tmp/mv/math_verify-0.9.0/tests \\
        --out envgym/verifiers/math_verify_cases.jsonl
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
from pathlib import Path
from typing import Any

HELPER_DEFAULTS = {"match_types": ["latex", "expr"], "precision": 6, "strict": True, "allow_set_relation_comp": False}
"""``compare_strings``'s own defaults in Math-Verify's tests/test_all.py."""


def _value(node: ast.expr) -> Any:
    """A literal; the suite's one f-string (``f"{math.sqrt(17):.15f}"``) is evaluated with only ``math`` in
    scope and no builtins, so nothing else in the file can run."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(element) for element in node.elts]
    if isinstance(node, ast.JoinedStr):
        return eval(compile(ast.Expression(node), "<case>", "eval"), {"__builtins__": {}, "math": math})
    return ast.literal_eval(node)


def _parametrize(function: ast.FunctionDef) -> list[dict[str, Any]]:
    """The cases of ``@pytest.mark.parametrize("a, b", [...])`` as dicts (one case without a decorator)."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.parametrize":
            names = [name.strip() for name in _value(decorator.args[0]).split(",")]
            return [dict(zip(names, row)) for row in _value(decorator.args[1])]
    return [{}]


def _checks(function: ast.FunctionDef) -> list[tuple[str, ast.Call, ast.expr]]:
    """``(helper, call, expected)`` for each ``assert HELPER(...) == expected`` in the function body, where
    HELPER is ``compare_strings(gold, pred, ...)`` or ``int(verify(parse(gold), parse(pred)))``."""
    found = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare)):
            continue
        compare = node.test
        if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
            continue
        call = compare.left
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "int" and call.args:
            call = call.args[0]  # int(verify(...)) == result
        if not isinstance(call, ast.Call):
            continue
        name = ast.unparse(call.func)
        if name == "compare_strings":
            found.append(("compare_strings", call, compare.comparators[0]))
        elif name == "verify" and all(ast.unparse(arg).startswith("parse(") for arg in call.args[:2]):
            found.append(("verify_parse", call, compare.comparators[0]))
    return found


def _resolve(node: ast.expr, case: dict[str, Any]) -> Any:
    """A call argument: a parametrized name takes the case's value, anything else must be a literal."""
    if isinstance(node, ast.Name) and node.id in case:
        return case[node.id]
    return _value(node)


def _cases_of(path: Path, function: ast.FunctionDef) -> list[dict[str, Any]]:
    checks = _checks(function)
    if not checks:
        return []  # read no further: its parametrization may hold objects, not literals
    rows = []
    for case in _parametrize(function):
        for helper, call, expected_node in checks:
            if helper == "verify_parse":
                gold, pred = (_resolve(arg.args[0], case) for arg in call.args[:2])
                options: dict[str, Any] = {}
            else:
                gold, pred = (_resolve(arg, case) for arg in call.args[:2])
                options = dict(HELPER_DEFAULTS)
                options.update({kw.arg: _resolve(kw.value, case) for kw in call.keywords})
            rows.append(
                {
                    "source": f"tests/{path.name}",
                    "test": function.name,
                    "gold": gold,
                    "pred": pred,
                    "expected": bool(_resolve(expected_node, case)),
                    "helper": helper,
                    "options": options,
                }
            )
    return rows


def collect(tests_dir: Path) -> list[dict[str, Any]]:
    """Every (gold, pred, expected) check in ``tests_dir/test_*.py``, in file and source order, with an
    ``id`` of the form ``file::test[index]``."""
    rows: list[dict[str, Any]] = []
    for path in sorted(tests_dir.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in (node for node in tree.body if isinstance(node, ast.FunctionDef)):
            if not function.name.startswith("test_"):
                continue
            found = _cases_of(path, function)
            if not found:
                print(f"skipped {path.name}::{function.name} (not a gold/pred/label check)", file=sys.stderr)
            for index, row in enumerate(found):
                rows.append({"id": f"{path.name}::{function.name}[{index}]", **row})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests_dir", type=Path, help="the tests/ folder of a Math-Verify source tree")
    parser.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    args = parser.parse_args()
    if not (args.tests_dir / "test_all.py").is_file():
        parser.error(f"{args.tests_dir} has no test_all.py; pass the tests/ folder of a Math-Verify source tree")
    rows = collect(args.tests_dir)
    with args.out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} cases to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

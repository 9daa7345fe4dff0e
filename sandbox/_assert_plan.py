"""How assertion tests are prepared for the trusted side (see ``testing.run_assert_tests``).

From the tests' source, once per distinct tests (cached): the cases (each asserting statement of
``check(candidate)``, or of the module without an entry point), the code the evaluator runs, compiled here
(each case wrapped so that it reports its own outcome, each nested ``assert`` guarded so that one unanswered
call ends only that assertion), the names that stand for the solution's functions, the standard-library
modules the tests use without importing them, and the calls that can be known before anything runs (those of
top-level asserts whose arguments are constants), so that most checks need one solution run and one
evaluation.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import marshal
import operator
import sys
from typing import Any

from envgym.sandbox._values import Unrepresentable, encode_call

_NOT_EVALUATED_FIRST = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


@dataclasses.dataclass(frozen=True)
class AssertPlan:
    """What the host needs to grade a solution against one set of assertion tests."""

    case_names: tuple[str, ...]
    setup_code: str  # the setup, compiled and marshalled (hex): the evaluator's Python is ours
    tests_code: str  # the instrumented tests, likewise
    functions: tuple[str, ...]  # names the evaluator binds to stand-ins for the solution's functions
    modules: tuple[str, ...]  # standard-library modules the evaluator imports for the tests
    first_calls: tuple[list, ...]  # encoded calls known before anything runs, in evaluation order


@functools.lru_cache(maxsize=1024)
def plan_assert_tests(tests: str, entry_point: str | None, setup: str) -> AssertPlan:
    """The plan for ``tests`` (raises ValueError with what is wrong when they cannot be graded)."""
    module = _parse(tests, "tests")
    setup_module = _parse(setup, "setup")
    if entry_point is not None:
        if not entry_point.isidentifier():
            raise ValueError(f"entry_point must be a Python identifier, got {entry_point!r}")
        checks = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
        if not checks or not checks[-1].args.args:
            raise ValueError("with entry_point, the tests must define check(candidate) (HumanEval shape)")
    modules, free_functions = _free_names(module, setup_module)
    if entry_point is not None:
        # only the entry point stands for the solution: a helper the tests need must come from the setup
        body_owner, functions = checks[-1], (entry_point,)
        targets = {body_owner.args.args[0].arg: entry_point, entry_point: entry_point}
    else:
        body_owner, functions = module, free_functions
        targets = {name: name for name in functions}
    names: list[str] = []
    lines = tests.split("\n")
    first_calls: list[list] = []
    new_body: list[ast.stmt] = []
    for statement in body_owner.body:
        if not any(isinstance(node, ast.Assert) for node in ast.walk(statement)):
            new_body.append(statement)
            continue
        if isinstance(statement, ast.Assert):
            _constant_calls(statement.test, targets, first_calls)
        else:
            statement = _GuardNestedAsserts().visit(statement)
        new_body.append(_case_wrapper(statement, len(names)))
        names.append(f"line {statement.lineno}: {_clip(_source_of(lines, statement), 80)}")
    if not names:
        raise ValueError("the tests contain no assert statement")
    body_owner.body = new_body
    return AssertPlan(
        tuple(names),
        _marshalled(setup_module, "setup.py"),
        _marshalled(module, "tests.py"),
        functions,
        modules,
        tuple(first_calls),
    )


def _marshalled(module: ast.Module, filename: str) -> str:
    # optimize=0: asserts are kept even when the host runs with -O (they are the tests)
    return marshal.dumps(compile(module, filename, "exec", optimize=0)).hex()


def _source_of(lines: list[str], node: ast.stmt) -> str:
    """``ast.get_source_segment`` without splitting the whole source again for every node."""
    selected = [line.encode() for line in lines[node.lineno - 1 : node.end_lineno]]
    selected[-1] = selected[-1][: node.end_col_offset]
    selected[0] = selected[0][node.col_offset :]
    return b"\n".join(selected).decode(errors="replace")


def _parse(source: str, what: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as error:
        raise ValueError(f"the {what} are not valid Python: {error}") from None


def _case_wrapper(statement: ast.stmt, index: int) -> ast.Try:
    """``statement`` inside ``try`` that reports the case's outcome: pending (an answer is missing), failed
    (with what was raised) or passed. The evaluator defines the ``__envgym_*`` names."""
    at = _position(statement)

    def report(*arguments: ast.expr) -> list[ast.stmt]:
        return [ast.Expr(_call(at, "__envgym_case", ast.Constant(index, **at), *arguments), **at)]

    described = _call(at, "__envgym_describe", ast.Name("__envgym_error", ast.Load(), **at))
    handlers = [
        ast.ExceptHandler(ast.Name("__envgym_Pending", ast.Load(), **at), None, report(ast.Constant(None, **at)), **at),
        ast.ExceptHandler(
            ast.Name("BaseException", ast.Load(), **at),
            "__envgym_error",
            report(ast.Constant(False, **at), described),
            **at,
        ),
    ]
    return ast.Try([statement], handlers, report(ast.Constant(True, **at)), [], **at)


class _GuardNestedAsserts(ast.NodeTransformer):
    """``assert`` inside loops and blocks: an unanswered call ends that assertion, not the whole case, so
    one evaluation collects the calls of every iteration."""

    def visit_Assert(self, node: ast.Assert) -> ast.Try:
        at = _position(node)
        handler = ast.ExceptHandler(ast.Name("__envgym_Pending", ast.Load(), **at), None, [ast.Pass(**at)], **at)
        return ast.Try([node], [handler], [], [], **at)


def _position(node: ast.stmt) -> dict[str, int]:
    return {
        "lineno": node.lineno,
        "col_offset": node.col_offset,
        "end_lineno": node.end_lineno,
        "end_col_offset": node.end_col_offset,
    }


def _call(at: dict[str, int], function: str, *arguments: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(function, ast.Load(), **at), list(arguments), [], **at)


def _free_names(tests: ast.Module, setup: ast.Module) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names the tests use but neither they, ``setup`` nor builtins define: ``(modules, functions)``.

    A standard-library module name used only as ``name.attribute`` is a module (the tests relied on the
    solution importing it); any other free name is a function of the solution.
    """
    bound = set(dir(builtins)) | _top_level_names(setup)
    used: dict[str, bool] = {}  # name -> only ever used as name.attribute
    attribute_bases: set[int] = set()  # filled before their names are reached: the walk is breadth-first
    for node in ast.walk(tests):
        if isinstance(node, ast.Attribute):
            attribute_bases.add(id(node.value))
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                used[node.id] = used.get(node.id, True) and id(node) in attribute_bases
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    free = sorted(name for name in used if name not in bound)
    modules = tuple(name for name in free if used[name] and name in sys.stdlib_module_names)
    return modules, tuple(name for name in free if name not in modules)


def _top_level_names(module: ast.Module) -> set[str]:
    names = set()
    for statement in module.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        else:
            names.update(
                node.id
                for node in ast.walk(statement)
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
            )
    return names


def _constant_calls(node: ast.AST, targets: dict[str, str], found: list[list]) -> None:
    """Append the calls of ``targets`` with constant arguments that evaluating ``node`` surely makes,
    in evaluation order (not those in lambdas, comprehensions, or branches that may not run)."""
    if isinstance(node, _NOT_EVALUATED_FIRST):
        return
    if isinstance(node, ast.BoolOp):
        _constant_calls(node.values[0], targets, found)
        return
    if isinstance(node, ast.IfExp):
        _constant_calls(node.test, targets, found)
        return
    for child in ast.iter_child_nodes(node):
        _constant_calls(child, targets, found)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in targets:
        try:
            args = [_constant(argument) for argument in node.args]
            kwargs = {keyword.arg: _constant(keyword.value) for keyword in node.keywords}
            if None in kwargs:
                return  # **mapping
            found.append(encode_call(targets[node.func.id], args, kwargs))
        except (ValueError, TypeError, ArithmeticError, Unrepresentable):
            return  # not a constant: the evaluator will ask for it


def _constant(node: ast.AST) -> Any:
    """The value of a constant expression: literals, containers of them, and small arithmetic on numbers
    and strings (``3 * 19``, ``'ab' + 'c'``); raises ValueError for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_constant(item) for item in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_constant(key): _constant(value) for key, value in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _constant(node.operand)
        if _is_number(operand):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _constant(node.left), _constant(node.right)
        numbers = _is_number(left) and _is_number(right)
        if numbers and not (isinstance(node.op, ast.Pow) and abs(right) > 64):
            return _ARITHMETIC[type(node.op)](left, right)
        if isinstance(node.op, ast.Add) and type(left) is type(right) and type(left) in (str, list, tuple):
            return left + right
    raise ValueError("not a constant expression")


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

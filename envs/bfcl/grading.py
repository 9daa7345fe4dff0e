"""Grading a single-turn BFCL answer: envgym's call verifier with BFCL's rules.

AST categories: the calls must match the gold calls in any order (:func:`envgym.verifiers.calls.match_calls`
with :data:`~envgym.verifiers.calls.BFCL_RULES`); irrelevance: no call; relevance: some call. Java and JavaScript
arguments are source text (BFCL shows every parameter of those categories as a string); they are turned into
values by BFCL's own converters (``bfcl_eval.eval_checker.ast_eval.type_convertor``: a Java ``long`` is
``"5L"``, a JavaScript ``Bigint`` ``"5n"``) before the same matcher compares them, so the literal syntax is
BFCL's and the matching is ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envgym.envs.bfcl.data import language
from envgym.tools import ToolCall
from envgym.verifiers.calls import (
    BFCL_RULES,
    GoldCall,
    MatchResult,
    MatchRules,
    expect_call,
    expect_no_call,
    function_schema,
    match_calls,
)
from envgym.verifiers.calls.match import call_name_and_arguments, failure


def grade_calls(
    category: str,
    functions: Sequence[dict[str, Any]],
    gold: Sequence[dict[str, Any]] | None,
    calls: Sequence[Any],
    *,
    rules: MatchRules = BFCL_RULES,
) -> MatchResult:
    """Grade ``calls`` for one entry: ``functions`` are the entry's function docs *without* language hints (the
    types BFCL's checker uses), ``gold`` its ``ground_truth`` (``None`` for irrelevance and relevance)."""
    if "irrelevance" in category:
        return expect_no_call(calls)
    if "relevance" in category:
        return expect_call(calls)
    if gold is None:
        raise ValueError(f"category {category!r} needs gold calls")
    schemas = {doc["name"]: function_schema(doc, dialect="bfcl") for doc in functions}
    syntax = language(category)
    if syntax != "python":
        converted = []
        for call in calls:
            result = _source_text_call(call, functions, syntax)
            if isinstance(result, MatchResult):
                return result
            converted.append(result)
        calls = converted
    return match_calls(calls, [GoldCall.from_bfcl(entry) for entry in gold], schemas, order="any", rules=rules)


def _source_text_call(call: Any, functions: Sequence[dict[str, Any]], syntax: str) -> Any:
    """``call`` with its Java/JavaScript source-text arguments converted to values by BFCL's converters, or the
    :class:`MatchResult` of an argument that is not source text."""
    if getattr(call, "error", None):
        return call
    name, arguments = call_name_and_arguments(call)
    doc = next((doc for doc in functions if doc["name"] == name), None)
    if doc is None or not isinstance(arguments, dict):
        return call  # the matcher reports the wrong function or arguments
    properties = doc["parameters"]["properties"]
    converted = {}
    for key, value in arguments.items():
        spec = properties.get(key)
        if spec is None:
            converted[key] = value
            continue
        if not isinstance(value, str):
            return failure(
                "wrong_type",
                f"{name}: argument {key!r} must be {syntax} source text (a string), got {type(value).__name__}",
            )
        converted[key] = _convert(value, spec, syntax)
    return ToolCall(name, converted, getattr(call, "id", ""), getattr(call, "format", "openai"))


def _convert(value: str, spec: dict[str, Any], syntax: str) -> Any:
    nested = spec.get("items", {}).get("type") if spec["type"] in ("Array", "ArrayList", "array") else None
    if syntax == "java":
        from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import java_type_converter

        return java_type_converter(value, spec["type"], nested) if nested else java_type_converter(value, spec["type"])
    from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import js_type_converter

    return js_type_converter(value, spec["type"], nested) if nested else js_type_converter(value, spec["type"])

"""Function calls graded against gold calls, the way the field grades them (BFCL's rules, or envgym's default).

- :mod:`~envgym.verifiers.calls.schemas`: function definitions in OpenAI, MCP or BFCL's dialect as JSON Schema;
- :mod:`~envgym.verifiers.calls.rules`: :class:`MatchRules`, with :data:`BFCL_RULES` and :data:`DEFAULT_RULES`
  (where they differ and why);
- :mod:`~envgym.verifiers.calls.match`: :func:`match_call`, :func:`match_calls` (in order or any order),
  :func:`expect_no_call` (irrelevance), :func:`expect_call` (relevance); every failure has a kind and a reason.

Light: no torch, no bfcl-eval. See docs/bfcl.md.
"""

from envgym.verifiers.calls.match import (
    FAILURE_KINDS,
    CallFailure,
    GoldCall,
    MatchResult,
    expect_call,
    expect_no_call,
    match_call,
    match_calls,
)
from envgym.verifiers.calls.rules import BFCL_RULES, DEFAULT_RULES, MatchRules
from envgym.verifiers.calls.schemas import FunctionSchema, bfcl_to_json_schema, function_schema
from envgym.verifiers.calls.values import OPTIONAL

__all__ = [
    "BFCL_RULES",
    "DEFAULT_RULES",
    "FAILURE_KINDS",
    "OPTIONAL",
    "CallFailure",
    "FunctionSchema",
    "GoldCall",
    "MatchResult",
    "MatchRules",
    "bfcl_to_json_schema",
    "expect_call",
    "expect_no_call",
    "function_schema",
    "match_call",
    "match_calls",
]

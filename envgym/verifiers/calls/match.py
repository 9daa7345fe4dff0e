"""Gold-call matching: one call, several calls in order or in any order, no call expected, a call expected.

A gold call names a function and, per parameter, the list of values accepted (``""`` in the list: the call may
leave the parameter out), as BFCL's ``possible_answer`` files do::

    GoldCall("math.hypot", {"x": [4], "y": [5], "z": ["", 0]})

Every failure carries a kind (:data:`FAILURE_KINDS`) and a sentence saying what was wrong.

Several calls in any order are matched as a bipartite graph (call i fits gold j) with a small exact matcher
(Kuhn's augmenting paths: at most a few dozen calls, so O(n^3) is nothing, and the core takes no scipy), so a call
that fits two golds never steals the only call another gold could take. BFCL's checker assigns greedily, gold by
gold, and so can refuse an order-free set of calls that has a valid assignment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from envgym.verifiers.calls.rules import DEFAULT_RULES, MatchRules
from envgym.verifiers.calls.schemas import FunctionSchema
from envgym.verifiers.calls.values import OPTIONAL, ArgumentMismatch, check_argument

FAILURE_KINDS = (
    "wrong_function",  # the call names another function than the gold
    "missing_parameter",  # a required (or non-optional gold) parameter is absent
    "extra_parameter",  # a parameter the schema or the gold does not have
    "wrong_type",  # an argument of the wrong type
    "wrong_value",  # an argument of the right type but none of the allowed values
    "extra_call",  # more calls than golds
    "missing_call",  # fewer calls (but at least one) than golds
    "no_call",  # no call where one or more were expected
    "unexpected_call",  # a call where none was expected (irrelevance)
    "malformed_call",  # a call that could not be read (bad JSON, non-literal argument)
)
ORDERS = ("any", "sequence")


@dataclasses.dataclass(frozen=True)
class GoldCall:
    """An expected call: ``allowed`` maps each parameter to the values accepted (``""``: may be left out)."""

    name: str
    allowed: dict[str, list[Any]]

    @classmethod
    def from_bfcl(cls, entry: Mapping[str, Mapping[str, list[Any]]]) -> GoldCall:
        """BFCL's ``{function_name: {parameter: [allowed values]}}``."""
        if len(entry) != 1:
            raise ValueError(f"a BFCL gold call has exactly one function name, got {list(entry)}")
        ((name, allowed),) = entry.items()
        return cls(name=name, allowed={key: list(values) for key, values in allowed.items()})

    def example_arguments(self, schema: FunctionSchema | None = None) -> dict[str, Any]:
        """Arguments that match: the first allowed value of each parameter, optional ones left out unless the
        ``schema`` requires them; with the ``schema``, allowed dicts (``{key: [allowed values]}``, alone or in a
        list) become plain dicts the same way."""
        properties = schema.properties if schema is not None else {}
        required = set(schema.required) if schema is not None else set()
        arguments = {}
        for key, values in self.allowed.items():
            given = [value for value in values if value != OPTIONAL]
            if given and (OPTIONAL not in values or key in required):
                arguments[key] = _example_value(given[0], properties.get(key) or {})
        return arguments


@dataclasses.dataclass(frozen=True)
class CallFailure:
    """Why the calls do not match: ``kind`` in :data:`FAILURE_KINDS`, ``message`` a sentence; ``call`` and
    ``gold`` are the positions involved, where one is."""

    kind: str
    message: str
    call: int | None = None
    gold: int | None = None


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """``ok``, or the ``failure`` that decided; ``assignment[i]`` is the gold matched by call ``i``."""

    ok: bool
    failure: CallFailure | None = None
    assignment: tuple[int, ...] = ()

    @property
    def reason(self) -> str | None:
        return None if self.failure is None else f"{self.failure.kind}: {self.failure.message}"


def _example_value(value: Any, schema: Mapping[str, Any]) -> Any:
    if schema.get("type") == "object" and isinstance(value, Mapping):
        return {
            key: next(option for option in options if option != OPTIONAL)
            for key, options in value.items()
            if isinstance(options, list) and options and OPTIONAL not in options
        }
    if (
        schema.get("type") == "array"
        and (schema.get("items") or {}).get("type") == "object"
        and isinstance(value, list)
    ):
        return [_example_value(item, schema["items"]) for item in value]
    return value


def failure(kind: str, message: str, *, call: int | None = None, gold: int | None = None) -> MatchResult:
    """A failed :class:`MatchResult` (``kind`` in :data:`FAILURE_KINDS`)."""
    if kind not in FAILURE_KINDS:
        raise ValueError(f"unknown failure kind {kind!r}; accepted: {', '.join(FAILURE_KINDS)}")
    return MatchResult(ok=False, failure=CallFailure(kind=kind, message=message, call=call, gold=gold))


def call_name_and_arguments(call: Any) -> tuple[str, Any]:
    """A call as (name, arguments): an object with ``name`` and ``arguments`` (``envgym.tools.ToolCall``), a
    mapping ``{"name", "arguments"}``, or BFCL's decoded ``{name: arguments}``."""
    if hasattr(call, "name") and hasattr(call, "arguments"):
        return call.name, call.arguments
    if isinstance(call, Mapping):
        if "name" in call and isinstance(call.get("name"), str):
            return call["name"], call.get("arguments", {})
        if len(call) == 1:
            ((name, arguments),) = call.items()
            return name, arguments
    raise TypeError(f"a call must have a name and arguments, got {call!r:.80}")


def match_call(call: Any, gold: GoldCall, schema: FunctionSchema, rules: MatchRules = DEFAULT_RULES) -> MatchResult:
    """One call against one gold, in BFCL's order of checks: name, required parameters, each argument (known to
    the schema and the gold, then type, then value), then gold parameters left out that are not optional."""
    name, arguments = call_name_and_arguments(call)
    if getattr(call, "error", None):
        return failure("malformed_call", str(call.error))
    if not _same_name(name, gold.name, rules):
        return failure("wrong_function", f"called {name!r}; expected {gold.name!r}")
    if not isinstance(arguments, Mapping):
        return failure("wrong_type", f"the arguments of {name!r} must be an object, got {type(arguments).__name__}")
    for key in schema.required:
        if key not in arguments:
            return failure("missing_parameter", f"{gold.name}: required argument {key!r} is missing")
    for key, value in arguments.items():
        if key not in schema.properties or key not in gold.allowed:
            return failure("extra_parameter", f"{gold.name}: argument {key!r} is not expected")
        try:
            check_argument(key, value, gold.allowed[key], schema.properties[key], rules)
        except ArgumentMismatch as mismatch:
            return failure(mismatch.kind, f"{gold.name}: {mismatch.message}")
    for key, values in gold.allowed.items():
        if key not in arguments and OPTIONAL not in values:
            return failure("missing_parameter", f"{gold.name}: argument {key!r} is missing")
    return MatchResult(ok=True, assignment=(0,))


def match_calls(
    calls: Sequence[Any],
    golds: Sequence[GoldCall],
    schemas: Mapping[str, FunctionSchema] | Sequence[FunctionSchema],
    *,
    order: str = "any",
    rules: MatchRules = DEFAULT_RULES,
) -> MatchResult:
    """Every gold matched by exactly one call and every call by one gold: in the given ``order`` (``"sequence"``)
    or in ``"any"`` order (a bipartite matching). The schema of each gold is found by the gold's name."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if not golds:
        return expect_no_call(calls)
    by_name = schemas if isinstance(schemas, Mapping) else {schema.name: schema for schema in schemas}
    missing = [gold.name for gold in golds if gold.name not in by_name]
    if missing:
        raise ValueError(f"no schema for gold function(s) {missing}; schemas: {sorted(by_name)}")
    for index, call in enumerate(calls):
        if getattr(call, "error", None):
            return failure("malformed_call", f"call {index}: {call.error}", call=index)
    if not calls:
        return failure("no_call", f"no call; expected {_names(golds)}")
    if len(calls) > len(golds):
        return failure("extra_call", f"{len(calls)} calls; expected {len(golds)}: {_names(golds)}")
    if len(calls) < len(golds):
        return failure("missing_call", f"{len(calls)} call(s); expected {len(golds)}: {_names(golds)}")
    if order == "sequence":
        for index, (call, gold) in enumerate(zip(calls, golds)):
            result = match_call(call, gold, by_name[gold.name], rules)
            if not result.ok:
                return _with_positions(result, index, index)
        return MatchResult(ok=True, assignment=tuple(range(len(calls))))
    results = [[match_call(call, gold, by_name[gold.name], rules) for gold in golds] for call in calls]
    assignment = _perfect_matching([[result.ok for result in row] for row in results])
    if assignment is not None:
        return MatchResult(ok=True, assignment=tuple(assignment))
    return _explain_unmatched(results, golds)


def expect_no_call(calls: Sequence[Any]) -> MatchResult:
    """Irrelevance: the right answer calls nothing (calls that could not be read are not calls, as in BFCL)."""
    readable = [index for index, call in enumerate(calls) if not getattr(call, "error", None)]
    if readable:
        name, _ = call_name_and_arguments(calls[readable[0]])
        return failure("unexpected_call", f"called {name!r}; no call was expected", call=readable[0])
    return MatchResult(ok=True)


def expect_call(calls: Sequence[Any]) -> MatchResult:
    """Relevance: some readable call, whichever it is."""
    if any(not getattr(call, "error", None) for call in calls):
        return MatchResult(ok=True)
    return failure("no_call", "no call; a call was expected")


def _perfect_matching(fits: list[list[bool]]) -> list[int] | None:
    """``assignment[call] = gold`` covering every call and gold (square ``fits``), or ``None`` if there is none."""
    size = len(fits)
    gold_owner: list[int | None] = [None] * size

    def augment(call: int, seen: list[bool]) -> bool:
        for gold in range(size):
            if fits[call][gold] and not seen[gold]:
                seen[gold] = True
                owner = gold_owner[gold]
                if owner is None or augment(owner, seen):
                    gold_owner[gold] = call
                    return True
        return False

    for call in range(size):
        if not augment(call, [False] * size):
            return None
    assignment = [0] * size
    for gold, call in enumerate(gold_owner):
        assignment[call] = gold  # type: ignore[index]
    return assignment


# How close a failed call came to its gold: the later the check that refused it, the closer.
_CLOSENESS = ("wrong_value", "wrong_type", "missing_parameter", "extra_parameter", "wrong_function")


def _explain_unmatched(results: list[list[MatchResult]], golds: Sequence[GoldCall]) -> MatchResult:
    """The first gold no call fits, explained by the closest call among those that fit no gold at all."""
    spare = [call for call, row in enumerate(results) if not any(result.ok for result in row)] or list(
        range(len(results))
    )
    for gold_index in range(len(golds)):
        column = [row[gold_index] for row in results]
        if any(result.ok for result in column):
            continue
        closest = min(spare, key=lambda call: _closeness(column[call]))
        return _with_positions(column[closest], closest, gold_index)
    # every gold has some call, yet no assignment covers them all: two golds compete for one call
    return failure("missing_call", f"no assignment of the calls covers every gold: {_names(golds)}")


def _closeness(result: MatchResult) -> int:
    kind = result.failure.kind if result.failure is not None else ""
    return _CLOSENESS.index(kind) if kind in _CLOSENESS else len(_CLOSENESS)


def _same_name(name: str, gold_name: str, rules: MatchRules) -> bool:
    return name == gold_name or (rules.underscore_for_dot and name == gold_name.replace(".", "_"))


def _names(golds: Sequence[GoldCall]) -> str:
    return ", ".join(gold.name for gold in golds)


def _with_positions(result: MatchResult, call: int, gold: int) -> MatchResult:
    located = dataclasses.replace(result.failure, call=call, gold=gold)  # type: ignore[type-var]
    return MatchResult(ok=False, failure=located)

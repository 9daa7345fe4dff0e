"""One argument against the gold's allowed values: its type (by the parameter's JSON Schema), then its value.

Types are exact Python types after JSON decoding (``True`` is not an integer, ``5.0`` is not an integer), as in
BFCL's checker; an int is promoted to float for a ``number`` when the rules say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from envgym.verifiers.calls.rules import MatchRules

OPTIONAL = ""
"""In a gold's list of allowed values, marks the parameter as one the call may leave out (BFCL's convention)."""

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


class ArgumentMismatch(Exception):
    """Why an argument fails: ``kind`` is ``wrong_type`` or ``wrong_value``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def check_argument(name: str, value: Any, allowed: Sequence[Any], schema: Mapping[str, Any], rules: MatchRules) -> None:
    """Return if ``value`` is acceptable for parameter ``name``; raise :class:`ArgumentMismatch` saying why not."""
    if isinstance(value, tuple):
        value = list(value)
    expected = _python_type(schema)
    if expected is float and rules.int_for_float and type(value) is int:
        value = float(value)
    if expected is None:  # no (single) type in the schema: only the value decides
        if value not in allowed:
            raise ArgumentMismatch("wrong_value", _value_message(name, value, allowed))
        return
    gold_type = _gold_type(allowed)
    exact = rules.gold_type_wins and gold_type is not None and gold_type is not expected
    if type(value) is expected:
        if rules.strict_nested_types:
            _check_nested_types(name, value, schema, rules)
        elif expected is list and not _bfcl_items_ok(value, allowed, schema):
            exact = True  # BFCL: a list whose items have the wrong type is still compared, exactly
    elif rules.gold_type_wins and gold_type is not None and type(value) is gold_type:
        exact = True
    else:
        raise ArgumentMismatch(
            "wrong_type", f"argument {name!r} must be {schema.get('type')}, got {type(value).__name__} {_show(value)}"
        )
    if exact:
        matched = value in allowed
    elif expected is dict:
        matched = _dict_matches(value, allowed, rules)
    elif expected is list and _python_type(schema.get("items") or {}) is dict:
        matched = _dict_list_matches(value, allowed, rules)
    elif expected is str:
        matched = rules.normalize(value) in [rules.normalize(item) for item in allowed if isinstance(item, str)]
    elif expected is list:
        matched = _list_matches(value, allowed, rules)
    else:
        matched = value in allowed
    if not matched:
        raise ArgumentMismatch("wrong_value", _value_message(name, value, allowed))


def _python_type(schema: Mapping[str, Any]) -> type | None:
    json_type = schema.get("type")
    return _PYTHON_TYPES.get(json_type) if isinstance(json_type, str) else None


def _gold_type(allowed: Sequence[Any]) -> type | None:
    """The type of the first allowed value that is not the optional marker (BFCL's "possible answer type")."""
    for item in allowed:
        if item != OPTIONAL:
            return type(item)
    return None


def _check_nested_types(where: str, value: Any, schema: Mapping[str, Any], rules: MatchRules) -> None:
    """Items of lists and values of dicts, at every depth, against ``items`` and ``properties``."""
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            _check_type(f"{where}[{index}]", item, schema["items"], rules)
    elif isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        for key, item in value.items():
            if isinstance(schema["properties"].get(key), Mapping):
                _check_type(f"{where}.{key}", item, schema["properties"][key], rules)


def _check_type(where: str, value: Any, schema: Mapping[str, Any], rules: MatchRules) -> None:
    expected = _python_type(schema)
    if expected is None:
        return
    promoted = expected is float and rules.int_for_float and type(value) is int
    if type(value) is not expected and not promoted:
        raise ArgumentMismatch(
            "wrong_type", f"argument {where} must be {schema.get('type')}, got {type(value).__name__} {_show(value)}"
        )
    _check_nested_types(where, value, schema, rules)


def _bfcl_items_ok(value: list, allowed: Sequence[Any], schema: Mapping[str, Any]) -> bool:
    """BFCL's one-level item check: against some allowed list, every item has the items' type or the type of that
    list's first value; an allowed value that is not a list (the optional marker) passes at once."""
    item_type = _python_type(schema.get("items") or {})
    if item_type is None:
        return True
    for candidate in allowed:
        if not isinstance(candidate, list):
            return True
        candidate_type = _gold_type(candidate)
        if all(type(item) is item_type or type(item) is candidate_type for item in value):
            return True
    return False


def _normalized(value: Any, rules: MatchRules) -> Any:
    return rules.normalize(value) if isinstance(value, str) else value


def _list_matches(value: list, allowed: Sequence[Any], rules: MatchRules) -> bool:
    """Equal, item by item in order (strings normalised), to one allowed list; the optional marker stands for []."""
    given = [_normalized(item, rules) for item in value]
    for candidate in allowed:
        if isinstance(candidate, (list, str)) and given == [_normalized(item, rules) for item in candidate]:
            return True
    return False


def _dict_matches(value: Mapping[str, Any], allowed: Sequence[Any], rules: MatchRules) -> bool:
    """Some allowed dict (``{key: [allowed values]}``) accepts every key given, with an allowed value (strings
    normalised), and marks every key left out optional."""
    for candidate in allowed:
        if not isinstance(candidate, Mapping):
            continue
        if any(key not in candidate for key in value):
            continue
        if any(
            _normalized(item, rules) not in [_normalized(option, rules) for option in candidate[key]]
            for key, item in value.items()
        ):
            continue
        if any(key not in value and OPTIONAL not in options for key, options in candidate.items()):
            continue
        return True
    return False


def _dict_list_matches(value: list, allowed: Sequence[Any], rules: MatchRules) -> bool:
    """As many dicts as some allowed list holds, each accepted by the allowed dict at its position."""
    for candidate in allowed:
        if not isinstance(candidate, (list, str)) or len(candidate) != len(value):
            continue
        if all(
            isinstance(item, Mapping) and _dict_matches(item, [gold], rules) for item, gold in zip(value, candidate)
        ):
            return True
    return False


def _value_message(name: str, value: Any, allowed: Sequence[Any]) -> str:
    options = [item for item in allowed if item != OPTIONAL]
    return f"argument {name!r} is {_show(value)}; expected one of {_show(options, 160)}"


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

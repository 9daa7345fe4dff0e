"""Values written as Java or JavaScript source text, the form BFCL's Java and JavaScript categories ask for.

The inverse of BFCL's converters (``bfcl_eval.eval_checker.ast_eval.type_convertor``) for the shapes its golds
hold: the env's reference action and the differential tests write gold values this way, and the converters read
them back. A gold value that is already a string (a variable name, an expression) is source text as it is.
"""

from __future__ import annotations

import json
from typing import Any


def source_text(value: Any, spec: dict[str, Any], syntax: str) -> str:
    """``value`` of a parameter typed by BFCL's ``spec`` (``{"type": "long"}``, ...) as ``syntax`` source text."""
    if syntax == "java":
        return _java(value, spec.get("type", "any"), (spec.get("items") or {}).get("type"))
    if syntax == "javascript":
        return _javascript(value, spec.get("type", "any"), (spec.get("items") or {}).get("type"))
    raise ValueError(f"syntax must be 'java' or 'javascript', got {syntax!r}")


def _java(value: Any, java_type: str, item_type: str | None) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and java_type == "long":
        return f"{value}L"
    if isinstance(value, (int, float)) and java_type == "float":
        return f"{float(value)}f"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list) and java_type == "ArrayList":
        return f"new ArrayList<>(Arrays.asList({', '.join(_java_element(item, item_type) for item in value)}))"
    if isinstance(value, list):
        items = ", ".join(_java(item, item_type or "any", None) for item in value)
        return f"new {_JAVA_ARRAY.get(item_type or '', 'Object')}[]{{{items}}}"
    if isinstance(value, dict):
        puts = " ".join(f'put("{key}", {_java_element(item, None)});' for key, item in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


_JAVA_ARRAY = {"String": "String", "integer": "int", "long": "long", "double": "double", "float": "float"}


def _java_element(value: Any, item_type: str | None) -> str:
    """An element inside ``Arrays.asList(...)`` or ``put(...)``: strings quoted, typed as Java literals."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, int) and not isinstance(value, bool) and item_type == "long":
        return f"{value}L"
    return _java(value, item_type or "any", None)


def _javascript(value: Any, js_type: str, item_type: str | None) -> str:
    if isinstance(value, str):
        return f'"{value}"' if js_type == "String" else value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and js_type == "Bigint":
        return f"{value}n"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_javascript_element(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_javascript_element(item)}" for key, item in value.items()) + "}"
    return json.dumps(value)


def _javascript_element(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return _javascript(value, "any", None)

"""BFCL's test entries and gold answers, read from the installed ``bfcl-eval`` package at run time.

Nothing is copied into envgym: the files are ``bfcl_eval/data/BFCL_v4_<category>.json`` (one JSON object a line)
and ``bfcl_eval/data/possible_answer/BFCL_v4_<category>.json``. We read them directly rather than through
``bfcl_eval.utils.load_dataset_entry``, because importing that module creates ``result/``, ``score/`` and
``.file_locks/`` folders beside the installed package; what it adds to the raw entries (the language hints on the
function docs, the multi-turn function docs and the held-out functions of ``miss_func``) is done here the same way,
and ``tests/envs/bfcl/test_data.py`` checks that the entries are equal to BFCL's own loader's.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

SINGLE_TURN_AST = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
SINGLE_TURN_RELEVANCE = ("irrelevance", "live_irrelevance", "live_relevance")
SINGLE_TURN = SINGLE_TURN_AST + SINGLE_TURN_RELEVANCE
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
CATEGORIES = SINGLE_TURN + MULTI_TURN


class BFCLNotInstalled(ImportError):
    """bfcl-eval is not installed (its data is read from the installed package)."""


def available() -> bool:
    """Whether the ``bfcl_eval`` package can be found (without importing it)."""
    return importlib.util.find_spec("bfcl_eval") is not None


@functools.lru_cache(maxsize=1)
def package_root() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BFCLNotInstalled(
            "the BFCL envs read their data from the bfcl-eval package; install it with "
            "`pip install --no-deps bfcl-eval` (or `pip install envgym[bfcl]`)"
        )
    return Path(list(spec.submodule_search_locations)[0])


def version_prefix() -> str:
    from bfcl_eval.constants.category_mapping import VERSION_PREFIX  # a module of constants, no imports

    return VERSION_PREFIX


def language(category: str) -> str:
    """``java``, ``javascript`` or ``python``: the syntax of the category's function docs and arguments."""
    if category.endswith("_javascript"):
        return "javascript"
    if category.endswith("_java"):
        return "java"
    return "python"


def check_category(category: str) -> str:
    if category not in CATEGORIES:
        raise ValueError(f"unknown BFCL category {category!r}; accepted: {', '.join(CATEGORIES)}")
    return category


@functools.cache
def raw_entries(category: str) -> tuple[dict[str, Any], ...]:
    """The category's test entries exactly as the package ships them (shared: deep-copy before changing)."""
    return _read_lines(package_root() / "data" / f"{version_prefix()}_{check_category(category)}.json")


@functools.cache
def gold_entries(category: str) -> dict[str, Any]:
    """``{entry id: ground_truth}``; empty for irrelevance and relevance, which have no possible answers."""
    path = package_root() / "data" / "possible_answer" / f"{version_prefix()}_{check_category(category)}.json"
    if not path.exists():
        return {}
    return {entry["id"]: entry["ground_truth"] for entry in _read_lines(path)}


def entries(category: str, *, language_hints: bool = True) -> list[dict[str, Any]]:
    """The entries as BFCL's ``load_dataset_entry`` returns them: multi-turn entries get their classes' function
    docs (held-out functions moved to ``missed_function``), and with ``language_hints`` the docs get BFCL's
    language notes (and Java/JavaScript parameters become strings, as BFCL shows them to models)."""
    loaded = copy.deepcopy(list(raw_entries(category)))
    if category in MULTI_TURN:
        for entry in loaded:
            _add_multi_turn_functions(entry)
    if language_hints:
        for entry in loaded:
            entry["function"] = _with_language_hints(entry["function"], category)
    return loaded


@functools.cache
def shared_entries(category: str, *, language_hints: bool = True) -> tuple[dict[str, Any], ...]:
    """:func:`entries`, built once per process and shared by every env of the category: read, never change."""
    return tuple(entries(category, language_hints=language_hints))


@functools.cache
def class_function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """The function docs of one multi-turn backend class (``GorillaFileSystem``, ``TradingBot``, ...)."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    return _read_lines(package_root() / "data" / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name])


def _add_multi_turn_functions(entry: dict[str, Any]) -> None:
    functions = [copy.deepcopy(doc) for name in entry["involved_classes"] for doc in class_function_docs(name)]
    held_out: dict[str, list[dict[str, Any]]] = {}
    for turn, names in entry.get("missed_function", {}).items():
        held_out[turn] = []
        for name in names:
            for index, doc in enumerate(functions):
                if doc["name"] == name:
                    held_out[turn].append(functions.pop(index))
                    break
    entry["function"] = functions
    if "missed_function" in entry:
        entry["missed_function"] = held_out


_HINTS = {
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
    "python": " Note that the provided function is in Python 3 syntax.",
}


def _with_language_hints(functions: list[dict[str, Any]], category: str) -> list[dict[str, Any]]:
    """BFCL's ``_func_doc_language_specific_pre_processing``: a note on the language in every description; Java
    and JavaScript parameters described in the language and typed ``string`` (their values are source text)."""
    syntax = language(category)
    for function in functions:
        function["description"] = function["description"] + _HINTS[syntax]
        if syntax == "python":
            continue
        name = "Java" if syntax == "java" else "JavaScript"
        for spec in function["parameters"]["properties"].values():
            if spec["type"] == "any":
                spec["description"] += f" This parameter can be of any type of {name} object in string representation."
            else:
                spec["description"] += f" This is {name} {spec['type']} type parameter in string representation."
            if spec["type"] in (("ArrayList", "Array") if syntax == "java" else ("array",)):
                spec["description"] += (
                    f" The list elements are of type {spec['items']['type']}; they are not in string representation."
                )
                del spec["items"]
            if syntax == "javascript" and spec["type"] == "dict" and "properties" in spec:
                spec["description"] += (
                    " The dictionary entries have the following schema; they are not in string representation. "
                    + json.dumps(spec["properties"])
                )
                del spec["properties"]
            spec["type"] = "string"
    return functions


def _read_lines(path: Path) -> tuple[dict[str, Any], ...]:
    with path.open(encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())

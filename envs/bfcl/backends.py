"""BFCL's multi-turn backends (file system, vehicle control, trading, travel booking, ...) driven call by call.

The classes are BFCL's own (``bfcl_eval.eval_checker.multi_turn_eval.func_source_code``), loaded with the entry's
initial configuration as BFCL loads them. BFCL's executor builds each call as Python source and ``eval``s it,
keeping the instances in its module's globals under a model name; here every call is a method looked up by name
on the episode's own instances and called with the parsed arguments, so a policy's text is never evaluated and
no state outlives the episode. What the policy reads back is formatted as BFCL formats it (strings as they are,
dicts as JSON, anything else with ``str``, exceptions as ``Error during execution: ...``), and the same names
are refused (``kill``, ``exit``, ...), so the results BFCL's response check compares are the same.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
from collections.abc import Mapping
from typing import Any

# Method names BFCL's executor refuses to run.
BLOCKED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})


class Backends:
    """The instances of one episode's involved classes, with their public methods by name."""

    def __init__(self, initial_config: Mapping[str, Any], involved_classes: list[str], *, long_context: bool):
        from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for class_name in involved_classes:
            instance = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)()
            if class_name not in STATELESS_CLASSES:
                instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
            self.instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = method

    def run(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Call method ``name`` with keyword ``arguments``; its result (or error) as the text BFCL shows."""
        if name in BLOCKED:
            return f"Error during execution: Function call {name} is not allowed."
        method = self.methods.get(name)
        if method is None:
            return f"Error during execution: name '{name}' is not defined"
        try:
            result = method(**copy.deepcopy(dict(arguments)))
        except Exception as error:  # a bad call is the policy's observation, as in BFCL
            return f"Error during execution: {error}"
        return result_text(result)

    def run_source(self, call: str) -> str:
        """Run a gold call written as source (``cd(folder='document')``, positional arguments allowed)."""
        name, arguments = self.parse_source(call)
        return self.run(name, arguments)

    def parse_source(self, call: str) -> tuple[str, dict[str, Any]]:
        """A gold call's name and keyword arguments (positional ones named from the method's signature)."""
        node = ast.parse(call, mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError(f"a BFCL gold call must be name(arguments), got {call!r}")
        name = node.func.id
        arguments = {keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords}
        if node.args:
            parameters = list(inspect.signature(self.methods[name]).parameters)
            for position, value in enumerate(node.args):
                arguments[parameters[position]] = ast.literal_eval(value)
        return name, arguments

    def differences(self, expected: Backends) -> dict[str, dict[str, Any]]:
        """``{class: {attribute: {"model", "ground_truth"}}}`` for the public attributes that differ (BFCL's
        state check compares every attribute not starting with ``_``)."""
        found: dict[str, dict[str, Any]] = {}
        for class_name, gold in expected.instances.items():
            mine = self.instances[class_name]
            for attribute, value in vars(gold).items():
                if attribute.startswith("_"):
                    continue
                if getattr(mine, attribute) != value:
                    found.setdefault(class_name, {})[attribute] = {
                        "model": getattr(mine, attribute),
                        "ground_truth": value,
                    }
        return found


def result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)

"""What the code envs share: pulling the program out of the reply, turning a TestReport into a turn, and which
test cases feedback may show.

Feedback shows *visible* tests only, while the verdict needs every test (as LiveCodeBench does with public and
private tests): feedback that quoted every failing assertion let a lookup table of the quoted cases pass a
third of HumanEval without solving anything.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from envgym.core import Task, reward_total

FENCE_LANGUAGE = re.compile(r"[ \t]*([A-Za-z0-9_+#-]*)")
LANGUAGE_ALIASES = {
    "": None,
    "python": "python",
    "py": "python",
    "python3": "python",
    "c": "c",
    "cpp": "cpp",
    "c++": "cpp",
    "cc": "cpp",
    "bash": "bash",
    "sh": "bash",
}


def extract_code(text: str) -> tuple[str, str | None] | None:
    """The last fenced code block of ``text`` and its language (``None`` when the fence names none).

    Returns ``None`` when there is no complete fenced block. A fence is three backticks, an optional language
    and the rest of its line; the block ends at the next three backticks. Found with ``str.find`` in one pass:
    a regular expression for the same blocks backtracked on text full of unclosed fences (100 KB of backticks
    took 20 s).
    """
    last, position = None, 0
    while (start := text.find("```", position)) >= 0:
        newline = text.find("\n", start + 3)
        end = text.find("```", newline + 1) if newline >= 0 else -1
        if end < 0:
            break  # no later fence can be complete either: each needs a newline and a closing fence after it
        last, position = (text[start + 3 : newline], text[newline + 1 : end]), end + 3
    if last is None:
        return None
    header, code = last
    language = FENCE_LANGUAGE.match(header).group(1).lower()
    return code, LANGUAGE_ALIASES.get(language, language)


def turn_info(report, pass_fraction_weight: float) -> tuple[float, dict[str, Any]]:
    """Reward and info of a graded turn: ``correct`` (1 when every test passes) plus weighted pass fraction."""
    components = {
        "correct": 1.0 if report.all_passed else 0.0,
        "pass_fraction": pass_fraction_weight * report.pass_fraction,
    }
    info = {
        "action_valid": True,
        "correct": report.all_passed,
        "pass_fraction": report.pass_fraction,
        "tests_passed": report.passed,
        "tests_total": report.total,
        "reward_components": components,
    }
    if report.execution is not None:
        info["status"] = report.execution.status
    if report.infra_error:
        info["error"] = f"sandbox infra_error: {report.infra_error}"
    return reward_total(components), info


def no_code_info() -> tuple[float, dict[str, Any]]:
    """Reward and info of a reply without a code block: a policy mistake, not an error."""
    components = {"correct": 0.0, "pass_fraction": 0.0}
    return 0.0, {"action_valid": False, "correct": False, "pass_fraction": 0.0, "reward_components": components}


NO_CODE_FEEDBACK = "I could not find a fenced code block. Put your whole solution in one ```python ... ``` block."


def visible_cases(task_id: str, total: int, public: int | None = None) -> frozenset[int]:
    """Indices of the ``total`` test cases of task ``task_id`` that feedback may show; the rest are held out.

    The first ``public`` cases (a dataset's public tests, already in the statement) when they leave at least one
    held out; otherwise half the cases, rounded down, chosen by a hash of the task id and case index: the same
    split in every episode and process, and always at least one case held out.
    """
    if public is not None and 0 < public < total:
        return frozenset(range(public))
    ranked = sorted(range(total), key=lambda index: hashlib.sha256(f"{task_id}/{index}".encode()).digest())
    return frozenset(ranked[: total // 2])


def attempt_feedback(task: Task, report, limit: int = 3) -> str:
    """The message after a graded attempt: all passed, or what the visible tests say (``failure_feedback``)."""
    if report.all_passed:
        return "All tests passed."
    return failure_feedback(report, visible_cases(task.id, report.total, task.answer.get("public")), limit)


def failure_feedback(report, visible: frozenset[int], limit: int = 3) -> str:
    """What a failed attempt tells the policy: the failing *visible* cases (name and error, at most ``limit``)
    and, of the held-out ones, only whether the verdict still fails on them, never which or how."""
    shown = [case for index, case in enumerate(report.cases) if index in visible]
    failing = [case for case in shown if not case.passed]
    held_out = report.total - len(shown)
    lines = [
        f"{len(shown) - len(failing)}/{len(shown)} visible tests passed"
        + (f"; {held_out} hidden tests also decide the verdict." if held_out else ".")
    ]
    if failing:
        lines.append("Failing:")
        lines += [f"- {case.name}: {case.message}" for case in failing[:limit]]
    elif not report.all_passed:
        lines.append("Every visible test passes, but hidden tests fail.")
    return "\n".join(lines)

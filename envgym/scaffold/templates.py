"""The files ``envgym init NAME`` writes: a pip-installable package with one honest single-turn env.

Kept as strings in code (not data files) so that they ship with any install of envgym. ``{dist}`` is the
distribution name, ``{package}`` the import name, ``{namespace}`` the env id namespace, ``{group}`` the entry-point
group envgym reads.
"""

from __future__ import annotations

import re
from pathlib import Path

from envgym.registration import ENTRY_POINT_GROUP

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")

PYPROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "envgym environments: {namespace}/*"
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["envgym"]

[project.optional-dependencies]
dev = ["pytest>=8"]

[tool.setuptools]
packages = ["{package}"]

# envgym runs every function named here once, when it first lists or makes envs.
[project.entry-points."{group}"]
{namespace} = "{package}:register_envs"
"""

INIT = '''"""envgym environments of {dist}. ``register_envs`` is the plugin entry point (see pyproject.toml)."""

import envgym

ENV_IDS = ["{namespace}/Reverse-v0"]


def register_envs() -> None:
    """Register this package's envs; envgym calls it once through the ``envgym.envs`` entry point."""
    envgym.register("{namespace}/Reverse-v0", entry_point="{package}.reverse:Reverse", max_turns=1,
                    description="Reverse a random word; answer in <answer></answer>.")
'''

ENV = '''"""Reverse a word: a single-turn env with a verifiable answer, the shape to start from."""

from __future__ import annotations

from typing import Any

from envgym.core import Action, Env, Message, Task, action_text
from envgym.tasks import ProceduralTaskSource


def answer_bodies(text: str) -> list[str]:
    """What each <answer>...</answer> holds. A linear scan: a lazy regex is quadratic on 100 KB of open tags."""
    bodies, start = [], 0
    while (opening := text.find("<answer>", start)) >= 0:
        closing = text.find("</answer>", opening + len("<answer>"))
        if closing < 0:
            break
        bodies.append(text[opening + len("<answer>"):closing])
        start = closing + len("</answer>")
    return bodies


class Reverse(Env):
    """Reverse a random word. Reward 1 for the exact reversal in one <answer> tag, 0 otherwise."""

    description = "Reverse a random word; answer in <answer></answer>."

    def __init__(self, length: int = 6) -> None:
        if not 2 <= length <= 40:
            raise ValueError(f"length must be between 2 and 40, got {{length}}")
        self.length = length
        self.tasks = ProceduralTaskSource(self.make_task)

    def make_task(self, rng: Any, index: int) -> Task:
        word = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=self.length))
        prompt = f"Reverse the word '{{word}}'. Put only the reversed word in <answer></answer>."
        return Task(id=f"reverse-{{index}}", messages=[{{"role": "user", "content": prompt}}], answer=word[::-1],
                    metadata={{"word": word}})

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {{}}

    def _step(self, action: Action) -> tuple[list[Message], float, bool, bool, dict[str, Any]]:
        # Exactly one distinct answer: a list of candidates in several tags must not win.
        answers = {{body.strip() for body in answer_bodies(action_text(action))}}
        info: dict[str, Any] = {{"action_valid": len(answers) == 1}}
        if len(answers) != 1:
            info["action_error"] = "give exactly one <answer>...</answer>"
        answer = answers.pop() if len(answers) == 1 else None
        correct = answer == self.task.answer  # exact: no look-alikes, no hedges, nothing executed
        components = {{"correct": 1.0 if correct else 0.0}}
        info.update(correct=correct, answer=answer, reward_components=components)
        return [], components["correct"], True, False, info

    def reference_action(self) -> Action | None:
        """The gold answer in the required format (reads hidden data: for audits and tests only)."""
        return f"<answer>{{self.task.answer}}</answer>" if self.task is not None else None

    def wrong_action(self) -> Action | None:
        """An honest wrong answer: the word itself, not reversed (rotated when it is a palindrome)."""
        if self.task is None:
            return None
        word = self.task.metadata["word"]
        return f"<answer>{{word if word != word[::-1] else word[1:] + word[0]}}</answer>"
'''

TEST = '''"""The env keeps envgym's contract (check_env) and survives the adversarial audit (envgym audit)."""

import envgym
from envgym.audit import audit_env
from envgym.utils import check_env

from {package} import ENV_IDS


def test_envs_are_registered_through_the_entry_point():
    registered = {{spec.id for spec in envgym.list_envs()}}
    assert set(ENV_IDS) <= registered


def test_check_env_passes():
    for env_id in ENV_IDS:
        check_env(envgym.make(env_id))


def test_reference_answer_earns_full_reward():
    env = envgym.make(ENV_IDS[0])
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(env.reference_action())
    assert (reward, terminated) == (1.0, True)


def test_audit_finds_nothing():
    for env_id in ENV_IDS:
        report = audit_env(env_id)
        assert report.findings == [], [f.to_dict() for f in report.findings]
'''

README = """# {dist}

envgym environments, registered as a plugin: after `pip install -e .` they show in `envgym list`.

| id | what |
|---|---|
| `{namespace}/Reverse-v0` | reverse a random word; reward 1 for the exact reversal in `<answer></answer>` |

```bash
pip install -e ".[dev]"
envgym list                       # {namespace}/Reverse-v0 is there
envgym check .                    # check_env and the adversarial audit on every env this package registers
envgym play {namespace}/Reverse-v0
pytest -q                         # the same checks as tests
```

Add an env: write its class next to `{package}/reverse.py` (with `reference_action()`, and `wrong_action()` where
an honest wrong answer earns something), register it in `register_envs` and add its id to `ENV_IDS`.
See envgym's docs/custom-env.md and docs/audit.md.
"""


def names(name: str) -> dict[str, str]:
    """The distribution, import and namespace names for ``name`` (``my-envs`` -> ``my-envs``, ``my_envs``)."""
    if not NAME_PATTERN.match(name):
        raise ValueError(
            f"bad package name {name!r}: use letters, digits, '-' and '_', starting with a letter (e.g. my-envs)"
        )
    package = name.replace("-", "_").lower()
    return {"dist": name, "package": package, "namespace": package}


def scaffold(name: str, folder: str | Path) -> list[Path]:
    """Write the package for ``name`` into ``folder`` (which must not exist or be empty); return the files."""
    values = {**names(name), "group": ENTRY_POINT_GROUP}
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} exists and is not empty; choose another --dir")
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"{values['package']}/__init__.py": INIT,
        f"{values['package']}/reverse.py": ENV,
        "tests/test_envs.py": TEST,
    }
    written = []
    for relative, template in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**values), encoding="utf-8")
        written.append(path)
    return written

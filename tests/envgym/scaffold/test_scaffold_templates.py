"""envgym init's templates: the package they write, and the names they refuse."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from envgym.scaffold.templates import names, scaffold


def test_names_map_a_distribution_name_to_import_and_namespace_names():
    assert names("My-Envs") == {"dist": "My-Envs", "package": "my_envs", "namespace": "my_envs"}


@pytest.mark.parametrize("bad", ["", "1envs", "my envs", "../evil", "envs/x"])
def test_bad_names_are_refused_with_what_is_accepted(bad: str):
    with pytest.raises(ValueError, match="use letters, digits, '-' and '_', starting with a letter"):
        names(bad)


def test_a_non_empty_folder_is_never_overwritten(tmp_path: Path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="exists and is not empty"):
        scaffold("my-envs", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_scaffold_writes_an_entry_point_env_tests_and_readme(tmp_path: Path):
    files = scaffold("my-envs", tmp_path / "pkg")
    assert sorted(str(p.relative_to(tmp_path / "pkg")) for p in files) == [
        "README.md",
        "my_envs/__init__.py",
        "my_envs/reverse.py",
        "pyproject.toml",
        "tests/test_envs.py",
    ]
    pyproject = (tmp_path / "pkg" / "pyproject.toml").read_text()
    assert '[project.entry-points."envgym.envs"]\nmy_envs = "my_envs:register_envs"' in pyproject


@pytest.fixture
def scaffolded_env(tmp_path: Path, scratch_registry, monkeypatch):
    """The scaffolded package imported from its folder and registered (the registry is the test's own)."""
    scaffold("scaffold-probe", tmp_path / "pkg")
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    package = importlib.import_module("scaffold_probe")
    package.register_envs()
    yield package.ENV_IDS[0]
    for name in [m for m in sys.modules if m.startswith("scaffold_probe")]:
        del sys.modules[name]


def test_scaffolded_env_rewards_its_reference_and_not_its_wrong_action(scaffolded_env: str):
    import envgym

    env = envgym.make(scaffolded_env)
    env.reset(seed=0)
    assert env.step(env.reference_action())[1:3] == (1.0, True)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(env.wrong_action())
    assert (reward, info["action_valid"]) == (0.0, True)


def test_scaffolded_env_marks_a_missing_answer_invalid_without_raising(scaffolded_env: str):
    import envgym

    env = envgym.make(scaffolded_env)
    env.reset(seed=0)
    _, reward, _, _, info = env.step("I think it is olleh")
    assert (reward, info["action_valid"], info["action_error"]) == (0.0, False, "give exactly one <answer>...</answer>")


def test_scaffolded_env_passes_check_env_and_the_audit(scaffolded_env: str):
    import envgym
    from envgym.audit import audit_env
    from envgym.utils import check_env

    check_env(envgym.make(scaffolded_env))
    report = audit_env(scaffolded_env)
    assert (report.findings, report.reference) == ([], "declared")

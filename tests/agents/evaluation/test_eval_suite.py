"""Eval suites as one validated model: every entry is checked (keys, values, env id, env arguments, the unsafe gate)
when the suite is read, each mistake one line naming the file and the entry."""

import pytest

import envgym
from envgym.agents.evaluation.suite import build_env_eval, load_suite
from envgym.config import BadInput


def write(tmp_path, text):
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def test_defaults_fill_each_entry_and_the_command_line_wins(tmp_path):
    path = write(
        tmp_path,
        "model: m\ndefaults: {num_generations: 2, k: 2}\n"
        "envs:\n  - math/Arithmetic-v0\n  - {env: games/GuessNumber-v0, num_generations: 4}\n",
    )
    entries, settings = load_suite(path, {"n_tasks": 3}, env_kwargs={"allow_unsafe": False})
    assert [(e.env, e.num_generations, e.k, e.n_tasks) for e in entries] == [
        ("math/Arithmetic-v0", 2, [2], 3),
        ("games/GuessNumber-v0", 4, [2], 3),
    ]
    assert settings == {"model": "m"} and entries[1].env_kwargs == {"allow_unsafe": False}


def test_an_unknown_key_of_an_entry_names_the_entry_and_the_known_keys(tmp_path):
    path = write(tmp_path, "envs:\n  - {env: math/Arithmetic-v0, samples: 3}\n")
    with pytest.raises(
        BadInput, match=r"suite.yaml: envs\[0\]: unknown key 'samples'; known keys are env, env_kwargs, group, k"
    ):
        load_suite(path)


def test_a_k_above_n_is_refused_with_the_range():
    with pytest.raises(BadInput, match=r"^--env: every k must be in 1..num_generations=2, got \[4\]$"):
        build_env_eval({"env": "math/Arithmetic-v0", "num_generations": 2, "k": [1, 4]}, where="--env")


def test_an_unsafe_env_is_refused_when_the_suite_is_read_not_after_the_model_loads(tmp_path, scratch_registry):
    envgym.register("test/Unsafe-v0", "envgym.envs.games.guess_number:GuessNumber", unsafe=True, unsafe_reason="r")
    path = write(tmp_path, "envs:\n  - test/Unsafe-v0\n")
    with pytest.raises(BadInput, match=r"envs\[0\]: test/Unsafe-v0 is registered unsafe \(r\)"):
        load_suite(path)
    (entry,), _ = load_suite(path, env_kwargs={"allow_unsafe": True})
    assert entry.env_kwargs == {"allow_unsafe": True}


def test_a_suite_without_envs_says_what_a_suite_is(tmp_path):
    with pytest.raises(BadInput, match=r"suite.yaml: envs is missing"):
        load_suite(write(tmp_path, "defaults: {num_generations: 2}\n"))

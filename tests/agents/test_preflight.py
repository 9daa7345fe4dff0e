"""Input checks that run before anything loads: env arguments against the env's signature, recipe and suite
files found by name, YAML errors with file and line, config types against the dataclass annotations."""

import pytest

from envgym.agents.evaluation.evaluate import EnvEval
from envgym.agents.preflight import (PACKAGE_DIR, BadInput, check_config_fields, check_env_kwargs, find_config,
                                     read_mapping)


def test_env_kwargs_the_entry_point_does_not_take_are_refused_with_the_accepted_ones():
    with pytest.raises(BadInput, match=r"takes no argument 'difficulti'; it accepts difficulty"):
        check_env_kwargs("math/Arithmetic-v0", {"difficulti": 2})


def test_the_keywords_make_takes_itself_are_accepted_for_any_env():
    check_env_kwargs("math/Arithmetic-v0", {"difficulty": 1, "max_turns": 2, "system_prompt": "s", "few_shot": []})


def test_an_installed_recipe_is_found_by_name_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_config("smollm2-arithmetic-cpu", "recipes") == PACKAGE_DIR / "recipes" / "smollm2-arithmetic-cpu.yaml"
    assert find_config("default", "suites") == PACKAGE_DIR / "suites" / "default.yaml"


def test_an_unknown_config_name_lists_the_installed_ones():
    with pytest.raises(BadInput, match="installed recipe: .*smollm2-arithmetic-cpu"):
        find_config("no-such-recipe", "recipes")


def test_a_yaml_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\nb: [2\nc: 3\n")
    with pytest.raises(BadInput, match=r"x.yaml:3: YAML syntax error"):
        read_mapping(path)


def test_a_config_value_of_the_wrong_type_names_the_field_and_the_type():
    from envgym.agents.training.grpo import GRPOConfig

    with pytest.raises(BadInput, match=r"^x.yaml: learning_rate must be a float, got 'fast'$"):
        check_config_fields({"learning_rate": "fast"}, GRPOConfig, "x.yaml")


def test_yaml_number_strings_become_numbers_and_optional_fields_take_null():
    from envgym.agents.training.grpo import GRPOConfig

    fields = check_config_fields({"learning_rate": "1e-6", "max_grad_norm": None, "lora_r": 4}, GRPOConfig, "x")
    assert fields == {"learning_rate": 1e-6, "max_grad_norm": None, "lora_r": 4}


def test_a_suite_entry_of_the_wrong_type_is_refused():
    with pytest.raises(BadInput, match="suite: n must be an integer, got 'many'"):
        check_config_fields({"id": "math/Arithmetic-v0", "n": "many"}, EnvEval, "suite")

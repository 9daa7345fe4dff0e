"""Reading what people write (envgym.config): one line per mistake naming the file, the key path and what is
accepted; env arguments checked against what the env takes; recipe and suite files found by name; YAML errors with
file and line, and YAML 1.2's numbers."""

import pytest

from envgym.agents.evaluation.suite import EnvEval
from envgym.agents.training.config import GRPOConfig
from envgym.config import PACKAGE_DIR, BadInput, check_env, find_config, read_mapping, validate


def test_env_kwargs_the_entry_point_does_not_take_are_refused_with_the_accepted_ones():
    with pytest.raises(ValueError, match=r"takes no argument 'difficulti'; it accepts difficulty"):
        check_env("math/Arithmetic-v0", {"difficulti": 2})


def test_the_keywords_make_takes_itself_are_accepted_for_any_env():
    check_env("math/Arithmetic-v0", {"difficulty": 1, "max_turns": 2, "system_prompt": "s", "few_shot": []})


def test_an_unknown_env_id_says_did_you_mean():
    with pytest.raises(ValueError, match="Did you mean 'math/Arithmetic-v0'"):
        check_env("math/Arithmetc-v0", {})


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


def test_yaml_reads_numbers_as_yaml_1_2_does(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("learning_rate: 1e-6\nlr: 2.0e-4\nsteps: 3\nname: 1.2.3\n")
    assert read_mapping(path) == {"learning_rate": 1e-6, "lr": 2e-4, "steps": 3, "name": "1.2.3"}


def test_a_config_value_of_the_wrong_type_names_the_field_and_the_type():
    with pytest.raises(BadInput, match=r"^x.yaml: learning_rate must be a float, got 'fast'$"):
        validate(GRPOConfig, {"learning_rate": "fast"}, "x.yaml")


def test_values_are_taken_as_written_and_optional_fields_take_null():
    config = validate(GRPOConfig, {"learning_rate": 1e-6, "max_grad_norm": None, "lora_r": 4}, "x")
    assert (config.learning_rate, config.max_grad_norm, config.lora_r) == (1e-6, None, 4)
    with pytest.raises(BadInput, match=r"^x: lora_r must be an integer, got '4'$"):
        validate(GRPOConfig, {"lora_r": "4"}, "x")
    with pytest.raises(BadInput, match=r"^x: gradient_checkpointing must be true or false, got 1$"):
        validate(GRPOConfig, {"gradient_checkpointing": 1}, "x")


def test_unknown_keys_are_listed_together_with_the_known_ones():
    with pytest.raises(BadInput, match=r"^x: unknown keys 'lr', 'steps'; known keys are adam_beta1, .*weight_decay$"):
        validate(GRPOConfig, {"lr": 1.0, "steps": 2}, "x")


def test_the_branches_of_a_union_are_one_line():
    with pytest.raises(BadInput, match=r"^x: lora_target_modules must be a string or a list, got 3$"):
        validate(GRPOConfig, {"lora_target_modules": 3}, "x")


def test_a_rule_of_the_model_is_its_own_message_under_the_file():
    with pytest.raises(BadInput, match=r"^x: num_generations must be >= 2 .*, got 1$"):
        validate(GRPOConfig, {"num_generations": 1}, "x")


def test_a_suite_entry_of_the_wrong_type_is_refused():
    with pytest.raises(BadInput, match=r"^suite: num_generations must be an integer, got 'many'$"):
        validate(EnvEval, {"env": "math/Arithmetic-v0", "num_generations": "many"}, "suite")


def test_flags_are_named_as_flags():
    from envgym.cli.options import EngineOptions

    with pytest.raises(BadInput, match=r"^--max-model-len must be a number >= 1, got 0$"):
        validate(EngineOptions, {"max_model_len": 0}, "--")

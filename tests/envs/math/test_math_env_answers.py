"""What the math envs accept as an answer (issue 19): compute tasks want a value, every env declares its honest
reference and wrong answers, and answers that are no answer are policy mistakes."""

import json

import pytest

import envgym

PROCEDURAL = ["math/Arithmetic-v0", "math/Algebra-v0"]


def play(env, action, task_index=0):
    env.reset(seed=0, options={"task_index": task_index})
    _, reward, terminated, _, info = env.step(action)
    return reward, info


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_copying_the_questions_expression_into_the_box_earns_nothing(difficulty):
    env = envgym.make("math/Arithmetic-v0", difficulty=difficulty)
    for index in range(5):
        expression = env.unwrapped.tasks.get(index).metadata["expression"]
        reward, info = play(env, f"\\boxed{{{expression}}}", index)
        assert (reward, info["reason"], info["action_valid"]) == (0.0, "not_simplified", False), expression
        assert "not a simplified value" in info["action_error"]


def test_an_unreduced_fraction_or_an_equation_earns_nothing_in_algebra():
    env = envgym.make("math/Algebra-v0", difficulty=2)
    env.reset(seed=0, options={"task_index": 0})
    gold = env.unwrapped.task.answer
    numerator, _, denominator = gold.partition("/")
    unreduced = f"\\frac{{{int(numerator) * 2}}}{{{int(denominator or 1) * 2}}}"
    assert play(env, f"\\boxed{{{unreduced}}}")[1]["reason"] == "not_simplified"
    assert play(env, f"\\boxed{{x = {gold}}}")[0] == 1.0


@pytest.mark.parametrize("env_id", [*PROCEDURAL, "math/Dataset-v0", "math/PythonTool-v0"])
def test_the_reference_action_earns_full_reward_and_the_wrong_action_none(env_id):
    env = envgym.make(env_id)
    for index in range(4):
        env.reset(seed=0, options={"task_index": index})
        reference, wrong = env.reference_action(), env.wrong_action()
        _, reward, terminated, _, info = env.step(reference)
        assert (reward, terminated, info["correct"]) == (1.0, True, True), reference
        env.reset(seed=0, options={"task_index": index})
        _, reward, _, _, info = env.step(wrong)
        assert (reward, info["correct"], info["action_valid"]) == (0.0, False, True), wrong


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_the_reference_action_earns_at_every_difficulty(difficulty):
    for env_id in PROCEDURAL:
        env = envgym.make(env_id, difficulty=difficulty)
        for index in range(5):
            env.reset(seed=0, options={"task_index": index})
            assert env.step(env.reference_action())[1] == 1.0


def test_an_answer_over_the_length_cap_is_a_policy_mistake():
    env = envgym.make("math/Arithmetic-v0")
    reward, info = play(env, "\\boxed{" + "1" * 2000 + "}")
    assert (reward, info["reason"], info["action_valid"]) == (0.0, "too_long", False)
    assert "too long" in info["action_error"]


def test_a_100_kb_answer_of_repeated_phrases_is_answered_at_once():
    env = envgym.make("math/Arithmetic-v0")
    reward, info = play(env, "The final answer is 5 " * 5000)
    assert reward == 0.0 and info["reason"] in ("no_answer", "incorrect", "too_long")


def test_strict_envs_take_only_the_box():
    env = envgym.make("math/Arithmetic-v0", strict=True)
    env.reset(seed=0, options={"task_index": 0})
    gold = env.unwrapped.task.answer
    assert play(env, f"The answer is {gold}.")[1]["reason"] == "no_answer"
    assert play(env, f"\\boxed{{{gold}}}")[0] == 1.0


def test_the_dataset_env_keeps_expression_golds_in_any_form(tmp_path):
    path = tmp_path / "trig.jsonl"
    path.write_text(json.dumps({"question": "What is sin 60 degrees?", "answer": "\\frac{\\sqrt{3}}{2}"}) + "\n")
    env = envgym.make("math/Dataset-v0", path=str(path))
    assert play(env, "\\boxed{\\frac{\\sqrt{3}}{2}}")[0] == 1.0
    assert play(env, "\\boxed{\\frac{\\sqrt{12}}{4}}")[0] == 1.0
    assert play(env, env.reference_action())[0] == 1.0
    literal = envgym.make("math/Dataset-v0", path=str(path), form="literal")
    assert play(literal, "\\boxed{\\frac{\\sqrt{3}}{2}}")[1]["reason"] == "not_simplified"


def test_a_bad_form_is_rejected_with_the_choices():
    with pytest.raises(ValueError, match="form must be one of"):
        envgym.make("math/Arithmetic-v0", form="simplified")


def test_a_dataset_env_takes_the_percent_convention(tmp_path):
    path = tmp_path / "percent.jsonl"
    path.write_text(json.dumps({"question": "What percent of 80 is 20?", "answer": "25"}) + "\n")
    assert play(envgym.make("math/Dataset-v0", path=str(path)), "\\boxed{25\\%}")[0] == 0.0
    unit = envgym.make("math/Dataset-v0", path=str(path), conventions={"percent": "unit"})
    assert play(unit, "\\boxed{25\\%}")[0] == 1.0
    with pytest.raises(ValueError, match="unknown conventions"):
        envgym.make("math/Dataset-v0", path=str(path), conventions={"percents": "unit"})


def test_the_gsm8k_preset_wants_the_number_not_a_formula(tmp_path):
    path = tmp_path / "gsm8k.jsonl"
    path.write_text(
        json.dumps(
            {"question": "Ann has 3 boxes of 12 eggs. She uses 5. How many are left?", "answer": "36 - 5 = 31\n#### 31"}
        )
        + "\n"
    )
    env = envgym.make("math/Dataset-v0", path=str(path), preset="gsm8k")
    assert play(env, "\\boxed{3 \\cdot 12 - 5}")[1]["reason"] == "not_simplified"
    assert play(env, "The answer is 31 eggs.")[0] == 1.0
    assert (
        play(envgym.make("math/Dataset-v0", path=str(path), preset="gsm8k", form="any"), "\\boxed{3 \\cdot 12 - 5}")[0]
        == 1.0
    )

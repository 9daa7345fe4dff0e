"""math/Arithmetic-v0, math/Algebra-v0 and math/Dataset-v0: contract, exact answers, gold -> 1, wrong -> 0."""

import json
import re
from fractions import Fraction

import pytest
import sympy
from sympy.parsing.sympy_parser import implicit_multiplication, parse_expr, standard_transformations

import envgym
from envgym.utils import check_env


def play(env, answer_text, task_index=0):
    env.reset(seed=0, options={"task_index": task_index})
    _, reward, terminated, truncated, info = env.step(answer_text)
    return reward, terminated, info


@pytest.mark.parametrize("env_id", ["math/Arithmetic-v0", "math/Algebra-v0", "math/Dataset-v0"])
def test_math_env_passes_check_env(env_id):
    env = envgym.make(env_id)
    check_env(env)


@pytest.mark.parametrize("env_id", ["math/Arithmetic-v0", "math/Algebra-v0"])
@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_gold_answer_scores_1_and_a_wrong_one_0(env_id, difficulty):
    env = envgym.make(env_id, difficulty=difficulty)
    for index in range(5):
        env.reset(seed=0, options={"task_index": index})
        gold = env.unwrapped.task.answer
        reward, terminated, info = play(env, f"The result is \\boxed{{{gold}}}.", index)
        assert (reward, terminated, info["correct"]) == (1.0, True, True), (env.unwrapped.task.messages, gold)
        reward, _, info = play(env, "\\boxed{123456789}", index)
        assert (reward, info["correct"], info["reward_components"]) == (0.0, False, {"correct": 0.0})


def test_a_response_without_a_final_answer_is_invalid_and_scores_0():
    env = envgym.make("math/Arithmetic-v0")
    reward, terminated, info = play(env, "I would rather not say.")
    assert (reward, terminated, info["action_valid"], info["reason"]) == (0.0, True, False, "no_answer")


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_arithmetic_answers_are_the_exact_value_of_the_expression(difficulty):
    env = envgym.make("math/Arithmetic-v0", difficulty=difficulty)
    for index in range(20):
        task = env.unwrapped.tasks.get(index)
        exact = eval(re.sub(r"\d+", lambda m: f"Fraction({m.group()})", task.metadata["expression"]))
        assert Fraction(task.answer) == exact


@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_algebra_answers_solve_their_equations(difficulty):
    x, y = sympy.symbols("x y")
    transformations = standard_transformations + (implicit_multiplication,)
    env = envgym.make("math/Algebra-v0", difficulty=difficulty)
    for index in range(10):
        task = env.unwrapped.tasks.get(index)
        text = task.messages[0]["content"].replace("^", "**")
        equations = re.findall(r"([-\dxy*+ ]+) = ([-\d/xy+ ]+?)(?=\.| and|$)", text)
        values = [sympy.Rational(v) for v in re.findall(r"-?\d+(?:/\d+)?", task.answer)]
        for lhs, rhs in equations:
            difference = parse_expr(lhs, transformations=transformations) - parse_expr(
                rhs, transformations=transformations
            )
            if difficulty == 3:  # both roots solve the quadratic
                assert all(difference.subs(x, v) == 0 for v in values)
            else:
                assert difference.subs({x: values[0], y: values[-1]}) == 0, (text, task.answer)


def test_difficulty_outside_1_to_5_is_rejected():
    with pytest.raises(ValueError, match="difficulty must be an integer from 1 to 5"):
        envgym.make("math/Algebra-v0", difficulty=9)


def test_procedural_tasks_are_deterministic_per_index():
    first = envgym.make("math/Algebra-v0", difficulty=3).unwrapped.tasks.get(7)
    second = envgym.make("math/Algebra-v0", difficulty=3).unwrapped.tasks.get(7)
    assert (first.messages, first.answer) == (second.messages, second.answer)


# --- Dataset-v0 -------------------------------------------------------------------------------------


@pytest.fixture
def gsm8k_file(tmp_path):
    path = tmp_path / "gsm8k.jsonl"
    rows = [
        {
            "question": "Ann has 3 boxes of 12 eggs. She uses 5. How many are left?",
            "answer": "3 * 12 = <<3*12=36>>36. 36 - 5 = <<36-5=31>>31.\n#### 31",
        },
        {
            "question": "A shop sells 1,250 pens a week. How many in 4 weeks?",
            "answer": "1250 * 4 = <<1250*4=5000>>5000\n#### 5,000",
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def math_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "math.parquet"
    table = pa.Table.from_pylist(
        [
            {
                "problem": "Simplify $\\sqrt{8}$.",
                "solution": "$\\sqrt{8} = \\sqrt{4 \\cdot 2} = \\boxed{2\\sqrt{2}}$.",
                "level": "Level 1",
            },
            {
                "problem": "Solve $x^2 = 4$ for $x > 0$.",
                "solution": "So $x = \\boxed{\\{2\\}}$ hmm, $\\boxed{2}$.",
                "level": "Level 2",
            },
        ]
    )
    pq.write_table(table, path)
    return path


def test_gsm8k_preset_reads_the_answer_after_the_hashes(gsm8k_file):
    env = envgym.make("math/Dataset-v0", path=str(gsm8k_file), preset="gsm8k")
    check_env(env)
    assert [env.unwrapped.tasks.get(i).answer for i in range(2)] == ["31", "5000"]
    assert play(env, "#### 31", 0)[0] == 1.0
    assert play(env, "The answer is 5,000.", 1)[0] == 1.0
    assert play(env, "\\boxed{30}", 0)[0] == 0.0


def test_math_preset_reads_the_last_boxed_answer_from_parquet(math_parquet):
    env = envgym.make("math/Dataset-v0", path=str(math_parquet), preset="math")
    check_env(env)
    assert [env.unwrapped.tasks.get(i).answer for i in range(2)] == ["2\\sqrt{2}", "2"]
    assert env.unwrapped.tasks.get(0).metadata == {"level": "Level 1"}
    assert play(env, "\\boxed{\\sqrt{8}}", 0)[0] == 1.0
    assert play(env, "\\boxed{3\\sqrt{2}}", 0)[0] == 0.0


def test_hugging_face_datasets_load_through_the_same_field_map(gsm8k_file, tmp_path):
    from_file = envgym.make("math/Dataset-v0", hf="json", data_files=str(gsm8k_file), preset="gsm8k")
    assert play(from_file, "\\boxed{31}", 0)[0] == 1.0

    import datasets

    folder = tmp_path / "saved"
    datasets.Dataset.from_list([{"problem": "1/2 + 1/4?", "solution": "\\boxed{\\frac34}"}]).save_to_disk(str(folder))
    saved = envgym.make("math/Dataset-v0", hf=str(folder), preset="math")
    assert play(saved, "\\boxed{0.75}", 0)[0] == 1.0


def test_custom_field_names_override_the_preset(tmp_path):
    path = tmp_path / "custom.jsonl"
    path.write_text(json.dumps({"q": "What is 2 + 2?", "final": "4", "uid": "x1"}) + "\n")
    env = envgym.make("math/Dataset-v0", path=str(path), prompt_field="q", answer_field="final", id_field="uid")
    messages, info = env.reset(seed=0, options={"task_index": 0})
    assert info["task_id"] == "x1" and "What is 2 + 2?" in messages[-1]["content"]
    assert env.step("\\boxed{4}")[1] == 1.0


def test_bad_sources_and_presets_are_rejected_with_the_options(gsm8k_file):
    with pytest.raises(ValueError, match="unknown preset"):
        envgym.make("math/Dataset-v0", path=str(gsm8k_file), preset="aime")
    with pytest.raises(ValueError, match="give one source"):
        envgym.make("math/Dataset-v0", path=str(gsm8k_file), hf="gsm8k")
    with pytest.raises(ValueError, match="cannot tell the format"):
        envgym.make("math/Dataset-v0", path="problems.csv")

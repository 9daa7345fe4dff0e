"""science/MultipleChoice-v0: computed answers, uniform answer letters, letter and text answers, hedges, files."""

import json
from collections import Counter

import pytest

import envgym
from envgym.envs.science.multiple_choice import LETTERS
from envgym.utils import check_env


def reset(index=0, **kwargs):
    env = envgym.make("science/MultipleChoice-v0", **kwargs)
    env.reset(options={"task_index": index})
    return env


def test_the_reference_answer_earns_1_and_the_wrong_one_0():
    env = envgym.make("science/MultipleChoice-v0")
    for index in range(40):
        env.reset(options={"task_index": index})
        assert env.step(env.reference_action())[1] == 1.0
        env.reset(options={"task_index": index})
        _, reward, _, _, info = env.step(env.wrong_action())
        assert reward == 0.0 and info["action_valid"]


def test_the_answer_letter_is_uniform_so_a_constant_letter_earns_about_a_quarter():
    env = envgym.make("science/MultipleChoice-v0")
    letters = Counter()
    for index in range(800):
        env.reset(options={"task_index": index})
        letters[env.task.answer] += 1
    assert set(letters) == set("ABCD") and all(160 <= count <= 240 for count in letters.values()), letters


def test_every_task_has_four_distinct_options_and_the_gold_is_the_computed_value():
    env = envgym.make("science/MultipleChoice-v0", topics=["kinematics"])
    for index in range(30):
        env.reset(options={"task_index": index})
        options = env.task.metadata["options"]
        assert len(set(options)) == 4
        question = env.task.messages[0]["content"].split("\n")[0]
        a, t = (int(word) for word in question.split() if word.isdigit())
        assert options[LETTERS.index(env.task.answer)] == f"{a * t * t / 2:.3g} m"


def test_the_options_full_text_counts_as_its_letter():
    env = reset(3)
    gold_text = env.task.metadata["options"][LETTERS.index(env.task.answer)]
    assert env.step(f"It is \\boxed{{{gold_text.upper()}}}")[1] == 1.0
    env = reset(3)
    assert env.step(f"<answer>{gold_text}</answer>")[1] == 1.0


@pytest.mark.parametrize(
    "template",
    [
        "\\boxed{{{gold_text}}} or maybe **{other}**",
        "The answer is {gold} or {other}",
        "<answer>{gold}</answer> <answer>{other}</answer>",
    ],
)
def test_naming_two_options_is_a_hedge_and_earns_0(template):
    env = reset(5)
    gold = env.task.answer
    other = LETTERS[(LETTERS.index(gold) + 1) % 4]
    gold_text = env.task.metadata["options"][LETTERS.index(gold)]
    _, reward, _, _, info = env.step(template.format(gold=gold, other=other, gold_text=gold_text))
    assert reward == 0.0 and not info["action_valid"]


def test_echoing_the_prompt_chooses_nothing():
    env = reset(1)
    _, reward, _, _, info = env.step(env.task.messages[0]["content"])
    assert reward == 0.0 and not info["action_valid"]


def test_a_mmlu_pro_style_jsonl_file_with_letters_and_indices(tmp_path):
    path = tmp_path / "mmlu_pro.jsonl"
    rows = [
        {
            "question": "Which is a noble gas?",
            "options": ["N2", "Ar", "O2", "H2", "Cl2"],
            "answer": "B",
            "category": "chemistry",
        },
        {"question": "SI unit of force?", "choices": ["joule", "watt", "newton"], "answer_index": 2},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    env = envgym.make("science/MultipleChoice-v0", path=str(path))
    _, info = env.reset(options={"task_index": 0})
    assert "(E) Cl2" in env.task.messages[0]["content"] and info["topic"] == "chemistry"
    assert env.step("The answer is (B).")[1] == 1.0
    env.reset(options={"task_index": 1})
    assert env.step("\\boxed{newton}")[1] == 1.0


def test_a_gpqa_style_parquet_file(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "gpqa.parquet"
    pq.write_table(
        pyarrow.Table.from_pylist([{"question": "Spin of a photon?", "options": ["0", "1/2", "1", "2"], "answer": 2}]),
        path,
    )
    env = envgym.make("science/MultipleChoice-v0", path=str(path))
    env.reset(options={"task_index": 0})
    assert env.step(env.reference_action())[1] == 1.0 and env.task.answer == "C"


@pytest.mark.parametrize(
    "row, message",
    [
        ({"question": "q", "options": ["a"], "answer": 0}, "options"),
        ({"question": "q", "options": ["a", "b"], "answer": "C"}, "answer must be"),
    ],
)
def test_a_bad_file_record_is_refused_with_what_is_accepted(tmp_path, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match=message):
        envgym.make("science/MultipleChoice-v0", path=str(path))


def test_unknown_topics_are_refused():
    with pytest.raises(ValueError, match="topics must be"):
        envgym.make("science/MultipleChoice-v0", topics=["alchemy"])


def test_passes_check_env():
    check_env(envgym.make("science/MultipleChoice-v0"))

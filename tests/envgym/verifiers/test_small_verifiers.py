"""qa (EM/F1), choice (letters, numeric tolerance) and vote (TTRL majority) on real-looking inputs."""

import pytest

from envgym.verifiers.choice import choice_correct, extract_choice, numeric_close
from envgym.verifiers.qa import exact_match, normalize_answer, token_f1
from envgym.verifiers.vote import majority_vote


def test_squad_normalization_drops_case_punctuation_and_articles():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"


def test_exact_match_takes_the_best_gold():
    assert exact_match("eiffel tower", ["Tour Eiffel", "the Eiffel Tower"]) == 1.0
    assert exact_match("Louvre", ["the Eiffel Tower"]) == 0.0


def test_token_f1_gives_partial_credit_for_overlap():
    assert token_f1("Barack Obama", "President Barack Hussein Obama") == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert token_f1("Obama", ["Bush", "Obama"]) == 1.0
    assert token_f1("", "") == 1.0 and token_f1("x", "") == 0.0


def test_golds_must_be_strings():
    with pytest.raises(ValueError, match="non-empty list of strings"):
        exact_match("a", [])


@pytest.mark.parametrize(
    "text, letter",
    [
        ("After eliminating the others, the answer is (C).", "C"),
        ("Answer: b", "B"),
        ("I pick **D** here.", "D"),
        ("Final: \\boxed{A}", "A"),
        ("(E)", "E"),
        ("A good question; I am not sure.", None),
        ("B)", "B"),
        ("The correct option is (B) 42.", "B"),
        ("The answer is B because C is wrong.", "B"),
        ("Option C is correct.", "C"),
        ("答案：C", "C"),
        ("正确答案是 (C)", "C"),
        ("答え：C", "C"),
        ("Réponse : C", "C"),
        ("Die Antwort ist C.", "C"),
        ("Ответ: C", "C"),
        ("**C.**", "C"),
        ("**C. 42**", "C"),
        ("B。 不是 A", "B"),
        ("The answer is for sure D, it can't be A or B", "D"),
    ],
)
def test_extract_choice_finds_the_committed_letter(text, letter):
    assert extract_choice(text) == letter


@pytest.mark.parametrize(
    "text",
    [
        "The answer is A or B.",
        "(A) 5 (B) 6",
        "\\boxed{A} ... **C**",
        "Answer: A, C",
        "Option A is wrong and option C is right.",
        "答案：A或C",
        "**A. 5** and **C. 6**",
        "**A good guess**",
        "The answer is definitely A or B",
    ],
)
def test_extract_choice_refuses_hedges_between_letters(text):
    assert extract_choice(text) is None


def test_extract_choice_reads_no_article_as_a_letter():
    assert extract_choice("The answer is a prime number.") is None


def test_choice_correct_compares_letters():
    assert choice_correct("The answer is B.", "(B)") == 1.0
    assert choice_correct("The answer is B.", "C") == 0.0


def test_numeric_close_uses_a_relative_tolerance():
    assert numeric_close("1,000.0000001", 1000)
    assert not numeric_close("1001", "1000")
    assert not numeric_close("about ten", "10")


def test_numeric_close_refuses_nan_and_infinities():
    assert not numeric_close("nan", "nan") and not numeric_close("inf", "inf")


def test_majority_vote_rewards_the_responses_that_agree_with_the_majority():
    group = [
        "So x = \\boxed{\\frac{1}{2}}",
        "I get \\boxed{0.5}",
        "Hence \\boxed{2}",
        "The answer is 1/2",
        "I give up.",
    ]
    vote = majority_vote(group)
    assert vote.label == "\\frac{1}{2}"
    assert vote.rewards == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert vote.answers[-1] is None and vote.agreement == pytest.approx(3 / 5)


def test_a_tie_goes_to_the_answer_seen_first():
    assert majority_vote(["\\boxed{3}", "\\boxed{4}"]).rewards == [1.0, 0.0]


def test_a_group_without_any_answer_has_no_label():
    vote = majority_vote(["hmm", "no idea"])
    assert (vote.label, vote.rewards) == (None, [0.0, 0.0])


def test_majority_vote_works_on_any_answer_kind_with_custom_extract_and_equality():
    vote = majority_vote(["Paris.", "paris", "Lyon"], extract=lambda r: r, same=lambda a, b: exact_match(a, b) == 1.0)
    assert vote.rewards == [1.0, 1.0, 0.0]


def test_majority_vote_rejects_a_single_string():
    with pytest.raises(ValueError, match="non-empty list"):
        majority_vote("\\boxed{1}")

"""The math verifier under attack: every case of issue 19 ("Why / math") and the tricks we tried ourselves.

Each test names the trick; each earned reward (or hung, or could have run code) before the fix.
"""

import pytest

from envgym.verifiers.math import Conventions, grade, warm_up


def earns(response: str, gold: str, **options) -> bool:
    return grade(response, gold, **options).correct


# --- the answer's form is part of the task ----------------------------------------------------------


def test_the_questions_expression_copied_into_the_box_earns_nothing_where_a_value_is_asked():
    result = grade("\\boxed{85 - 51 + 30}", "64", form="literal")
    assert (result.reward, result.reason) == (0.0, "not_simplified")
    assert "not a simplified value" in result.detail


def test_a_formula_left_for_the_verifier_to_evaluate_earns_nothing_where_a_value_is_asked():
    for formula in ("2^{6}", "\\frac{128}{2}", "8 \\cdot 8", "\\sqrt{4096}", "6.4e1", "64/1"):
        assert not earns(f"\\boxed{{{formula}}}", "64", form="literal"), formula


def test_an_equation_earns_nothing_where_a_value_is_asked():
    assert grade("\\boxed{30 + 34 = 64}", "64", form="literal").reason == "not_simplified"


def test_the_value_itself_earns_where_a_value_is_asked():
    assert earns("\\boxed{64}", "64", form="literal")
    assert earns("\\boxed{-\\frac{7}{3}}", "-7/3", form="literal")
    assert earns("so \\boxed{x = -7/3}", "-7/3", form="literal")


def test_any_form_stays_valid_where_the_gold_is_an_expression():
    assert earns("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt{3}}{2}")
    assert earns("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt{3}}{2}", form="literal") is False


# --- relations are checked, not read as their last side ---------------------------------------------


def test_a_false_equation_earns_nothing_for_its_last_side():
    assert not earns("\\boxed{0 = 16}", "16")


def test_a_false_chain_after_a_name_earns_nothing():
    assert not earns("\\boxed{x = 3 = 16}", "16")


def test_a_false_approximation_earns_nothing():
    assert not earns("\\boxed{16 \\approx 0}", "16")


def test_a_variable_assignment_stays_right():
    assert earns("\\boxed{x = 16}", "16")


# --- trailing words are a unit only when they are one -----------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "16 \\text{ is not the answer}",
        "16 \\text{ or more}",
        "16 \\text{ at least}",
        "16 \\text{ maybe}",
        "16 \\text{ or } 17",
    ],
)
def test_trailing_words_that_are_not_a_unit_earn_nothing(answer):
    assert not earns(f"\\boxed{{{answer}}}", "16")


# --- lists: order, labels and multiplicity follow the gold ------------------------------------------


def test_an_unlabelled_pair_is_read_in_the_order_of_a_labelled_gold():
    assert not earns("\\boxed{4, 3}", "x=3, y=4")
    assert earns("\\boxed{3, 4}", "x=3, y=4")
    assert earns("\\boxed{y = 4, x = 3}", "x=3, y=4")


def test_repeated_items_do_not_collapse_against_a_gold_with_multiplicity():
    assert not earns("\\boxed{2, 2, 3}", "2, 3, 3")
    assert earns("\\boxed{3, 2, 3}", "2, 3, 3")


def test_a_bare_list_is_not_an_interval():
    assert not earns("\\boxed{2, 3}", "[2, 3]")
    assert not earns("\\boxed{2, 3}", "(2, 3]")


def test_a_percentage_is_not_its_figure_when_the_gold_is_a_plain_number():
    assert not earns("\\boxed{0.5\\%}", "0.5")
    assert earns("\\boxed{0.5\\%}", "0.005")
    assert earns("\\boxed{25}", "25\\%")


def test_the_percent_and_list_conventions_are_options():
    assert earns("\\boxed{0.5\\%}", "0.5", conventions=Conventions(percent="either"))
    assert earns("\\boxed{0.5\\%}", "0.5", conventions=Conventions(percent="unit"))
    assert not earns("\\boxed{3, 2}", "2, 3", conventions=Conventions(lists="ordered"))
    assert earns("\\boxed{3, 2}", "2, 3")
    with pytest.raises(ValueError, match="percent must be one of"):
        Conventions(percent="half")


# --- candidate lists and hedges ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "response",
    [
        "\\boxed{3} or \\boxed{4}",
        "\\boxed{3 or 4}",
        "\\boxed{3}, \\boxed{4}",
        "\\boxed{3}. Or maybe \\boxed{4}.",
        "\\boxed{3}\\boxed{4}",
        "\\boxed{3, 4}",
        "\\boxed{3 \\text{ or } 4}",
        "The answer is 3 or 4.",
        "<answer>3 or 4</answer>",
        "\\boxed{3 \\pm 1}",
        "\\boxed{\\{3, 4\\}}",
    ],
)
def test_candidate_lists_and_hedges_never_earn(response):
    assert not earns(response, "3") and not earns(response, "4")


def test_a_hedged_choice_never_earns():
    assert not earns("The answer is A or B.", "A")
    assert not earns("The answer is (A) and (C).", "C")


# --- numbers that are not numbers --------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["nan", "NaN", "\\infty", "inf", "1e999", "10^{999}", "-0", "\\text{undefined}"])
def test_nan_infinity_and_huge_numbers_earn_nothing(answer):
    assert not earns(f"\\boxed{{{answer}}}", "16")


@pytest.mark.parametrize("digits", ["١٦", "１６", "۱۶", "१६", "¹⁶", "𝟏𝟔", "l6", "I6", "１6"])
def test_digits_of_other_scripts_and_look_alikes_earn_nothing(digits):
    assert not earns(f"\\boxed{{{digits}}}", "16")


def test_nested_boxes_are_read_as_their_content_and_nothing_more():
    assert earns("\\boxed{\\boxed{16}}", "16")
    assert not earns("\\boxed{\\boxed{15}}", "16")
    assert not earns("\\boxed{\\boxed{15} \\boxed{16}}", "16")


CODE = [
    "__import__('pathlib').Path('{marker}').touch()",
    "(lambda: __import__('os').system('touch {marker}'))()",
    "().__class__.__base__.__subclasses__()",
    "exec(\"open('{marker}', 'w').close()\")",
    "eval('1+1')",
    "Symbol('x').__class__",
    "\\text{__import__('os').system('touch {marker}')}",
    "f(x)=__import__('os').system('touch {marker}')",
]


@pytest.mark.parametrize("payload", CODE, ids=range(len(CODE)))
def test_code_shaped_answers_are_never_executed(payload, tmp_path):
    warm_up()
    marker = tmp_path / "ran"
    text = payload.replace("{marker}", str(marker))
    for gold in ("16", "x^2", "\\frac{\\sqrt{3}}{2}", "x = 2"):
        assert not earns(f"\\boxed{{{text}}}", gold)
    assert not marker.exists()


def test_a_huge_answer_is_too_long_and_decided_without_parsing():
    result = grade("\\boxed{" + "1+" * 5_000 + "1}", "5001")
    assert (result.reward, result.reason) == (0.0, "too_long")


def test_an_answer_that_starts_before_the_scanned_tail_is_no_answer():
    assert grade("\\boxed{" + "1+" * 50_000 + "1}", "50001").reason == "no_answer"


@pytest.mark.parametrize("answer", ["9^{(9^9)}", "(9)^{9^{9}}", "10000!"])
def test_numbers_too_large_to_expand_are_refused_before_sympy_even_in_brackets(answer):
    from envgym.verifiers.math import compare

    assert compare(answer, "1") == (False, "too_large")

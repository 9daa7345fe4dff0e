"""envgym.verifiers.math_form: what counts as a simplified literal where a task asks for a value."""

import pytest

from envgym.verifiers.math_form import literal_error


@pytest.mark.parametrize(
    "answer",
    [
        "64",
        "-7",
        "+3",
        "1,000",
        "0.75",
        "-7/3",
        "\\frac{-7}{3}",
        "-\\frac{7}{3}",
        "\\dfrac{7}{3}",
        "x = 7/3",
        "(1/2, 3)",
        "-2, 5",
        "x = 3, y = 4",
        "\\text{64}",
    ],
)
def test_integers_reduced_fractions_decimals_and_structures_of_them_are_literals(answer):
    assert literal_error(answer) is None


@pytest.mark.parametrize(
    "answer",
    [
        "85 - 51 + 30",
        "2^{6}",
        "\\sqrt{4}",
        "6.4e1",
        "8 \\cdot 8",
        "(64)",
        "64\\%",
        "64 \\text{ cm}",
        "\\pi",
        "1 \\pm 2",
        "\\text{sixty-four}",
    ],
)
def test_operations_percentages_units_and_words_are_not_literals(answer):
    assert "not a simplified value" in literal_error(answer)


@pytest.mark.parametrize("answer", ["14/6", "4/1", "\\frac{0}{5}", "\\frac{2}{4}"])
def test_a_fraction_not_in_lowest_terms_is_not_a_literal(answer):
    assert "not in lowest terms" in literal_error(answer)


@pytest.mark.parametrize("answer", ["30 + 34 = 64", "x = 3 = 3", "64 = 64"])
def test_an_equation_or_chain_is_not_a_literal(answer):
    assert "equation" in literal_error(answer)


def test_a_literal_inside_a_structure_is_checked_item_by_item():
    assert "not a simplified value" in literal_error("(1/2, 1 + 2)")

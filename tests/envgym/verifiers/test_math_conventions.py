"""envgym.verifiers.math_conventions: percent, tolerance and mixed-number conventions on plain numbers."""

import pytest

from envgym.verifiers.math_conventions import Conventions, numbers_equal
from envgym.verifiers.math_normalize import parse_number


def equal(pred, gold, **options):
    return numbers_equal(parse_number(pred), parse_number(gold), Conventions(**options))


def test_by_default_a_percentage_is_its_value():
    assert equal("25%", "0.25") and not equal("25%", "25") and not equal("0.5%", "0.5")


def test_a_percentage_gold_also_accepts_its_figure():
    assert equal("25", "25%") and equal("0.25", "25%") and equal("25%", "25%")


def test_the_unit_reading_drops_the_sign():
    assert equal("25%", "25", percent="unit") and not equal("25%", "0.25", percent="unit")


def test_the_either_reading_accepts_both():
    assert equal("25%", "25", percent="either") and equal("25%", "0.25", percent="either")


def test_a_more_precise_decimal_rounding_to_a_short_gold_is_equal():
    assert equal("3.1416", "3.14") and not equal("3.146", "3.14") and not equal("3.1", "3.14")


def test_a_tie_rounds_to_either_neighbour_so_it_meets_neither():
    assert not equal("3.145", "3.14") and not equal("3.145", "3.15") and not equal("-3.145", "-3.14")
    assert equal("3.1451", "3.15") and equal("-3.1449", "-3.14")


def test_a_whole_number_and_a_proper_fraction_are_a_mixed_number_by_default():
    assert equal("3128 1/2", "3128.5") and equal("3\\frac{1}{2}", "7/2")
    assert parse_number("3 3/2") is None  # an improper fraction makes no mixed number


def test_mixed_numbers_can_be_read_as_products():
    assert parse_number("3 1/2", mixed_numbers=False) is None  # left to sympy: 3 * 1/2
    assert parse_number("3\\frac{1}{2}", mixed_numbers=False) is None


def test_a_one_digit_gold_decimal_and_an_exact_gold_have_no_short_tolerance():
    assert not equal("0.46", "0.5") and not equal("0.33", "1/3")


def test_long_decimals_stand_for_what_they_round_to():
    assert equal("0.333333", "1/3")


def test_without_tolerance_every_number_is_exact():
    assert not equal("0.333333", "1/3", tolerance=False) and not equal("3.1416", "3.14", tolerance=False)
    assert equal("0.75", "3/4", tolerance=False)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"lists": "sorted"}, "lists must be"),
        ({"percent": "ratio"}, "percent must be"),
        ({"tolerance": "yes"}, "tolerance must be"),
        ({"mixed_numbers": "no"}, "mixed_numbers must be"),
    ],
)
def test_bad_conventions_are_rejected_with_the_choices(options, message):
    with pytest.raises(ValueError, match=message):
        Conventions(**options)

"""envgym.verifiers.math_units: trailing text is a unit only when it is one."""

import pytest

from envgym.verifiers.math_units import clock_time, unit_split


@pytest.mark.parametrize(
    "text, value, unit",
    [
        ("12ft", "12", "ft"),
        ("2\\pi cm", "2\\pi", "cm"),
        ("5 cm", "5", "cm"),
        ("5 m", "5", "m"),
        ("5 square feet", "5", "ft^2"),
        ("5 ft^2", "5", "ft^2"),
        ("3 cubic meters", "3", "m^3"),
        ("60 miles per hour", "60", "mi/h"),
        ("3 km/h", "3", "km/h"),
        ("\\frac{1}{2} inches", "\\frac{1}{2}", "in"),
        ("10 dollars", "10", "dollar"),
        ("1000 mL", "1000", "ml"),
        ("5 meters squared", "5", "m^2"),
        ("3 feet cubed", "3", "ft^3"),
        ("50 C", "50", "celsius"),
    ],
)
def test_whitelisted_units_are_split_off_in_a_canonical_spelling(text, value, unit):
    assert unit_split(text) == (value, unit)


def test_spellings_of_one_unit_share_its_canonical_name():
    assert unit_split("5 feet")[1] == unit_split("5 ft")[1] == unit_split("5 foot")[1]


@pytest.mark.parametrize(
    "text", ["16 is not the answer", "16 or more", "16 more", "16 at least", "2x", "x cm", "5 apples"]
)
def test_words_that_are_no_unit_stay_part_of_the_answer(text):
    assert unit_split(text) == (text, None)


@pytest.mark.parametrize("text", ["2m", "5g", "3K", "4V"])
def test_a_one_letter_unit_glued_to_a_number_is_a_product(text):
    assert unit_split(text) == (text, None)  # 2m: metres, 2 times m or two million


@pytest.mark.parametrize(("text", "unit"), [("3s", "s"), ("5h", "h")])
def test_seconds_and_hours_may_be_glued_to_a_number(text, unit):
    assert unit_split(text) == (text[:-1], unit)


@pytest.mark.parametrize(
    ("text", "seconds", "explicit"),
    [
        ("20:34", 20 * 3600 + 34 * 60, False),
        ("20:34:00", 20 * 3600 + 34 * 60, True),
        ("8:34 P.M", 20 * 3600 + 34 * 60, True),
        ("8:34 am", 8 * 3600 + 34 * 60, True),
        ("12:05 a.m.", 5 * 60, True),
        ("12:05 PM", 12 * 3600 + 5 * 60, True),
    ],
)
def test_clock_times_are_seconds_since_midnight(text, seconds, explicit):
    assert clock_time(text) == (seconds, explicit)


@pytest.mark.parametrize("text", ["25:00", "8:61", "13:00 pm", "0:30 am", "8:34:60", "1:2", "8:34 pz"])
def test_impossible_times_are_no_time(text):
    assert clock_time(text) is None

"""envgym.verifiers.math_words: numbers in words and the words that may follow a number."""

import pytest

from envgym.verifiers.math_words import counted_number, spoken_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("five", 5),
        ("Zero", 0),
        ("twenty-one", 21),
        ("ninety nine", 99),
        ("one hundred and five", 105),
        ("three hundred twelve", 312),
        ("two thousand twenty", 2020),
        ("four million three hundred thousand", 4_300_000),
        ("minus three", -3),
    ],
)
def test_a_number_spelled_whole_is_read(text, value):
    assert spoken_number(text) == value


@pytest.mark.parametrize(
    "text",
    ["five apples", "five five", "hundred", "one thousand one million", "zero five", "twenty ninety", "and", "fifth"],
)
def test_anything_but_a_number_spelled_whole_is_no_number(text):
    assert spoken_number(text) is None


@pytest.mark.parametrize(
    ("text", "number"), [("33 eggs", "33"), ("33 eggs.", "33"), ("42 square", "42"), ("$12 dollars total", "$12")]
)
def test_plain_words_after_a_number_name_what_was_counted(text, number):
    assert counted_number(text) == number


@pytest.mark.parametrize(
    "text",
    [
        "16 or more",
        "16 is not right",
        "5 thousand",
        "3 fourths",
        "7 hundredths",
        "3 halves",
        "5 squared",
        "5 pi",
        "2 x",
        "8 pm",
        "5 five",
        "10 tens",
        "5 twenties",
        "5 isn't right",
        "5 nope",
        "33",
        "apples 33",
        "3 apples and 4 pears",
    ],
)
def test_words_that_qualify_or_change_the_number_are_no_count(text):
    assert counted_number(text) is None

"""Issue 19 item 4: one test per class of answer that outside graders' cases exercise, each with cases we wrote,
right and wrong, so that a class is accepted where it is unambiguous and never where it is not."""

import pytest

from envgym.verifiers.math import grade


def check(cases):
    wrong = [(response, gold, expected, grade(response, gold)) for response, gold, expected in cases
             if grade(response, gold).correct != expected]
    assert wrong == []


def test_whole_responses_with_the_answer_outside_a_box():
    check([
        ("...so we get\n\\[ x = \\frac{3}{4} \\]", "3/4", True),  # the last display math
        ("Thus $$\\frac{3}{4}$$", "0.75", True),
        ("<answer>42</answer>", "42", True),
        ("<answer>\\frac{1}{2}</answer>", "0.5", True),
        ("Therefore, the answer is 12.", "12", True),
        ("Answer: 7", "7", True),
        ("**Answer:** 7", "7", True),
        ("We get \\[10^3\\] and then compute 7.", "7", False),  # prose after the math is no marker
        ("I think 42", "42", False),  # no marker at all
        ("The answer is 18 apples.", "18", True),  # what was counted
        ("The answer is 18 or more apples.", "18", False),  # a qualified number
        ("The answer is 16 is not right.", "16", False),
    ])


def test_numbers_followed_by_units():
    check([
        ("\\boxed{12ft}", "12", True),
        ("\\boxed{2\\pi cm}", "2\\pi", True),
        ("\\boxed{5 \\text{ cm}}", "5", True),
        ("\\boxed{5 \\text{ square feet}}", "5", True),
        ("\\boxed{5 \\text{cm}^2}", "5", True),
        ("\\boxed{60 \\text{ miles per hour}}", "60", True),
        ("\\boxed{3 km/h}", "3", True),
        ("\\boxed{\\$12.50}", "12.5", True),
        ("\\boxed{90^\\circ}", "90", True),
        ("\\boxed{20^\\circ \\text{C}}", "20", True),
        ("\\boxed{5 \\text{ cm}}", "5 \\text{ m}", False),  # both carry units, and they differ
        ("\\boxed{5 \\text{ or more}}", "5", False),  # words that are no unit
        ("\\boxed{2m}", "2", False),  # a one-letter unit glued to a number is a product
    ])


def test_chains_stated_as_true_equations():
    check([
        ("\\boxed{\\sqrt{4} = 2}", "2", True),
        ("\\boxed{10^3 = 1000}", "1000", True),
        ("\\boxed{x = 2 + 3 = 5}", "5", True),
        ("\\boxed{\\frac{6}{4} = \\frac{3}{2}}", "3/2", True),
        ("\\boxed{\\sqrt{5} = 2}", "2", False),
        ("\\boxed{10^3 = 100}", "100", False),
        ("\\boxed{2 + 2 = 5}", "5", False),
    ])


def test_multiple_choice_letters_in_common_phrasings():
    check([
        ("(B)", "B", True),
        ("B)", "B", True),
        ("The answer is B", "B", True),
        ("**B**", "B", True),
        ("\\boxed{B}", "B", True),
        ("\\boxed{\\text{(B)}}", "(B)", True),
        ("Answer: (b)", "B", True),
        ("The correct option is (B) 42.", "B", True),
        ("A or B", "B", False),
        ("(A) 5 (B) 6", "B", False),
        ("Both (B) and (C) work.", "B", False),
        ("The answer is a prime number.", "A", False),
    ])


def test_numeric_tolerance_for_golds_given_to_a_few_decimals():
    check([
        ("\\boxed{3.1416}", "3.14", True),  # more precise, rounds to the gold
        ("\\boxed{0.6667}", "0.67", True),
        ("\\boxed{2.71828}", "2.72", True),
        ("\\boxed{3.1}", "3.14", False),  # less precise than the gold
        ("\\boxed{3.15}", "3.14", False),
        ("\\boxed{3.146}", "3.14", False),  # rounds to 3.15
        ("\\boxed{0.33}", "1/3", False),  # an exact gold has no tolerance below 6 digits
        ("\\boxed{0.46}", "0.5", False),  # a one-digit gold may well be exact
        ("\\boxed{\\pi}", "3.14", False),  # an exact answer must equal the gold
    ])


@pytest.mark.parametrize("response", ["\\[ 7 \\]", "<answer>7</answer>", "The answer is 7.", "$$7$$"])
def test_strict_mode_takes_only_the_box(response):
    from envgym.verifiers.math import STRICT_FORMATS

    assert grade(response, "7").correct
    assert grade(response, "7", formats=STRICT_FORMATS).reason == "no_answer"
    assert grade(f"\\boxed{{7}} {response}", "7", formats=STRICT_FORMATS).correct

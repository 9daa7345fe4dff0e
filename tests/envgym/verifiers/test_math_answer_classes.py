"""Issue 19 item 4: one test per class of answer that outside graders' cases exercise, each with cases we wrote,
right and wrong, so that a class is accepted where it is unambiguous and never where it is not."""

import pytest

from envgym.verifiers.math import grade


def check(cases):
    wrong = [
        (response, gold, expected, grade(response, gold))
        for response, gold, expected in cases
        if grade(response, gold).correct != expected
    ]
    assert wrong == []


def test_whole_responses_with_the_answer_outside_a_box():
    check(
        [
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
        ]
    )


def test_numbers_followed_by_units():
    check(
        [
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
        ]
    )


def test_chains_stated_as_true_equations():
    check(
        [
            ("\\boxed{\\sqrt{4} = 2}", "2", True),
            ("\\boxed{10^3 = 1000}", "1000", True),
            ("\\boxed{x = 2 + 3 = 5}", "5", True),
            ("\\boxed{\\frac{6}{4} = \\frac{3}{2}}", "3/2", True),
            ("\\boxed{\\sqrt{5} = 2}", "2", False),
            ("\\boxed{10^3 = 100}", "100", False),
            ("\\boxed{2 + 2 = 5}", "5", False),
        ]
    )


def test_multiple_choice_letters_in_common_phrasings():
    check(
        [
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
        ]
    )


def test_numeric_tolerance_for_golds_given_to_a_few_decimals():
    check(
        [
            ("\\boxed{3.1416}", "3.14", True),  # more precise, rounds to the gold
            ("\\boxed{0.6667}", "0.67", True),
            ("\\boxed{2.71828}", "2.72", True),
            ("\\boxed{3.1}", "3.14", False),  # less precise than the gold
            ("\\boxed{3.15}", "3.14", False),
            ("\\boxed{3.146}", "3.14", False),  # rounds to 3.15
            ("\\boxed{0.33}", "1/3", False),  # an exact gold has no tolerance below 6 digits
            ("\\boxed{0.46}", "0.5", False),  # a one-digit gold may well be exact
            ("\\boxed{\\pi}", "3.14", False),  # an exact answer must equal the gold
        ]
    )


@pytest.mark.parametrize("response", ["\\[ 7 \\]", "<answer>7</answer>", "The answer is 7.", "$$7$$"])
def test_strict_mode_takes_only_the_box(response):
    from envgym.verifiers.math import STRICT_FORMATS

    assert grade(response, "7").correct
    assert grade(response, "7", formats=STRICT_FORMATS).reason == "no_answer"
    assert grade(f"\\boxed{{7}} {response}", "7", formats=STRICT_FORMATS).correct


# Issue 29 item 4: the classes other graders' cases still exercised, each with cases of ours and the negatives
# that must stay refused.


def test_an_answer_stated_as_a_true_relation_or_in_prose():
    check(
        [
            ("$\\log_2 8 = 3$", "3", True),  # the whole response is its answer
            ("$\\binom{5}{2} = 10$", "10", True),
            ("\\(\\sqrt{16} = 4\\).", "4", True),
            ("The result is $3$", "3", True),
            ("The result is $\\log_2 8 = 3$.", "3", True),
            ("42", "42", True),
            ("$\\log_2 8 = 4$", "4", False),  # a false relation holds for nothing
            ("$\\binom{5}{2} = 12$", "12", False),
            ("We know $\\log_2 8 = 3$ and go on.", "3", False),  # inline math in prose is no answer
            ("$3$ or $4$", "3", False),
            ("The result is $3$, so the answer is $4$.", "3", False),  # the later statement wins
        ]
    )


def test_an_answer_tag_after_an_unclosed_think():
    check(
        [
            ("<think>so it is 42 <answer>42</answer>", "42", True),
            ("<think>\nhalf of one\n<answer>\\frac{1}{2}</answer>", "0.5", True),
            ("<think>maybe \\boxed{42}", "42", False),  # only an <answer> tag ends an unclosed thought
            ("<think>The answer is 42", "42", False),
            ("<think><answer>41</answer> no wait <answer>42</answer>", "41", False),
        ]
    )


def test_answer_markers_in_other_languages():
    check(
        [
            ("答案：42", "42", True),
            ("所以答案为 12。", "12", True),
            ("答案是 $\\frac{1}{2}$", "0.5", True),
            ("答え：7", "7", True),
            ("Réponse : 42", "42", True),
            ("La réponse finale est 12.", "12", True),
            ("Die Antwort ist 12.", "12", True),
            ("La respuesta es 12.", "12", True),
            ("A resposta é 12.", "12", True),
            ("La risposta è 12.", "12", True),
            ("Ответ: 12", "12", True),
            ("정답: 12", "12", True),
            ("答案: C", "C", True),
            ("答案：（C）", "C", True),
            ("Die Antwort ist C", "C", True),
            ("Ответ: C", "C", True),
            ("答案：41", "42", False),
            ("Réponse : 41 ou 42", "42", False),  # a hedge in any language is no answer
            ("答案：A或C", "C", False),
        ]
    )


def test_bold_letters_as_a_choice():
    check(
        [
            ("**C**", "C", True),
            ("**C.**", "C", True),
            ("**C. 42**", "C", True),
            ("The correct option is **C**.", "C", True),
            ("**答案：C**", "C", True),
            ("**A. 5** and **C. 6**", "C", False),  # two marked letters: a hedge
            ("**A good guess** would be wrong", "A", False),  # a bold word is no letter
            ("**C**", "B", False),
        ]
    )


def test_unit_words_and_counted_nouns_after_a_number():
    check(
        [
            ("33 eggs.", "33", True),
            ("The answer is 33 eggs.", "33", True),
            ("\\boxed{3s}", "3", True),
            ("\\boxed{2h}", "2", True),
            ("\\boxed{42 square}", "42", True),
            ("\\boxed{5 \\text{ apples}}", "5", True),
            ("\\boxed{33 eggs}", "34", False),
            ("\\boxed{5 thousand}", "5", False),  # a word that changes the number
            ("The answer is 5 thousand.", "5", False),
            ("\\boxed{3 fourths}", "3", False),
            ("\\boxed{3 halves}", "3", False),
            ("\\boxed{5 squared}", "5", False),
            ("\\boxed{2 pi}", "2", False),
            ("\\boxed{8 pm}", "8", False),
            ("\\boxed{16 or more}", "16", False),
            ("\\boxed{2m}", "2", False),  # metres, 2 times m or two million
            ("\\boxed{3k}", "3", False),
        ]
    )


def test_numbers_written_in_words():
    check(
        [
            ("\\boxed{\\text{five}}", "5", True),
            ("The answer is five.", "5", True),
            ("\\boxed{twenty-one}", "21", True),
            ("\\boxed{one hundred and five}", "105", True),
            ("\\boxed{5}", "\\text{five}", True),
            ("\\boxed{five}", "6", False),
            ("\\boxed{five hundred}", "5", False),
            ("\\boxed{fifty}", "15", False),
            ("\\boxed{five or six}", "5", False),
        ]
    )


def test_clock_times():
    check(
        [
            ("\\boxed{20:34:00}", "20:34", True),
            ("\\boxed{8:34 P.M.}", "20:34", True),
            ("\\boxed{08:34 \\text{P.M.}}", "20:34", True),
            ("\\boxed{12:05 a.m.}", "0:05", True),
            ("\\boxed{7:32}", "7:32:00", True),
            ("\\boxed{8:34 A.M.}", "20:34", False),
            ("\\boxed{8:34}", "20:34", False),  # without a.m./p.m. a time is on the 24-hour clock
            ("\\boxed{8:34 P.M.}", "8:34", False),
            ("\\boxed{20:34:01}", "20:34", False),
            ("\\boxed{13:00 p.m.}", "13:00", False),  # no such time
        ]
    )


def test_mixed_numbers():
    check(
        [
            ("\\boxed{3128 1/2}", "3128.5", True),
            ("\\boxed{3\\frac{1}{2}}", "7/2", True),
            ("\\boxed{2\\frac58}", "2.625", True),
            ("\\boxed{-3\\frac{1}{2}}", "-3.5", True),
            ("\\boxed{3 1/2}", "3/2", False),  # by default a mixed number, not a product
            ("\\boxed{3128 1/2}", "3128", False),
        ]
    )


def test_a_column_or_row_vector_against_a_list():
    check(
        [
            ("\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix}}", "(1, 2)", True),
            ("\\boxed{(1, 2)}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", True),
            ("\\boxed{\\begin{pmatrix}1 & 2\\end{pmatrix}}", "(1, 2)", True),
            ("\\boxed{\\begin{bmatrix}\\frac12\\\\1\\end{bmatrix}}", "[0.5, 1]", True),
            ("\\boxed{\\begin{matrix}1\\\\2\\end{matrix}}", "1, 2", True),
            ("\\boxed{\\begin{pmatrix}2\\\\1\\end{pmatrix}}", "(1, 2)", False),  # a vector is ordered
            ("\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix}}", "\\{1, 2\\}", False),  # never a set
            ("\\boxed{\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}}", "(1, 2)", False),
            ("\\boxed{\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}}", "(1, 2, 3, 4)", False),  # a matrix is no list
            ("\\boxed{\\begin{pmatrix}1\\\\2\\end{pmatrix}}", "(1, 2]", False),
        ]
    )


def test_implicit_products_of_powers():
    check(
        [
            ("\\boxed{2^6 3^5 5^4}", "2^6 \\cdot 3^5 \\cdot 5^4", True),
            ("\\boxed{2^6 3^5 5^4}", "9720000", True),
            ("\\boxed{2^{6}3^{5}}", "15552", True),
            ("\\boxed{2^6 3^5 5^4}", "9720001", False),
            ("\\boxed{2^{6}3^{5}}", "2^{63}", False),
        ]
    )


def test_a_chat_end_token_after_the_answer():
    check(
        [
            ("The answer is 42<|im_end|>", "42", True),
            ("\\boxed{42}</s>", "42", True),
            ("Answer: 42<|eot_id|>", "42", True),
            ("42<|endoftext|>", "42", True),
            ("The answer is 41<|im_end|>", "42", False),
            # nothing after the end of the turn was generated as the answer
            ("\\boxed{41}<|im_end|><|im_start|>assistant\n\\boxed{42}", "42", False),
        ]
    )


def test_digit_groups_written_with_a_negative_thin_space():
    check(
        [
            ("\\boxed{1,\\!000}", "1000", True),
            ("\\boxed{56,\\!01,\\!78,\\!95,\\!760}", "56017895760", True),
            ("\\boxed{11,\\! 111,\\! 111,\\! 100}", "11111111100", True),
            ("\\boxed{1,\\!000}", "1", False),
            ("\\boxed{1, 2}", "12", False),  # a plain comma and space is a list
        ]
    )


def test_a_more_precise_decimal_must_round_to_the_gold_under_every_rule():
    check(
        [
            ("\\boxed{3.1416}", "3.14", True),
            ("\\boxed{3.1449}", "3.14", True),
            ("\\boxed{3.1351}", "3.14", True),
            ("\\boxed{3.145}", "3.14", False),  # a tie: 3.15 rounding half up, 3.14 half to even
            ("\\boxed{3.135}", "3.14", False),
            ("\\boxed{0.675}", "0.67", False),
            ("\\boxed{0.665}", "0.67", False),
        ]
    )

"""extract_answer and grade: where the final answer is found, and what a grade says."""

import pytest

from envgym.verifiers.math import Grade, extract_answer, grade


def test_the_last_boxed_answer_wins_and_nested_braces_are_matched():
    assert extract_answer("First \\boxed{1}, then \\boxed{\\frac{1}{2}}.") == "\\frac{1}{2}"


def test_fbox_and_unbraced_boxed_count():
    assert extract_answer("so \\fbox{7}") == "7"
    assert extract_answer("so \\boxed 7 done") == "7"


def test_only_text_after_think_is_searched():
    assert extract_answer("<think>maybe \\boxed{3}</think> it is \\boxed{4}") == "4"


def test_an_unfinished_think_has_no_answer():
    assert extract_answer("<think>maybe \\boxed{3}") is None
    assert extract_answer("<think>so the answer is 3") is None
    assert extract_answer("<think>a</think> <think>maybe \\boxed{3}") is None


def test_an_answer_tag_after_an_unfinished_think_is_the_answer():
    assert extract_answer("<think>it is 3 <answer>3</answer>") == "3"
    assert extract_answer("<think>a</think> <think>b <answer>4</answer>") == "4"
    assert extract_answer("<think>it is 3 <answer>3</answer>", formats=("boxed",)) is None


def test_text_after_an_end_of_turn_token_is_not_the_response():
    assert extract_answer("The answer is 42<|im_end|>") == "42"
    assert extract_answer("\\boxed{41}<|im_end|><|im_start|>assistant\n\\boxed{42}") == "41"
    assert extract_answer("\\boxed{41}</s>\\boxed{42}") == "41"
    assert extract_answer("<think>x <answer>1</answer><|eot_id|><answer>2</answer>") == "1"


def test_a_response_that_is_only_its_answer():
    assert extract_answer("$\\log_2 8 = 3$") == "\\log_2 8 = 3"
    assert extract_answer(" 42. ") == "42"
    assert extract_answer("33 eggs.") == "33"
    assert extract_answer("$3$ or $4$") is None
    assert extract_answer("I think 42") is None


def test_an_answer_without_words_is_taken_whole():
    assert extract_answer("The answer is (35 + 70 = 105).") == "(35 + 70 = 105)"


def test_the_result_is_a_marker_only_before_a_value():
    assert extract_answer("The result is $3$.") == "3"
    assert extract_answer("The result is then multiplied by 3, giving 12.") is None


def test_a_later_marker_on_the_same_line_wins():
    assert extract_answer("The result is $3$, so the answer is $4$.") == "4"
    assert extract_answer("Final answer is 3, no wait, the final answer is 4") == "4"


@pytest.mark.parametrize(
    "text",
    [
        "答案：7",
        "答案是7",
        "答え：7",
        "Réponse : 7",
        "La réponse est 7.",
        "Die Antwort lautet 7.",
        "La respuesta es 7",
        "A resposta é 7",
        "La risposta è 7",
        "Ответ: 7",
        "정답: 7",
        "The result is 7.",
    ],
)
def test_answer_markers_in_other_languages(text):
    assert extract_answer(text) == "7"


def test_gsm8k_and_answer_is_formats():
    assert extract_answer("She has 3 + 4 = 7 apples.\n#### 7") == "7"
    assert extract_answer("So the answer is $\\frac{3}{4}$.") == "\\frac{3}{4}"
    assert extract_answer("Final answer: 12") == "12"


def test_last_number_is_opt_in():
    assert extract_answer("I think 41, no, 42") is None
    assert extract_answer("I think 41, no, 42", formats=("boxed", "last_number")) == "42"


def test_formats_are_tried_in_order_and_a_tuple_is_one_tier_where_the_later_answer_wins():
    text = "\\boxed{1} was a slip; #### 2"
    assert extract_answer(text, formats=("boxed", "gsm8k")) == "1"
    assert extract_answer(text, formats=(("boxed", "gsm8k"),)) == "2"


def test_an_answer_in_prose_needs_the_lenient_formats():
    from envgym.verifiers.math import LENIENT_FORMATS

    assert extract_answer("We get $x = 5$ in the end.") is None
    assert extract_answer("We get $x = 5$ in the end.", formats=LENIENT_FORMATS) == "x = 5"


def test_unknown_formats_are_rejected():
    with pytest.raises(ValueError, match="unknown answer formats"):
        extract_answer("x", formats=("boxed", "latex"))


def test_grade_reports_reward_extracted_answer_and_reason():
    assert grade("... \\boxed{0.5}", "\\frac{1}{2}") == Grade(1.0, "0.5", "correct")
    assert grade("... \\boxed{0.6}", "\\frac{1}{2}") == Grade(0.0, "0.6", "incorrect")
    assert grade("no idea", "\\frac{1}{2}") == Grade(0.0, None, "no_answer")


PATHOLOGICAL_PHRASES = [
    "The final answer is 5 ",
    "final answer is ",
    "\\boxed{",
    "\\(x ",
    "\\[x ",
    "$$x ",
    "\\boxed ",
    "answer: ",
    "答案：5 ",
    "the result is $3$, ",
]


def _traced_work(function, *args) -> int:
    """Python lines executed by ``function(*args)``: a machine-independent measure of work."""
    import sys

    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        function(*args)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("phrase", PATHOLOGICAL_PHRASES)
def test_extraction_of_a_100_kb_pathological_response_reads_a_bounded_tail(phrase, monkeypatch):
    from envgym.verifiers import math_extract
    from envgym.verifiers.math import LENIENT_FORMATS

    seen = []
    for name, extractor in list(math_extract._EXTRACTORS.items()):
        monkeypatch.setitem(
            math_extract._EXTRACTORS, name, lambda text, extractor=extractor: seen.append(len(text)) or extractor(text)
        )
    extract_answer(phrase * (100_000 // len(phrase)), LENIENT_FORMATS)
    assert seen and max(seen) <= math_extract.MAX_SCAN_CHARS


@pytest.mark.parametrize("phrase", PATHOLOGICAL_PHRASES)
def test_extraction_does_linear_work_in_the_text_it_reads(phrase):
    from envgym.verifiers.math import LENIENT_FORMATS
    from envgym.verifiers.math_extract import MAX_SCAN_CHARS

    def work(size):
        return _traced_work(extract_answer, phrase * (size // len(phrase)), LENIENT_FORMATS)

    half, full, huge = work(MAX_SCAN_CHARS // 2), work(MAX_SCAN_CHARS), work(100_000)
    assert full <= 2.5 * half + 50  # linear below the bound (quadratic would be 4x)
    assert huge <= 1.1 * full + 50  # and constant above it

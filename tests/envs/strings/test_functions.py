"""The string function library and the train/held-out split of its pairs."""

import pytest

from envgym.envs.strings.functions import BY_NAME, FUNCTIONS, all_pairs, compose, split_pairs


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("reverse", "abc", "cba"),
        ("rotate_left_2", "abcde", "cdeab"),
        ("rotate_right_1", "abcde", "eabcd"),
        ("remove_vowels", "aubcE", "bc"),
        ("duplicate_each", "abc", "aabbcc"),
        ("caesar_1", "azZ", "baA"),
        ("caesar_back_3", "abD", "xyA"),
        ("atbash", "abZ", "zyA"),
        ("sort_chars", "cBa", "Bac"),
        ("interleave_halves", "abcde", "adbec"),
        ("mirror", "abc", "abccba"),
        ("swap_pairs", "abcde", "badce"),
        ("dedupe", "abacb", "abc"),
        ("every_other", "abcde", "ace"),
        ("upper_vowels", "abe", "Abe".replace("e", "E")),
    ],
)
def test_each_function_does_what_its_definition_says(name, text, expected):
    assert BY_NAME[name].apply(text) == expected


def test_compose_applies_the_innermost_function_first():
    assert compose(["uppercase", "drop_first"], "abc") == "BC"
    assert compose(["drop_first", "mirror"], "ab") == "bba"


def test_the_library_has_between_15_and_25_functions_with_unique_names():
    assert 15 <= len(FUNCTIONS) <= 25 and len(BY_NAME) == len(FUNCTIONS)


def test_the_split_partitions_every_pair_without_overlap():
    train, heldout = split_pairs(0, 0.25)
    assert not set(train) & set(heldout)
    assert sorted(train + heldout) == sorted(all_pairs())
    assert len(heldout) == round(0.25 * len(all_pairs()))


def test_the_split_depends_on_the_seed_only():
    assert split_pairs(3, 0.25) == split_pairs(3, 0.25)
    assert split_pairs(3, 0.25)[1] != split_pairs(4, 0.25)[1]


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.5])
def test_a_holdout_fraction_outside_0_1_is_refused(fraction):
    with pytest.raises(ValueError, match="holdout_fraction"):
        split_pairs(0, fraction)


def test_pairs_that_undo_each_other_are_not_pairs():
    assert ("swapcase", "uppercase") not in all_pairs() and ("every_other", "duplicate_each") not in all_pairs()

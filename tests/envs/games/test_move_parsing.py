"""The games' move parsing: the last complete tag in linear time, and only ASCII integers."""

import pytest

from envgym.envs.games.move_parsing import last_tag, parse_int, quote


def test_the_last_complete_tag_wins():
    assert last_tag("<guess>1</guess> then <GUESS>2</Guess>", "guess") == "2"


def test_nested_tags_give_the_innermost_body():
    assert last_tag("<move><move>5</move></move>", "move") == "5"


@pytest.mark.parametrize("text", ["", "no tag", "<pull>3", "3</pull>", "<pull>" * 10_000])
def test_no_complete_tag_is_none(text):
    assert last_tag(text, "pull") is None


def test_a_tag_name_is_matched_literally():
    assert last_tag("<a.b>1</a.b>", "a.b") == "1" and last_tag("<axb>1</axb>", "a.b") is None


@pytest.mark.parametrize("text, value", [("42", 42), (" 7 ", 7), ("-3", -3), ("-0", 0), ("007", 7)])
def test_ascii_integers_are_read(text, value):
    assert parse_int(text) == value


@pytest.mark.parametrize("text", ["²", "٣", "３", "३", "+3", "3.0", "nan", "1e3", "", "-", "1 2", "9" * 13])
def test_anything_else_is_not_an_integer(text):
    assert parse_int(text) is None


def test_quote_shortens_long_text():
    assert quote("x" * 100, 5) == "'xxxxx...'"

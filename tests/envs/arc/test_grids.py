"""The ARC grid reader: the forms models write are read, everything else is refused with the reason."""

import pytest

from envgym.envs.arc.grids import format_grid, parse_grid


@pytest.mark.parametrize(
    "text",
    [
        "```\n0 1\n2 3\n```",
        "```grid\n0 1\n2 3\n```",
        "```json\n[[0, 1], [2, 3]]\n```",
        "[[0,1],[2,3]]",
        "The output is:\n01\n23",
        "0, 1\n2, 3",
        "Here it is:\n\n  0 1\n  2 3\n\nDone.",
    ],
)
def test_a_grid_is_read_from_digit_rows_json_and_fenced_blocks(text):
    assert parse_grid(text) == ([[0, 1], [2, 3]], None)


def test_the_last_fenced_block_is_the_answer_when_there_are_several():
    assert parse_grid("First try:\n```\n1 1\n```\nFinal:\n```\n2 2\n```")[0] == [[2, 2]]


def test_format_grid_writes_what_parse_grid_reads():
    grid = [[0, 1, 2], [3, 4, 5]]
    assert parse_grid(format_grid(grid))[0] == grid


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no grid here", "no grid found"),
        ("```\n```", "the last fenced block is empty"),
        ("```\n0 1\n2\n```", "row 2 has 1 cells but row 1 has 2"),
        ("[[0, 1], [2, 13]]", "row 2 holds 13; every cell is a digit 0-9"),
        ("[[true]]", "row 1 holds True"),
        ("[[0.5]]", "row 1 holds 0.5"),
        ("```\n0 12\n3 4\n```", "mixes separated and run-together digits"),
        ("```\n0 a\n```", "row 1 ('0 a') is not a row of digits"),
        ("```\n[[0, 1]\n```", "not valid JSON"),
        ("\n".join(["1"] * 31), "31 rows; ARC grids have 1 to 30"),
        ("```\n" + "1" * 31 + "\n```", "1x31; ARC grids are at most 30x30"),
    ],
)
def test_an_unreadable_grid_is_refused_with_what_was_wrong(text, reason):
    grid, problem = parse_grid(text)
    assert grid is None and reason in problem


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, "[[" + "0," * 50_000 + "0]]", "```" * 30_000, "1 " * 50_000, "1\n" * 50_000, "]" * 100_000],
)
def test_100_kb_replies_are_refused_not_raised(text):
    grid, problem = parse_grid(text)
    assert grid is None and problem

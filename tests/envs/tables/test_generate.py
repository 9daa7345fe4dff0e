"""Generated tables: sizes, formats, and answers recomputed independently of the generator."""

import csv
import io
import json
from fractions import Fraction

import numpy as np
import pytest

from envgym.envs.tables.generate import DOMAINS, make_question, make_table


@pytest.mark.parametrize("seed", range(40))
def test_tables_have_5_to_15_rows_and_3_to_6_columns(seed):
    table = make_table(np.random.default_rng(seed), list(DOMAINS)[seed % 3])
    assert 5 <= len(table.rows) <= 15 and 3 <= len(table.columns) <= 6
    assert len({row["name"] for row in table.rows}) == len(table.rows)


def test_csv_and_json_renderings_hold_the_same_cells_as_the_table():
    table = make_table(np.random.default_rng(3), "products")
    from_csv = list(csv.reader(io.StringIO(table.render("csv"))))
    assert from_csv[0] == table.columns
    assert from_csv[1:] == [[table.cell(row, c) for c in table.columns] for row in table.rows]
    from_json = json.loads(table.render("json"))
    assert [record["name"] for record in from_json] == [row["name"] for row in table.rows]


def test_markdown_has_a_header_a_rule_and_one_line_per_row():
    table = make_table(np.random.default_rng(4), "cities")
    lines = table.render("markdown").splitlines()
    assert lines[0] == "| " + " | ".join(table.columns) + " |" and lines[1].startswith("|---")
    assert len(lines) == 2 + len(table.rows)


def test_aggregate_answers_match_a_recomputation_from_the_rendered_csv():
    checked = 0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        table = make_table(rng, "employees")
        question = make_question(rng, table)
        if question is None or question.kind != "aggregate" or "total" not in question.text:
            continue
        rows = list(csv.DictReader(io.StringIO(table.render("csv"))))
        column = question.text.split("total ")[1].split(" of")[0]
        if " whose " in question.text:
            text_column, value = question.text.split(" whose ")[1].rstrip("?").split(" is ")
            rows = [row for row in rows if row[text_column] == value]
        assert sum(Fraction(row[column]) for row in rows) == question.answer
        checked += 1
    assert checked > 10


def test_argmax_questions_have_a_unique_winner():
    for seed in range(300):
        rng = np.random.default_rng(seed)
        table = make_table(rng, "products")
        question = make_question(rng, table)
        if question is not None and question.kind == "argmax":
            column = question.text.split("est ")[1].split("?")[0]
            values = [row[column] for row in table.rows]
            extreme = max(values) if "highest" in question.text else min(values)
            assert values.count(extreme) == 1

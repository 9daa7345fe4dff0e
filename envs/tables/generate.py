"""Procedural tables (products, cities, employees) and questions whose answers are computed from them.

Numbers are kept as exact ``Fraction``s (a decimal column is integers over 10^places), so sums and means are exact
and the env decides correctness from the exact value, never from a float. Questions whose answer would be
ambiguous (a tie for a maximum, two equal values compared, an empty count) are re-drawn by the caller.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from fractions import Fraction
from typing import Any

import numpy as np

# Per column: (name, kind, spec): kind "text" draws from the choices; "number" draws integers in [low, high] over
# 10**places. Every name is one word without list separators, so a name never reads as a candidate list.
DOMAINS: dict[str, dict[str, Any]] = {
    "products": {
        "row": "product",
        "names": (
            "Atlas",
            "Beacon",
            "Comet",
            "Dynamo",
            "Ember",
            "Falcon",
            "Glacier",
            "Harbor",
            "Icicle",
            "Juniper",
            "Kestrel",
            "Lumen",
            "Meadow",
            "Nimbus",
            "Orbit",
            "Pebble",
            "Quartz",
            "Ripple",
        ),
        "columns": (
            ("category", "text", ("audio", "kitchen", "outdoor", "office")),
            ("price", "number", (100, 50000, 2)),
            ("stock", "number", (0, 500, 0)),
            ("rating", "number", (10, 50, 1)),
            ("weight_kg", "number", (1, 200, 1)),
        ),
    },
    "cities": {
        "row": "city",
        "names": (
            "Avila",
            "Bergen",
            "Cadiz",
            "Delft",
            "Essen",
            "Faro",
            "Ghent",
            "Hilo",
            "Izmir",
            "Jena",
            "Kiel",
            "Leeds",
            "Mainz",
            "Nantes",
            "Oulu",
            "Parma",
            "Quito",
            "Riga",
        ),
        "columns": (
            ("country", "text", ("Spain", "Norway", "Germany", "Italy")),
            ("population", "number", (10000, 3000000, 0)),
            ("area_km2", "number", (20, 2000, 0)),
            ("founded", "number", (800, 1950, 0)),
            ("elevation_m", "number", (0, 2500, 0)),
        ),
    },
    "employees": {
        "row": "employee",
        "names": (
            "Alice",
            "Bruno",
            "Chloe",
            "Diego",
            "Elena",
            "Farid",
            "Greta",
            "Hugo",
            "Iris",
            "Jonas",
            "Kira",
            "Liam",
            "Maya",
            "Nils",
            "Olga",
            "Pavel",
            "Rosa",
            "Sven",
        ),
        "columns": (
            ("department", "text", ("sales", "legal", "research", "support")),
            ("salary", "number", (30000, 150000, 0)),
            ("age", "number", (21, 65, 0)),
            ("years", "number", (0, 40, 0)),
            ("rating", "number", (10, 50, 1)),
        ),
    },
}
FORMATS = ("markdown", "csv", "json")


@dataclasses.dataclass
class Table:
    """Rows of one domain: ``columns`` (name first), ``places`` per number column, cells as str or Fraction."""

    domain: str
    columns: list[str]
    places: dict[str, int]
    rows: list[dict[str, Any]]

    def cell(self, row: dict[str, Any], column: str) -> str:
        """A cell as the table shows it (numbers with their column's fixed decimal places)."""
        value = row[column]
        return value if isinstance(value, str) else f"{float(value):.{self.places[column]}f}"

    def render(self, table_format: str) -> str:
        """The table as Markdown, CSV or JSON (a list of objects, one a line, numbers as JSON numbers)."""
        cells = [[self.cell(row, c) for c in self.columns] for row in self.rows]
        if table_format == "markdown":
            lines = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
            return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in cells])
        if table_format == "csv":
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerows([self.columns] + cells)
            return out.getvalue().rstrip("\n")
        records = [
            {
                c: row[c] if c not in self.places else int(row[c]) if not self.places[c] else float(row[c])
                for c in self.columns
            }
            for row in self.rows
        ]
        return "[\n" + ",\n".join(json.dumps(record) for record in records) + "\n]"  # one row a line


def make_table(rng: np.random.Generator, domain: str) -> Table:
    """5-15 rows and 3-6 columns (the name and 2-5 of the domain's other columns, in the domain's order)."""
    spec = DOMAINS[domain]
    chosen = sorted(rng.choice(len(spec["columns"]), size=int(rng.integers(2, 6)), replace=False))
    columns = [spec["columns"][i] for i in chosen]
    names = rng.choice(spec["names"], size=int(rng.integers(5, 16)), replace=False)
    rows = []
    for name in names:
        row: dict[str, Any] = {"name": str(name)}
        for column, kind, choices in columns:
            if kind == "text":
                row[column] = str(rng.choice(choices))
            else:
                low, high, places = choices
                row[column] = Fraction(int(rng.integers(low, high + 1)), 10**places)
        rows.append(row)
    places = {column: choices[2] for column, kind, choices in columns if kind == "number"}
    return Table(domain, ["name"] + [c[0] for c in columns], places, rows)


@dataclasses.dataclass
class Question:
    """A question, its exact answer (text, or a Fraction) and an honest wrong answer of the same kind."""

    kind: str
    text: str
    answer: str | Fraction
    wrong: str | Fraction


def make_question(rng: np.random.Generator, table: Table) -> Question | None:
    """One question of a random kind, or ``None`` where the draw is ambiguous (the caller draws again)."""
    numbers = list(table.places)
    texts = [c for c in table.columns[1:] if c not in table.places]
    row_word = DOMAINS[table.domain]["row"]
    rows = table.rows
    kind = str(rng.choice(["lookup", "count", "argmax", "aggregate", "compare"]))
    column = str(rng.choice(numbers))
    values = [row[column] for row in rows]
    if kind == "lookup":
        column = str(rng.choice(numbers + texts))
        row = rows[int(rng.integers(len(rows)))]
        other = next((r[column] for r in rows if r[column] != row[column]), None)
        if other is None:
            return None
        return Question(kind, f"What is the {column} of {row['name']}?", row[column], other)
    if kind == "count":
        if texts and rng.random() < 0.5:
            text_column = texts[0]
            value = str(rng.choice([row[text_column] for row in rows]))
            count = sum(row[text_column] == value for row in rows)
            return Question(
                kind,
                f"How many {table.domain} have {text_column} equal to {value}?",
                Fraction(count),
                Fraction(count + 1),
            )
        threshold = values[int(rng.integers(len(values)))]
        count = sum(v > threshold for v in values)
        if count == 0:
            return None
        shown = table.cell({column: threshold}, column)
        return Question(
            kind, f"How many {table.domain} have {column} greater than {shown}?", Fraction(count), Fraction(count + 1)
        )
    if kind == "argmax":
        highest = bool(rng.random() < 0.5)
        extreme = max(values) if highest else min(values)
        winners = [row["name"] for row in rows if row[column] == extreme]
        if len(winners) != 1:
            return None
        word = "highest" if highest else "lowest"
        other = next(row["name"] for row in rows if row["name"] != winners[0])
        return Question(kind, f"Which {row_word} has the {word} {column}? Give its name.", winners[0], other)
    if kind == "aggregate":
        selected, where = rows, ""
        if texts:
            value = str(rng.choice([row[texts[0]] for row in rows]))
            selected, where = [row for row in rows if row[texts[0]] == value], f" whose {texts[0]} is {value}"
        total = sum((row[column] for row in selected), Fraction(0))
        if rng.random() < 0.5:
            return Question(kind, f"What is the total {column} of the {table.domain}{where}?", total, total + 1)
        mean = total / len(selected)
        return Question(
            kind,
            f"What is the average {column} of the {table.domain}{where}? Round to 2 decimal places.",
            mean,
            mean + 1,
        )
    first, second = (rows[i] for i in rng.choice(len(rows), size=2, replace=False))
    if first[column] == second[column]:
        return None
    larger, smaller = (first, second) if first[column] > second[column] else (second, first)
    return Question(
        "compare",
        f"Which has the larger {column}: {first['name']} or {second['name']}? Give its name.",
        larger["name"],
        smaller["name"],
    )

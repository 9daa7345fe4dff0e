"""TextToSQL-v0: answer a question about a generated SQLite database with one SELECT query (Guru's tabular domain).

Each task is a shop database of three tables linked by foreign keys (customers 5-10 rows, products 5-10, orders
8-30; a customer's city may be NULL) and a question with a gold query. The prompt shows the schema, not the data.
The policy answers with one query in a ```sql code block or a ``<sql>`` tag; it runs read-only on a copy of the
database, in a worker process killed at a hard wall-clock limit, with step, row and result-size limits
(:mod:`envgym.envs.sql.executor`), and earns 1 when its result equals the gold query's:

- rows in order only when the gold query has ORDER BY (the question then says the order), else as multisets, so
  duplicates count;
- columns by position (the question says which columns, in which order); column names are ignored;
- NULL equals NULL; numbers within a relative 1e-6, so ``AVG`` and ``SUM`` of reals compare safely.

A query that fails, is not a SELECT, reads no table of the database (a constant ``SELECT 3``), runs past the
limits (time included: the policy's failure, so it scores the minimum, 0), or comes with a second, different
query is refused (``action_valid=False``, reward 0). Only a worker that cannot start is the episode's error.
Questions whose gold result is empty or has a tie in its ORDER BY are re-drawn, so an empty query never matches.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, action_text, reward_total
from envgym.envs.answer_tag import tag_bodies
from envgym.envs.sql.executor import MAX_RESULT_BYTES, QueryWorker, QueryWorkerError, run_query, same_result
from envgym.tasks import ProceduralTaskSource

FIRST_NAMES = ("Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lena", "Milo", "Nora")
CITIES = ("Lyon", "Oslo", "Porto", "Graz", "Turin")
PRODUCTS = {
    "books": ("atlas", "novel", "cookbook", "diary"),
    "games": ("chess", "puzzle", "cards", "dice"),
    "tools": ("hammer", "saw", "drill", "wrench"),
    "garden": ("rake", "hose", "shovel", "seeds"),
}
SCHEMA = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
  product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL);"""
# A fenced block's body may not contain another fence: linear time on 100 KB of unclosed fences.
_SQL_FENCE = re.compile(r"```sql[ \t]*\n?((?:(?!```).)*)```", re.DOTALL | re.IGNORECASE)
MAX_DRAWS = 50


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _database(rng: np.random.Generator) -> tuple[str, dict[str, list[Any]]]:
    """The script that builds one database, and the values questions are drawn from."""
    names = list(rng.choice(FIRST_NAMES, size=int(rng.integers(5, 11)), replace=False))
    customers = [
        (i + 1, str(name), None if rng.random() < 0.2 else str(rng.choice(CITIES))) for i, name in enumerate(names)
    ]
    catalogue = [(category, name) for category, items in PRODUCTS.items() for name in items]
    picks = rng.choice(len(catalogue), size=int(rng.integers(5, 11)), replace=False)
    products = [
        (i + 1, catalogue[p][1], catalogue[p][0], round(float(rng.integers(100, 5000)) / 100, 2))
        for i, p in enumerate(picks)
    ]
    orders = [
        (
            i + 1,
            int(rng.integers(1, len(customers) + 1)),
            int(rng.integers(1, len(products) + 1)),
            int(rng.integers(1, 6)),
        )
        for i in range(int(rng.integers(8, 31)))
    ]
    lines = [SCHEMA]
    for table, rows in (("customers", customers), ("products", products), ("orders", orders)):
        values = ", ".join(
            "("
            + ", ".join("NULL" if v is None else _sql_literal(v) if isinstance(v, str) else repr(v) for v in row)
            + ")"
            for row in rows
        )
        lines.append(f"INSERT INTO {table} VALUES {values};")
    pools = {
        "city": sorted({c[2] for c in customers if c[2] is not None}),
        "category": sorted({p[2] for p in products}),
        "product": sorted(p[1] for p in products),
    }
    return "\n".join(lines), pools


def _question(rng: np.random.Generator, pools: dict[str, list[Any]]) -> tuple[str, str, str]:
    """``(kind, question, gold query)`` of one template."""
    city = str(rng.choice(pools["city"])) if pools["city"] else "Lyon"
    category, product = str(rng.choice(pools["category"])), str(rng.choice(pools["product"]))
    templates = [
        (
            "count",
            f"How many customers live in {city}?",
            f"SELECT COUNT(*) FROM customers WHERE city = {_sql_literal(city)}",
        ),
        (
            "order_by",
            f"List the names of the products in the category '{category}', from the most to the least "
            "expensive (equal prices by name, A to Z).",
            f"SELECT name FROM products WHERE category = {_sql_literal(category)} ORDER BY price DESC, name",
        ),
        (
            "group_by",
            "For each customer who placed at least one order, give the customer's name and the total "
            "quantity they ordered (two columns: name, total).",
            "SELECT c.name, SUM(o.quantity) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id",
        ),
        (
            "average",
            f"What is the average price of the products in the category '{category}'?",
            f"SELECT AVG(price) FROM products WHERE category = {_sql_literal(category)}",
        ),
        (
            "anti_join",
            "List the names of the products that were never ordered.",
            "SELECT name FROM products WHERE id NOT IN (SELECT product_id FROM orders)",
        ),
        (
            "duplicates_and_nulls",
            f"Give the city of the customer of every order of the product '{product}', one row "
            "per order (a customer without a city gives NULL).",
            "SELECT c.city FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id"  # noqa: E501 -- data, kept whole
            f" WHERE p.name = {_sql_literal(product)}",
        ),
        (
            "top",
            "Which customer spent the most in total (quantity times price over all their orders)? Give the name.",
            "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id JOIN products p ON p.id = o.product_id"  # noqa: E501 -- data, kept whole
            " GROUP BY c.id ORDER BY SUM(o.quantity * p.price) DESC LIMIT 1",
        ),
    ]
    return templates[int(rng.integers(len(templates)))]


def _is_ambiguous(database: str, kind: str, gold: str, rows: list[tuple]) -> bool:
    """An empty result (an empty query would match), or a tie for the top spender (two right names)."""
    if not rows or rows == [(0,)]:
        return True
    if kind == "top":
        totals = run_query(
            database, gold.replace("SELECT c.name", "SELECT SUM(o.quantity * p.price)").replace(" LIMIT 1", " LIMIT 2")
        ).rows
        return len(totals) > 1 and abs(totals[0][0] - totals[1][0]) < 1e-6
    return False


class TextToSQL(Env):
    description = "Answer a question about a generated SQLite database with one read-only SELECT query."
    reward_ranges = {"correct": RewardRange()}

    def __init__(
        self,
        *,
        max_rows: int = 1000,
        max_steps: int = 5_000_000,
        timeout: float = 1.0,
        max_bytes: int = MAX_RESULT_BYTES,
    ):
        if max_rows < 1 or max_steps < 1000 or not 0 < timeout <= 2.0 or max_bytes < 1:
            raise ValueError(
                f"need max_rows >= 1, max_steps >= 1000, 0 < timeout <= 2.0 s (steps must stay under "
                f"the 2.5 s audit bound) and max_bytes >= 1, got {max_rows}, {max_steps}, {timeout}, {max_bytes}"
            )
        self.limits = {"max_rows": max_rows, "max_steps": max_steps, "timeout": timeout, "max_bytes": max_bytes}
        self.worker = QueryWorker()
        self.tasks = ProceduralTaskSource(self._make_task)

    def close(self) -> None:
        self.worker.close()
        super().close()

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        for _ in range(MAX_DRAWS):
            database, pools = _database(rng)
            kind, question, gold = _question(rng, pools)
            result = run_query(database, gold)
            if result.error is None and not _is_ambiguous(database, kind, gold, result.rows):
                break
        else:  # unreachable in practice: most draws are unambiguous
            raise RuntimeError(f"no unambiguous question in {MAX_DRAWS} draws")
        prompt = (
            f"An SQLite database has these tables:\n{SCHEMA}\n\nQuestion: {question}\n\n"
            "Answer with one SQLite SELECT query in a ```sql code block."
        )
        answer = {"query": gold, "rows": [list(row) for row in result.rows], "ordered": "ORDER BY" in gold}
        return Task(
            id=f"sql-{index}",
            messages=[{"role": "user", "content": prompt}],
            answer=answer,
            metadata={"kind": kind, "database": database},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        return task.prompt(), {"kind": task.metadata["kind"]}

    def reference_action(self) -> Action | None:
        return None if self.task is None else f"```sql\n{self.task.answer['query']}\n```"

    def wrong_action(self) -> Action | None:
        """A valid query that reads the database and answers something else: the number of customers + 1000."""
        return None if self.task is None else "```sql\nSELECT COUNT(*) + 1000 FROM customers\n```"

    def _step(self, action: Action) -> StepResult:
        text = action_text(action)
        queries = {
            q.strip().rstrip(";").strip()
            for q in [m.group(1) for m in _SQL_FENCE.finditer(text)] + tag_bodies(text, "sql")
        } - {""}
        info: dict[str, Any] = {
            "kind": self.task.metadata["kind"],
            "reward_components": {"correct": 0.0},
            "correct": False,
        }
        if len(queries) != 1:
            problem = (
                "no query found: put one SELECT query in a ```sql code block"
                if not queries
                else f"{len(queries)} different queries; give exactly one"
            )
            return [], 0.0, True, False, {**info, "action_valid": False, "action_error": problem}
        (query,) = queries
        try:
            result = self.worker.run(self.task.metadata["database"], query, **self.limits)
        except QueryWorkerError as error:
            return [], 0.0, False, True, {**info, "error": str(error)}
        problem = result.error or (
            None
            if result.tables_read
            else "the query reads no table of the database; compute the answer from the tables"
        )
        if problem is not None:
            return [], 0.0, True, False, {**info, "action_valid": False, "action_error": problem, "answer": query}
        gold = [tuple(row) for row in self.task.answer["rows"]]
        correct = same_result(result.rows, gold, ordered=self.task.answer["ordered"])
        components = {"correct": float(correct)}
        info.update(
            action_valid=True, answer=query, correct=correct, reward_components=components, rows=len(result.rows)
        )
        return [], reward_total(components), True, False, info

"""The shop behind tools/ShopOrders-v0: a seeded SQLite world of customers, products and orders, the
operations an agent may call on it (with the shop's business rules), and task generation.

A task is data: the initial rows, an instruction, and the canonical solution (a list of calls). The env
replays the solution on a copy of the world to get the goal state, so the reward can compare whole states:
the goal reached *and* nothing else changed.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, email TEXT NOT NULL, address TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, price REAL NOT NULL, stock INTEGER NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, customer_id INTEGER NOT NULL, product_id INTEGER NOT NULL,
                     quantity INTEGER NOT NULL, status TEXT NOT NULL, address TEXT NOT NULL);
"""
TABLES = ("customers", "products", "orders")
FIRST = (
    "Ada",
    "Bruno",
    "Chen",
    "Dalia",
    "Emeka",
    "Freya",
    "Goran",
    "Hana",
    "Ivo",
    "Jana",
    "Kofi",
    "Lena",
    "Mateo",
    "Nia",
    "Oskar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Yara",
    "Zeno",
)
LAST = (
    "Abara",
    "Berg",
    "Costa",
    "Dahl",
    "Ekwueme",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jensen",
    "Kowalski",
    "Larsen",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Quispe",
    "Rossi",
    "Sato",
    "Tanaka",
    "Varga",
    "Weber",
)
PRODUCTS = (
    "desk lamp",
    "kettle",
    "backpack",
    "umbrella",
    "notebook",
    "headphones",
    "yoga mat",
    "teapot",
    "water bottle",
    "bike light",
    "wool scarf",
    "phone stand",
    "alarm clock",
    "cutting board",
    "doormat",
    "plant pot",
    "camera strap",
    "pencil case",
    "bath towel",
    "travel mug",
)
STREETS = ("Elm", "Harbor", "Mill", "Orchard", "Quarry", "Ridge", "Station", "Willow", "Canal", "Birch")
CITIES = ("Lisbon", "Tartu", "Leeds", "Porto", "Graz", "Malmo", "Ghent", "Bergen")
STATUSES = ("pending", "pending", "shipped", "delivered")


class ShopError(Exception):
    """A request the shop refuses (unknown id, a rule broken); its message is what the agent reads."""


def generate_world(rng: np.random.Generator) -> dict[str, list[list[Any]]]:
    """Initial rows per table (JSON-friendly, so a task stores its world as data)."""
    names = rng.permutation([f"{first} {last}" for first in FIRST for last in LAST])[: int(rng.integers(6, 10))]
    customers = [
        [i + 1, str(name), str(name).lower().replace(" ", ".") + "@example.com", _address(rng)]
        for i, name in enumerate(names)
    ]
    product_names = rng.permutation(PRODUCTS)[: int(rng.integers(8, 13))]
    products = [
        [i + 1, str(name), float(rng.integers(5, 120)) - 0.01, int(rng.integers(0, 12))]
        for i, name in enumerate(product_names)
    ]
    orders = []
    for i in range(int(rng.integers(10, 20))):
        customer = customers[int(rng.integers(len(customers)))]
        orders.append(
            [
                i + 1,
                customer[0],
                int(rng.integers(1, len(products) + 1)),
                int(rng.integers(1, 4)),
                str(rng.choice(STATUSES)),
                customer[3],
            ]
        )
    return {"customers": customers, "products": products, "orders": orders}


def _address(rng: np.random.Generator) -> str:
    return f"{int(rng.integers(1, 200))} {rng.choice(STREETS)} Street, {rng.choice(CITIES)}"


def open_world(rows: dict[str, list[list[Any]]]) -> sqlite3.Connection:
    """A fresh in-memory database holding ``rows``."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(SCHEMA)
    for table in TABLES:
        if rows[table]:
            marks = ",".join("?" * len(rows[table][0]))
            db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
    db.commit()
    return db


def snapshot(db: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Every row of every table, ordered by id: two equal snapshots are two equal worlds."""
    return {table: db.execute(f"SELECT * FROM {table} ORDER BY id").fetchall() for table in TABLES}


class Shop:
    """The operations the agent's tools call. Read operations return rows as dicts; writes enforce the rules
    (only pending orders change, stock never goes negative) and raise :class:`ShopError` otherwise."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def find_customer(self, name: str) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT id, name, email, address FROM customers WHERE lower(name) = lower(?)", (name.strip(),)
        ).fetchone()
        if row is None:
            raise ShopError(f"no customer is named {name!r}")
        return dict(zip(("customer_id", "name", "email", "address"), row))

    def find_product(self, name: str) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT id, name, price, stock FROM products WHERE lower(name) = lower(?)", (name.strip(),)
        ).fetchone()
        if row is None:
            raise ShopError(f"no product is named {name!r}")
        return dict(zip(("product_id", "name", "price", "stock"), row))

    def list_orders(self, customer_id: int) -> list[dict[str, Any]]:
        self._customer(customer_id)
        rows = self.db.execute(
            "SELECT o.id, p.name, o.product_id, o.quantity, o.status, o.address FROM orders o "
            "JOIN products p ON p.id = o.product_id WHERE o.customer_id = ? ORDER BY o.id",
            (customer_id,),
        ).fetchall()
        return [dict(zip(("order_id", "product", "product_id", "quantity", "status", "address"), row)) for row in rows]

    def cancel_order(self, order_id: int) -> str:
        _, product_id, quantity = self._pending_order(order_id)
        self.db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
        self.db.execute("UPDATE products SET stock = stock + ? WHERE id = ?", (quantity, product_id))
        self.db.commit()
        return f"order {order_id} cancelled; {quantity} item(s) returned to stock"

    def update_order_address(self, order_id: int, address: str) -> str:
        self._pending_order(order_id)
        self.db.execute("UPDATE orders SET address = ? WHERE id = ?", (address.strip(), order_id))
        self.db.commit()
        return f"order {order_id} will ship to {address.strip()}"

    def update_customer_address(self, customer_id: int, address: str) -> str:
        self._customer(customer_id)
        self.db.execute("UPDATE customers SET address = ? WHERE id = ?", (address.strip(), customer_id))
        self.db.commit()
        return f"customer {customer_id}'s address is now {address.strip()}"

    def place_order(self, customer_id: int, product_id: int, quantity: int) -> str:
        address = self._customer(customer_id)
        row = self.db.execute("SELECT stock FROM products WHERE id = ?", (product_id,)).fetchone()
        if row is None:
            raise ShopError(f"there is no product with id {product_id}")
        if quantity < 1:
            raise ShopError(f"quantity must be at least 1, got {quantity}")
        if row[0] < quantity:
            raise ShopError(f"only {row[0]} of product {product_id} in stock, cannot order {quantity}")
        self.db.execute("UPDATE products SET stock = stock - ? WHERE id = ?", (quantity, product_id))
        cursor = self.db.execute(
            "INSERT INTO orders (customer_id, product_id, quantity, status, address) VALUES (?, ?, ?, 'pending', ?)",
            (customer_id, product_id, quantity, address),
        )
        self.db.commit()
        return f"order {cursor.lastrowid} placed"

    def _customer(self, customer_id: int) -> str:
        row = self.db.execute("SELECT address FROM customers WHERE id = ?", (customer_id,)).fetchone()
        if row is None:
            raise ShopError(f"there is no customer with id {customer_id}")
        return row[0]

    def _pending_order(self, order_id: int) -> tuple[str, int, int]:
        row = self.db.execute("SELECT status, product_id, quantity FROM orders WHERE id = ?", (order_id,)).fetchone()
        if row is None:
            raise ShopError(f"there is no order with id {order_id}")
        if row[0] != "pending":
            raise ShopError(f"order {order_id} is {row[0]}; only pending orders can be changed")
        return row


def generate_task(rng: np.random.Generator, goals: int) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    """(world rows, instruction, solution calls) with ``goals`` requests about different customers."""
    for _ in range(100):
        world = generate_world(rng)
        shop = Shop(open_world(world))
        makers = [_cancel_goal, _move_goal, _order_goal]
        customers = [int(c) for c in rng.permutation([row[0] for row in world["customers"]])]
        requests, solution = [], []
        for customer_id in customers:
            made = makers[int(rng.integers(len(makers)))](rng, shop, world, customer_id)
            if made is not None:
                requests.append(made[0])
                solution.extend(made[1])
                _replay(shop, made[1])
            if len(requests) == goals:
                return world, " ".join(requests), solution
    raise RuntimeError(f"could not draw a shop task with {goals} goals")


def _replay(shop: Shop, calls: list[dict[str, Any]]) -> None:
    for call in calls:
        getattr(shop, call["name"])(**call["arguments"])


def _name(world: dict[str, Any], table: str, row_id: int) -> str:
    return next(row[1] for row in world[table] if row[0] == row_id)


def _cancel_goal(rng, shop: Shop, world, customer_id: int):
    name = _name(world, "customers", customer_id)
    orders = shop.list_orders(customer_id)
    pending = [o for o in orders if o["status"] == "pending"]
    unique = [o for o in pending if sum(p["product_id"] == o["product_id"] for p in orders) == 1]
    if not unique:
        return None
    order = unique[int(rng.integers(len(unique)))]
    calls = [
        _call("find_customer", name=name),
        _call("list_orders", customer_id=customer_id),
        _call("cancel_order", order_id=order["order_id"]),
    ]
    return f"{name} asks to cancel their order of the {order['product']}.", calls


def _move_goal(rng, shop: Shop, world, customer_id: int):
    name = _name(world, "customers", customer_id)
    pending = [o for o in shop.list_orders(customer_id) if o["status"] == "pending"]
    if not pending:
        return None
    address = _address(rng)
    calls = [
        _call("find_customer", name=name),
        _call("update_customer_address", customer_id=customer_id, address=address),
        _call("list_orders", customer_id=customer_id),
    ]
    calls += [_call("update_order_address", order_id=o["order_id"], address=address) for o in pending]
    return (
        f"{name} has moved to {address}. Update their address and the shipping address of all their "
        f"orders that have not shipped yet."
    ), calls


def _order_goal(rng, shop: Shop, world, customer_id: int):
    name = _name(world, "customers", customer_id)
    first, second = (int(i) + 1 for i in rng.choice(len(world["products"]), size=2, replace=False))
    first_product, second_product = (
        shop.find_product(_name(world, "products", first)),
        shop.find_product(_name(world, "products", second)),
    )
    quantity = int(rng.integers(1, 4))
    chosen = first_product if first_product["stock"] >= quantity else second_product
    if chosen["stock"] < quantity:
        return None
    calls = [_call("find_customer", name=name), _call("find_product", name=first_product["name"])]
    if chosen is second_product:
        calls.append(_call("find_product", name=second_product["name"]))
    calls.append(_call("place_order", customer_id=customer_id, product_id=chosen["product_id"], quantity=quantity))
    return (
        f"Place an order for {name}: {quantity} x {first_product['name']}; if fewer than {quantity} are in stock, "
        f"order {quantity} x {second_product['name']} instead."
    ), calls


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}

"""tools/ShopOrders-v0: stateful function calling against a SQLite shop (customers, products, orders).

The agent gets customer-service requests ("cancel X's order of the kettle", "X moved: update the
addresses", "place an order, or a fallback product if stock is short") and OpenAI-schema tools that read and
change the shop's database (see :class:`~envgym.envs.tools.shop.Shop`). The episode ends on the first turn
without a tool call. Reward, on that turn: ``correct`` = 1 when the final database equals the goal state (the
canonical solution replayed on the initial world), else 0. ``info`` says which part failed:
``goal_met`` (every row the goal changes is as the goal wants) and ``unexpected_changes`` (rows the goal
does not touch that changed anyway: a forbidden change).

Every episode opens a fresh in-memory database from the task's rows, so tool calls never change what a later
episode of the same task starts from. At most 8 calls run per turn (more are skipped and the turn is invalid).
:meth:`ShopOrders.reference_action` plays the task's canonical solution as OpenAI ``tool_calls``, 8 per turn,
then a summary turn without calls that ends the episode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envgym.core import Action, Env, Message, RewardRange, StepResult, Task, reward_total
from envgym.envs.tools.shop import TABLES, Shop, ShopError, generate_task, open_world, snapshot
from envgym.tasks import ProceduralTaskSource
from envgym.tools import Tool, ToolCall, ToolEnv

SYSTEM_PROMPT = (
    "You are a customer-service agent for an online shop. Use the tools to carry out the requests, in order, "
    "by reading and changing the shop's database. Change nothing you were not asked to change. When every "
    "request is done, reply with a short summary and no tool call; that ends the conversation."
)
_ID = {"type": "integer", "minimum": 1}
_TEXT = {"type": "string"}
TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "find_customer": ("Look up a customer by full name: id, email and address.", {"name": _TEXT}),
    "find_product": ("Look up a product by name: id, price and units in stock.", {"name": _TEXT}),
    "list_orders": ("List a customer's orders with their status and shipping address.", {"customer_id": _ID}),
    "cancel_order": ("Cancel a pending order; its items go back to stock.", {"order_id": _ID}),
    "update_order_address": ("Change the shipping address of a pending order.", {"order_id": _ID, "address": _TEXT}),
    "update_customer_address": ("Change a customer's address on file.", {"customer_id": _ID, "address": _TEXT}),
    "place_order": (
        "Place a new order shipped to the customer's address on file.",
        {"customer_id": _ID, "product_id": _ID, "quantity": {"type": "integer", "minimum": 1}},
    ),
}


class ShopWorld(Env):
    """The single-turn judge under ShopOrders: owns the episode's database; ``step`` grades the final state."""

    description = "Judge of a shop database against a goal state."
    reward_ranges = {"correct": RewardRange()}

    def __init__(self, goals: tuple[int, int] = (1, 2)):
        low, high = goals
        if not 1 <= low <= high <= 3:
            raise ValueError(f"goals must be a (low, high) range within 1..3, got {goals!r}")
        self.goals = goals
        self.tasks = ProceduralTaskSource(self._make_task)
        self.shop = Shop(open_world({table: [] for table in TABLES}))

    def _make_task(self, rng: np.random.Generator, index: int) -> Task:
        goals = int(rng.integers(self.goals[0], self.goals[1] + 1))
        world, instruction, solution = generate_task(rng, goals)
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": instruction}]
        return Task(
            id=f"shop-{index}",
            messages=messages,
            answer={"world": world, "solution": solution},
            metadata={"goals": goals},
        )

    def _reset(self, task: Task, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self.shop.db.close()
        self.shop = Shop(open_world(task.answer["world"]))
        self._initial = snapshot(self.shop.db)
        goal = Shop(open_world(task.answer["world"]))
        for call in task.answer["solution"]:
            getattr(goal, call["name"])(**call["arguments"])
        self._goal = snapshot(goal.db)
        goal.db.close()
        return task.prompt(), {}

    def _step(self, action: Action) -> StepResult:
        final = snapshot(self.shop.db)
        goal_rows = _changed_rows(self._initial, self._goal)
        goal_met = all(_row(final, key) == _row(self._goal, key) for key in goal_rows)
        unexpected = sorted(f"{table} {row_id}" for table, row_id in _changed_rows(self._initial, final) - goal_rows)
        correct = goal_met and not unexpected
        components = {"correct": 1.0 if correct else 0.0}
        info = {
            "reward_components": components,
            "correct": correct,
            "goal_met": goal_met,
            "unexpected_changes": unexpected,
        }
        verdict = "All requests were carried out correctly." if correct else "The shop is not in the requested state."
        return [{"role": "user", "content": verdict}], reward_total(components), True, False, info

    def tools(self) -> list[Tool]:
        """The OpenAI-schema tools, bound to whichever database the current episode has."""
        return [
            Tool(
                name=name,
                description=description,
                parameters={
                    "type": "object",
                    "properties": properties,
                    "required": list(properties),
                    "additionalProperties": False,
                },
                function=self._operation(name),
            )
            for name, (description, properties) in TOOL_SPECS.items()
        ]

    def _operation(self, name: str) -> Any:
        def operation(**arguments: Any) -> Any:
            try:
                return getattr(self.shop, name)(**arguments)
            except ShopError as error:
                return f"Refused: {error}"

        operation.__name__ = name
        return operation

    def close(self) -> None:
        self.shop.db.close()
        super().close()


class ShopOrders(ToolEnv):
    """Customer-service requests carried out through OpenAI-schema tools on a SQLite shop (module docstring).

    goals: (low, high) number of requests per task. Remaining keywords go to :class:`~envgym.tools.ToolEnv`.
    """

    description = "Carry out customer-service requests on a SQLite shop through function calls."

    def __init__(self, *, goals: tuple[int, int] = (1, 2), **tool_options: Any):
        world = ShopWorld(goals)
        tool_options.setdefault("prompt_format", "json")
        tool_options.setdefault("answer_format", None)
        tool_options.setdefault("max_calls_per_turn", 8)
        super().__init__(world, world.tools(), **tool_options)

    def reference_action(self) -> Action | None:
        """The next calls of the canonical solution (those not yet run in order), or the closing summary."""
        if self.task is None:
            return None
        solution = self.task.answer["solution"]
        calls = solution[self._solution_done : self._solution_done + self.max_calls_per_turn]
        if not calls:
            return "Every request is carried out."
        tool_calls = [
            ToolCall(call["name"], call["arguments"], f"ref_{self._solution_done + i}", "openai").to_openai()
            for i, call in enumerate(calls)
        ]
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        self._solution_done = 0  # how many calls of the canonical solution have run, in order
        return super()._reset(task, options)

    def _run(self, call: ToolCall) -> str:
        errors_before = self._errors
        text = super()._run(call)
        solution = self.task.answer["solution"]
        if (
            self._errors == errors_before
            and self._solution_done < len(solution)
            and solution[self._solution_done] == {"name": call.name, "arguments": call.arguments}
        ):
            self._solution_done += 1
        return text


def _changed_rows(before: dict[str, list[tuple]], after: dict[str, list[tuple]]) -> set[tuple[str, int]]:
    changed = set()
    for table in TABLES:
        old = {row[0]: row for row in before[table]}
        new = {row[0]: row for row in after[table]}
        changed |= {(table, key) for key in old.keys() | new.keys() if old.get(key) != new.get(key)}
    return changed


def _row(state: dict[str, list[tuple]], key: tuple[str, int]) -> tuple | None:
    table, row_id = key
    return next((row for row in state[table] if row[0] == row_id), None)

"""Stateful function-calling environments: the agent changes a world through OpenAI-schema tools."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the function-calling envs."""
    register(
        "tools/ShopOrders-v0",
        "envgym.envs.tools.orders:ShopOrders",
        max_turns=20,
        description="Carry out customer-service requests on a SQLite shop with function calls; reward 1 if the final "
        "database is exactly the goal state.",
    )
    register(
        "tools/ShopOrdersUser-v0",
        "envgym.envs.tools.shop_orders_user:ShopOrdersUser",
        max_turns=30,
        description="ShopOrders with a simulated user who reveals the requests over turns (tau-bench style); reward 1 "
        "if the final database is exactly the goal state.",
    )

"""Table environments: questions about generated tables, with computed answers."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the table envs."""
    register(
        "tables/TableQA-v0",
        "envgym.envs.tables.table_qa:TableQA",
        max_turns=1,
        description="Answer a question about a generated table (table_format=markdown|csv|json); <answer>.",
    )

"""SQL environments: text-to-SQL on generated SQLite databases, scored by execution."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the SQL envs."""
    register(
        "sql/TextToSQL-v0",
        "envgym.envs.sql.text_to_sql:TextToSQL",
        max_turns=1,
        description="Answer a question about a generated SQLite database with one read-only SELECT query.",
    )

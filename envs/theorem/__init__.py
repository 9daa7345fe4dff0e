"""Theorem environments: prove or disprove informal statements whose truth is decided exactly."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the theorem envs."""
    register(
        "theorem/Informal-v0",
        "envgym.envs.theorem.informal:Informal",
        max_turns=1,
        description="Decide whether an informal statement holds (truth-labelled variants decided by sympy or "
        "exhaustive check, or DeepTheorem JSONL via path=...); only the verdict \\boxed{proved|disproved} is graded.",
    )

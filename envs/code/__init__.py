"""Code environments: programs from the reply run in envgym.sandbox against hidden tests."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the code envs."""
    register(
        "code/HumanEval-v0",
        "envgym.envs.code.humaneval:HumanEval",
        max_turns=1,
        description="HumanEval (164 problems): complete a Python function; reward 1 when all tests pass.",
    )
    register(
        "code/StdIO-v0",
        "envgym.envs.code.stdio:StdIO",
        max_turns=1,
        description=(
            "Competitive programming (CodeContests/APPS JSONL): read stdin, write stdout; reward 1 when all cases pass."
        ),
    )
    register(
        "code/Refine-v0",
        "envgym.envs.code.refine:Refine",
        max_turns=None,
        description="Multi-turn coding: failing tests come back as feedback, up to max_attempts tries.",
    )

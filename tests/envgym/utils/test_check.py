"""check_env enforces the failure contract: a policy mistake is ``action_error``, never ``info["error"]``."""

import pytest

from envgym import Env, EnvSpec
from envgym.utils import check_env


class _Coin(Env):
    """Say heads or tails; anything else is a policy mistake, reported with the key given to the class."""

    mistake_key = "action_error"

    def _reset(self, task, options):
        return [{"role": "user", "content": "heads or tails?"}], {}

    def _step(self, action):
        if action not in ("heads", "tails"):
            problem = "say heads or tails"
            info = {"action_valid": False, self.mistake_key: problem}
            return [{"role": "user", "content": problem}], 0.0, False, False, info
        return [], float(action == "heads"), True, False, {"action_valid": True}


class _CoinWithErrorKey(_Coin):
    mistake_key = "error"


def test_an_env_reporting_mistakes_as_action_error_passes():
    check_env(EnvSpec("test/Coin-v0", _Coin, max_turns=4).make())


def test_an_env_reporting_a_policy_mistake_as_error_fails_with_the_contract():
    with pytest.raises(AssertionError, match="action_error"):
        check_env(EnvSpec("test/CoinWithErrorKey-v0", _CoinWithErrorKey, max_turns=4).make())

import pytest

from envgym.agents.evaluate import build_env_eval, load_suite

VOTE_FREE = {"components": [{"name": "correct", "source": "env", "weight": 2.0}]}


def test_a_suite_entry_reward_reaches_make(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text("defaults: {n: 2, n_tasks: 1}\nenvs:\n  - id: math/Arithmetic-v0\n    reward:\n"
                     "      components: [{name: correct, source: env, weight: 2.0}]\n")
    (entry,), _ = load_suite(suite)
    assert entry.make_kwargs() == {"reward": VOTE_FREE}


def test_a_bad_suite_reward_fails_when_the_suite_is_read():
    with pytest.raises(ValueError, match=r"math/Arithmetic-v0: reward.components\[0\].weight must be a number"):
        build_env_eval({"id": "math/Arithmetic-v0", "reward": {"components": [{"name": "c", "source": "env",
                                                                                  "weight": "x"}]}})

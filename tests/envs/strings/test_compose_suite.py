"""suites/compose.yaml measures held-out generalisation: train split, held-out pairs, depth 3, one held-out set."""

import envgym
from envgym.agents.evaluation.suite import load_suite


def test_the_suite_plays_the_train_heldout_and_deep_splits():
    entries, _ = load_suite("compose")
    envs = [envgym.make(entry.env, **entry.make_kwargs()) for entry in entries]
    assert [env.unwrapped.split for env in envs] == ["train", "heldout", "deep"]
    assert envs[2].unwrapped.depths == [3]


def test_the_suite_splits_share_one_held_out_set():
    entries, _ = load_suite("compose")
    envs = [envgym.make(entry.env, **entry.make_kwargs()).unwrapped for entry in entries]
    assert len({(env.holdout_seed, env.holdout_fraction) for env in envs}) == 1
    assert not set(envs[0].pairs) & set(envs[1].pairs)

"""bfcl/* ids: one per category when bfcl-eval is installed; none, with one info line and no warning, without it."""

import logging
import warnings

import pytest

import envgym
from envgym.envs import bfcl
from envgym.envs.bfcl.data import CATEGORIES


def test_every_category_is_registered_under_the_bfcl_namespace():
    ids = {spec.id for spec in envgym.list_envs() if spec.id.startswith("bfcl/")}
    assert ids == {bfcl.env_id(category) for category in CATEGORIES}
    assert bfcl.env_id("live_parallel_multiple") == "bfcl/LiveParallelMultiple-v0"


def test_the_hallucination_categories_are_fenced_because_a_constant_answer_is_right_on_every_task():
    fenced = {spec.id: spec.unsafe_reason for spec in envgym.list_envs() if spec.id.startswith("bfcl/") and spec.unsafe}
    assert set(fenced) == {"bfcl/Irrelevance-v0", "bfcl/LiveIrrelevance-v0", "bfcl/LiveRelevance-v0"}
    assert fenced["bfcl/Irrelevance-v0"].startswith("the right answer is the same on every task (no call)")
    with pytest.raises(envgym.UnsafeEnv):
        envgym.make("bfcl/Irrelevance-v0")


def test_without_bfcl_eval_nothing_is_registered_and_one_info_line_says_why(scratch_registry, monkeypatch, caplog):
    for env_id in [key for key in scratch_registry if key.startswith("bfcl/")]:
        del scratch_registry[env_id]
    monkeypatch.setattr(bfcl, "available", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.INFO, logger="envgym.envs.bfcl"):
            bfcl.register_envs()
    assert not [key for key in scratch_registry if key.startswith("bfcl/")]
    assert [record.getMessage() for record in caplog.records] == [
        "BFCL envs not registered: bfcl-eval is not installed (pip install --no-deps bfcl-eval)"
    ]

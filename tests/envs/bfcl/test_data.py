"""The entries the envs read are the entries BFCL's own loader returns, for every category."""

import os
import tempfile

import pytest

from envgym.envs.bfcl import data


@pytest.fixture(scope="module")
def bfcl_utils():
    if "BFCL_PROJECT_ROOT" not in os.environ:  # it makes folders on import; one folder a process
        os.environ["BFCL_PROJECT_ROOT"] = tempfile.mkdtemp(prefix="bfcl-root-")
    import bfcl_eval.utils

    return bfcl_eval.utils


@pytest.mark.parametrize("category", data.CATEGORIES)
@pytest.mark.parametrize("hints", [True, False])
def test_entries_equal_bfcls_loader(bfcl_utils, category, hints):
    theirs = bfcl_utils.load_dataset_entry(category, include_language_specific_hint=hints)
    assert data.entries(category, language_hints=hints) == theirs


@pytest.mark.parametrize("category", [c for c in data.CATEGORIES if "relevance" not in c])
def test_golds_equal_bfcls_loader(bfcl_utils, category):
    theirs = {entry["id"]: entry["ground_truth"] for entry in bfcl_utils.load_ground_truth_entry(category)}
    assert data.gold_entries(category) == theirs


def test_an_unknown_category_is_refused_with_the_accepted_ones():
    with pytest.raises(ValueError, match="unknown BFCL category 'simple'; accepted: simple_python, simple_java"):
        data.raw_entries("simple")

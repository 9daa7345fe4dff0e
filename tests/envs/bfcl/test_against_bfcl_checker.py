"""envgym's grading beside BFCL's own checkers, on the same calls: the gold calls and mutations of them.

The default run takes a seeded sample of entries per category; the full sweep (every entry) is marked slow
(``pytest -m slow tests/envs/bfcl/test_against_bfcl_checker.py``; its numbers are in docs/bfcl.md).
Every difference must be a known one, with its reason in docs/bfcl.md.
"""

import numpy as np
import pytest
from helpers.bfcl_official import KNOWN_DIFFERENCES, multi_turn_agreement, single_turn_agreement

from envgym.envs.bfcl import data

SAMPLE = 25


def _sample(category: str) -> list[int]:
    size = len(data.raw_entries(category))
    rng = np.random.default_rng(sum(category.encode()))
    return sorted(rng.choice(size, size=min(SAMPLE, size), replace=False).tolist())


def _agreement(counts: dict) -> float:
    agree = sum(n for (_, verdict), n in counts.items() if verdict == "agree")
    differ = sum(n for (_, verdict), n in counts.items() if verdict == "differ")
    return agree / (agree + differ)


@pytest.mark.parametrize("category", data.SINGLE_TURN)
def test_single_turn_verdicts_agree_with_bfcls_checker_on_a_sample(category):
    counts, differences = single_turn_agreement(category, _sample(category))
    assert {(entry, kind) for entry, kind, _, _ in differences} <= KNOWN_DIFFERENCES
    assert counts["gold", "accepted"] >= 1  # the gold is accepted by both: the agreement is not all refusals


@pytest.mark.parametrize("category", data.MULTI_TURN)
def test_multi_turn_verdicts_agree_with_bfcls_state_checker_on_a_sample(category):
    counts, differences = multi_turn_agreement(category, _sample(category)[:8])
    assert differences == []
    assert counts["gold", "accepted"] == counts["gold", "agree"]  # both accept every replayed gold trajectory


@pytest.mark.slow
@pytest.mark.parametrize("category", data.SINGLE_TURN)
def test_single_turn_verdicts_agree_on_every_entry(category):
    counts, differences = single_turn_agreement(category)
    assert {(entry, kind) for entry, kind, _, _ in differences} <= KNOWN_DIFFERENCES
    assert _agreement(counts) >= 0.999


@pytest.mark.slow
@pytest.mark.parametrize("category", data.MULTI_TURN)
def test_multi_turn_verdicts_agree_on_every_entry(category):
    counts, differences = multi_turn_agreement(category)
    assert differences == []
    assert counts["gold", "accepted"] == len(data.raw_entries(category))

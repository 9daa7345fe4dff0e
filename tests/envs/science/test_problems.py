"""envs/science/problems.py: formulas parsed, values to 3 significant figures, options that carry no cue."""

from collections import Counter

import numpy as np

from envgym.envs.science.problems import GENERATORS, RUNGS, option_texts, parse_formula, significant


def test_parse_formula_counts_repeated_elements():
    assert parse_formula("C2H5OH") == {"C": 2, "H": 6, "O": 1}


def test_significant_writes_three_figures_without_an_exponent():
    assert [significant(v) for v in (0.0012345, 12345.0, 2.5, 46.068)] == ["0.00123", "12300", "2.5", "46.1"]


def test_every_generator_gives_four_options_in_the_order_of_the_stepped_input():
    for name, generate in GENERATORS.items():
        for seed in range(50):
            problem = generate(np.random.default_rng(seed))
            assert len(option_texts(problem)) == RUNGS, name
            assert list(problem.rungs) == sorted(problem.rungs), name  # every formula grows with its stepped input


def test_the_asked_rung_is_uniform_whatever_the_generator():
    for name, generate in GENERATORS.items():
        rungs = Counter(generate(np.random.default_rng(seed)).answer_rung for seed in range(800))
        assert set(rungs) == set(range(RUNGS)) and all(150 <= n <= 250 for n in rungs.values()), (name, rungs)

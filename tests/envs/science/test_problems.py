"""envs/science/problems.py: formulas parsed, values to 3 significant figures, distinct options."""

import numpy as np

from envgym.envs.science.problems import GENERATORS, Problem, option_texts, parse_formula, significant


def test_parse_formula_counts_repeated_elements():
    assert parse_formula("C2H5OH") == {"C": 2, "H": 6, "O": 1}


def test_significant_writes_three_figures_without_an_exponent():
    assert [significant(v) for v in (0.0012345, 12345.0, 2.5, 46.068)] == ["0.00123", "12300", "2.5", "46.1"]


def test_a_mistake_that_rounds_to_the_correct_text_is_replaced():
    texts = option_texts(Problem("t", "q", 10.0, (10.001, 3.0, 3.0001), "m"), 4)
    assert texts[0] == "10 m" and len(set(texts)) == 4


def test_every_generator_gives_four_distinct_options():
    for name, generate in GENERATORS.items():
        for seed in range(50):
            assert len(set(option_texts(generate(np.random.default_rng(seed)), 4))) == 4, name

"""LevelCurriculum: the frontier follows the pass rate on a toy task whose pass rate is scripted by level."""

import numpy as np
import pytest

from envgym.agents.training.curriculum import LevelCurriculum


def play(curriculum, steps, skill_at, groups=4, num_generations=4, seed=0):
    """Drive the curriculum like the trainer does: draw a level per group, report its episode rewards. An episode
    on level L passes when L < skill_at(step) (the toy model has mastered the levels below its skill). Returns
    the frontier after each step."""
    rng = np.random.default_rng(seed)
    frontiers = []
    for step in range(steps):
        for _ in range(groups):
            level = curriculum.draw(rng)
            curriculum.update(level, [float(level < skill_at(step))] * num_generations)
        frontiers.append(curriculum.frontier)
    return frontiers


def test_the_frontier_moves_up_as_the_pass_rate_rises():
    curriculum = LevelCurriculum({"difficulty": [1, 2, 3, 4]}, band=(0.2, 0.8), window=16)
    frontiers = play(curriculum, 40, skill_at=lambda step: step // 10 + 1)  # masters one more level every 10 steps
    assert frontiers == sorted(frontiers)
    assert frontiers[-1] == 3
    assert frontiers[5] <= 1  # never ahead of the skill: level L unlocks only once L-1 is mastered


def test_the_frontier_stays_when_the_pass_rate_does_not_rise():
    curriculum = LevelCurriculum({"difficulty": [1, 2, 3, 4]}, band=(0.2, 0.8), window=16)
    frontiers = play(curriculum, 40, skill_at=lambda step: 1)  # masters level 0 only, forever
    assert frontiers[-1] == 1
    assert set(frontiers) <= {0, 1}


def test_a_frontier_too_hard_stays_and_the_easier_level_in_the_band_stays_in_the_pool():
    curriculum = LevelCurriculum({"difficulty": [1, 2, 3]}, band=(0.2, 0.8), window=4)
    curriculum.update(0, [1.0, 1.0, 1.0, 0.0])  # 0.75: in the band, no move
    curriculum.frontier = 1
    curriculum.update(1, [0.0] * 4)
    assert curriculum.frontier == 1
    assert curriculum.pool() == [0, 1]


def test_the_new_frontier_needs_a_full_window_of_its_own_before_the_next_move():
    curriculum = LevelCurriculum({"difficulty": [1, 2, 3]}, window=8)
    curriculum.update(0, [1.0] * 8)
    curriculum.update(1, [1.0] * 7)
    assert curriculum.frontier == 1
    curriculum.update(1, [1.0])
    assert curriculum.frontier == 2


def test_a_mastered_level_leaves_the_pool_and_the_frontier_never_does():
    curriculum = LevelCurriculum({"difficulty": [1, 2, 3]}, band=(0.2, 0.8), window=4)
    curriculum.update(0, [1.0] * 4)  # mastered: the frontier moves to level 1
    assert curriculum.pool() == [1]
    curriculum.update(1, [1.0, 0.0])  # half the window: in the band, no move
    curriculum.frontier = 2
    assert curriculum.pool() == [1, 2]


def test_levels_as_a_list_of_argument_mappings():
    curriculum = LevelCurriculum([{"difficulty": 1, "digits": 2}, {"difficulty": 2, "digits": 3}])
    assert curriculum.levels[1] == {"difficulty": 2, "digits": 3}


def test_metrics_report_the_level_pool_and_numeric_values():
    curriculum = LevelCurriculum({"difficulty": [1, 2], "style": ["a", "b"]}, window=2)
    curriculum.update(0, [1.0, 1.0])
    assert curriculum.metrics("curriculum/x") == {
        "curriculum/x/level": 1,
        "curriculum/x/pool_size": 1,
        "curriculum/x/difficulty": 2,
    }


def test_state_round_trips_through_a_checkpoint_dict():
    curriculum = LevelCurriculum({"difficulty": [1, 2, 3]}, window=4)
    play(curriculum, 5, skill_at=lambda step: 1)
    restored = LevelCurriculum({"difficulty": [1, 2, 3]}, window=4)
    restored.load_state_dict(curriculum.state_dict())
    assert restored.state_dict() == curriculum.state_dict()
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    assert [curriculum.draw(rng_a) for _ in range(20)] == [restored.draw(rng_b) for _ in range(20)]


@pytest.mark.parametrize(
    "data, message",
    [
        ({"levels": {"difficulty": [1]}}, "at least two levels"),
        ({"levels": {"difficulty": [1, 2], "digits": [1]}}, "equally long"),
        ({"levels": {"difficulty": [1, 2]}, "band": [0.8, 0.2]}, "low < high"),
        ({"levels": {"difficulty": [1, 2]}, "window": 0}, "window"),
        ({"levels": {"difficulty": [1, 2]}, "speed": 3}, "unknown keys"),
        ({"band": [0.2, 0.8]}, "needs levels"),
    ],
)
def test_a_bad_recipe_curriculum_is_refused_with_what_is_accepted(data, message):
    with pytest.raises(ValueError, match=message):
        LevelCurriculum.from_dict(data, "recipe.yaml: curriculum")

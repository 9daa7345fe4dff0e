"""EnvMixture: seeded draws by weight, recipe entries checked before any model loads, curricula per member."""

import numpy as np
import pytest

from envgym.agents.training.curriculum import LevelCurriculum
from envgym.agents.training.mixture import EnvMixture, MixtureMember, summary_lines
from envgym.agents.training.recipe import RecipeEnvs
from envgym.config import BadInput, validate


def three_envs():
    return EnvMixture(
        [
            MixtureMember("math/Arithmetic-v0", weight=2),
            MixtureMember("strings/Compose-v0"),
            MixtureMember("science/MultipleChoice-v0"),
        ]
    )


def test_draws_follow_the_weights():
    mixture, rng = three_envs(), np.random.default_rng(0)
    members = [mixture.draw(rng)[0] for _ in range(8000)]
    shares = np.bincount(members, minlength=3) / len(members)
    assert shares == pytest.approx([0.5, 0.25, 0.25], abs=0.02)


def test_the_same_seed_draws_the_same_sources():
    first = [three_envs().draw(rng) for rng in [np.random.default_rng(7)] for _ in range(50)]
    second = [three_envs().draw(rng) for rng in [np.random.default_rng(7)] for _ in range(50)]
    assert first == second


def test_a_single_env_spends_no_random_draws():
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert EnvMixture([MixtureMember("math/Arithmetic-v0")]).draw(rng) == (0, None)
    assert rng.bit_generator.state == state  # a single-env run samples its tasks exactly as before mixtures


def test_a_member_with_a_curriculum_draws_its_levels_and_learns_from_updates():
    curriculum = LevelCurriculum({"difficulty": [1, 2]}, window=2)
    mixture = EnvMixture([MixtureMember("math/Arithmetic-v0", curriculum=curriculum)])
    assert mixture.draw(np.random.default_rng(0)) == (0, 0)
    mixture.update((0, 0), [1.0, 1.0])
    assert mixture.metrics() == {
        "curriculum/math/Arithmetic-v0/level": 1,
        "curriculum/math/Arithmetic-v0/pool_size": 1,
        "curriculum/math/Arithmetic-v0/difficulty": 2,
    }
    assert mixture.sources() == [(0, 0), (0, 1)]


def test_a_level_factory_makes_the_env_with_the_levels_arguments():
    member = MixtureMember(
        "math/Arithmetic-v0", env_kwargs={"max_turns": 1}, curriculum=LevelCurriculum({"difficulty": [1, 3]})
    )
    env = member.factory(1)()
    assert env.unwrapped.difficulty == 3


def test_repeated_names_are_refused():
    with pytest.raises(ValueError, match="distinct names"):
        EnvMixture([MixtureMember("math/Arithmetic-v0"), MixtureMember("math/Arithmetic-v0")])


def read_mixture(entries, where):
    """A recipe's ``envs:`` as the recipe reader takes it."""
    return EnvMixture([entry.member() for entry in validate(RecipeEnvs, {"envs": entries}, where).envs])


def test_a_recipes_envs_build_members_with_their_arguments_turn_limits_and_rewards():
    mixture = read_mixture(
        [
            {"env": "math/Arithmetic-v0", "weight": 2, "env_kwargs": {"difficulty": 1}},
            {"env": "strings/Compose-v0", "env_kwargs": {"max_turns": 1}},
            {
                "env": "math/Arithmetic-v0",
                "name": "arithmetic-hard",
                "env_kwargs": {"difficulty": 3},
                "reward": {"components": [{"name": "correct", "source": "env", "weight": 1.0}]},
            },
        ],
        "mix.yaml",
    )
    assert [m.name for m in mixture.members] == ["math/Arithmetic-v0", "strings/Compose-v0", "arithmetic-hard"]
    assert mixture.probabilities.tolist() == [0.5, 0.25, 0.25]
    assert mixture.members[1].env_kwargs == {"max_turns": 1}
    assert type(mixture.members[2].reward).__name__ == "RewardSpec" and "reward" not in mixture.members[2].env_kwargs


@pytest.mark.parametrize(
    "entries, message",
    [
        ([{"env": "math/Arithmetc-v0"}], r"mix.yaml: envs\[0\]: .*Did you mean 'math/Arithmetic-v0'"),
        ([{"env": "math/Arithmetic-v0", "weight": 0}], r"envs\[0\].weight must be a number > 0, got 0"),
        ([{"env": "math/Arithmetic-v0", "weight": -1}], r"envs\[0\].weight must be a number > 0, got -1"),
        ([{"env": "math/Arithmetic-v0", "wieght": 2}], r"envs\[0\]: unknown key 'wieght'; known keys are"),
        ([{"env": "math/Arithmetic-v0", "env_kwargs": {"difficullty": 2}}], "takes no argument 'difficullty'"),
        (
            [{"env": "math/Arithmetic-v0", "env_kwargs": {"max_turns": 0}}],
            r"envs\[0\]: max_turns must be a whole number",
        ),
        ([{"weight": 1}], r"envs\[0\].env is missing"),
        ([{"env": "math/Arithmetic-v0", "curriculum": {"levels": {"difficulty": [1]}}}], "at least two levels"),
        ([{"env": "math/Arithmetic-v0", "curriculum": {"levels": {"dificulty": [1, 2]}}}], "takes no argument"),
        ([{"env": "math/Arithmetic-v0", "name": 3}], "name must be a string"),
        ([], "envs must be a non-empty list"),
        ("math/Arithmetic-v0", "envs must be a list"),
    ],
)
def test_a_bad_entry_is_one_line_naming_it(entries, message):
    with pytest.raises(BadInput, match=message):
        read_mixture(entries, "mix.yaml")


def test_the_summary_names_each_env_with_its_groups_and_rewards():
    mixture = EnvMixture([MixtureMember("math/Arithmetic-v0"), MixtureMember("strings/Compose-v0")])
    history = [
        {
            "env/math/Arithmetic-v0/groups": 2,
            "env/math/Arithmetic-v0/reward_mean": 0.5,
            "env/strings/Compose-v0/groups": 1,
            "env/strings/Compose-v0/reward_mean": 0.0,
        },
        {"env/math/Arithmetic-v0/groups": 3, "env/math/Arithmetic-v0/reward_mean": 1.0},
    ]
    assert summary_lines(mixture, history) == [
        "math/Arithmetic-v0: trained on 5 groups, reward mean 0.750 over the run, 1.000 at its last step",
        "strings/Compose-v0: trained on 1 groups, reward mean 0.000 over the run, 0.000 at its last step",
    ]

import gymnasium
import pytest

import envgym


def test_gymnasium_make_with_the_module_prefix_builds_the_envgym_env():
    env = gymnasium.make("envgym.gym:envgym/games.GuessNumber-v0")
    messages, _ = env.reset(seed=3)
    assert messages == envgym.make("games/GuessNumber-v0").reset(seed=3)[0]
    secret = env.unwrapped.secret
    _, reward, terminated, truncated, _ = env.step(f"<guess>{secret}</guess>")
    assert (reward, terminated, truncated) == (1.0, True, False)


def test_every_envgym_env_has_a_gymnasium_id():
    from envgym.gym import gymnasium_id, register_gymnasium_envs

    ids = register_gymnasium_envs()
    assert len(ids) == len(envgym.list_envs())
    assert gymnasium_id("rg/basic_arithmetic-v0") == "envgym/rg.basic_arithmetic-v0"
    assert all(gym_id in gymnasium.registry for gym_id in ids)


def test_gymnasium_kwargs_override_the_envgym_defaults():
    import envgym.gym  # noqa: F401  (registers the ids)

    env = gymnasium.make("envgym/games.GuessNumber-v0", high=10)
    env.reset(seed=0)
    assert 1 <= env.unwrapped.secret <= 10


def test_an_unknown_gymnasium_id_is_gymnasiums_own_error():
    import envgym.gym  # noqa: F401

    with pytest.raises(gymnasium.error.Error):
        gymnasium.make("envgym/games.GuesNumber-v0")

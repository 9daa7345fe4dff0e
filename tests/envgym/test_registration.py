"""Registry: ids, defaults, lazy entry points, plugins and 'did you mean'."""

import warnings
from importlib.metadata import EntryPoint

import pytest

import envgym
from envgym import registration
from envgym.wrappers import TimeLimit


def test_unknown_id_suggests_close_matches():
    with pytest.raises(envgym.UnknownEnv, match="Did you mean 'games/GuessNumber-v0'"):
        envgym.make("games/GuesNumber-v0")


@pytest.mark.parametrize("bad_id", ["GuessNumber", "games/GuessNumber", "games/Guess Number-v0", "/x-v0"])
def test_malformed_ids_are_rejected_with_the_expected_shape(scratch_registry, bad_id):
    with pytest.raises(ValueError, match="namespace/Name-vN"):
        envgym.register(bad_id, "envgym.envs.games.guess_number:GuessNumber")


def test_entry_point_must_name_module_and_class(scratch_registry):
    with pytest.raises(ValueError, match="module:ClassName"):
        envgym.register("test/X-v0", "envgym.envs.games.guess_number")


def test_spec_kwargs_are_defaults_that_make_overrides(scratch_registry):
    envgym.register("test/Small-v0", "envgym.envs.games.guess_number:GuessNumber", max_turns=3, low=1, high=4)
    env = envgym.make("test/Small-v0", high=8)
    assert (env.unwrapped.low, env.unwrapped.high) == (1, 8)
    assert isinstance(env, TimeLimit) and env.max_turns == 3
    assert envgym.make("test/Small-v0", max_turns=None).unwrapped is not None
    assert not isinstance(envgym.make("test/Small-v0", max_turns=None), TimeLimit)


def test_entry_point_is_imported_only_when_made(scratch_registry):
    envgym.register("test/Missing-v0", "no_such_module_anywhere:Env")
    assert "test/Missing-v0" in [s.id for s in envgym.list_envs()]
    with pytest.raises(ModuleNotFoundError):
        envgym.make("test/Missing-v0")


def test_callable_entry_points_work(scratch_registry):
    from envgym.envs.games.guess_number import GuessNumber

    envgym.register("test/Callable-v0", lambda **kw: GuessNumber(**kw), high=5)
    assert envgym.make("test/Callable-v0").unwrapped.high == 5
    assert envgym.spec("test/Callable-v0").to_dict()["entry_point"].endswith("<lambda>")


def test_re_registering_warns(scratch_registry):
    envgym.register("test/Twice-v0", "envgym.envs.games.guess_number:GuessNumber")
    with pytest.warns(UserWarning, match="overriding"):
        envgym.register("test/Twice-v0", "envgym.envs.games.guess_number:GuessNumber")


def test_spec_parts():
    spec = envgym.spec("games/GuessNumber-v0")
    assert (spec.namespace, spec.name, spec.version) == ("games", "GuessNumber", 0)


def test_a_broken_plugin_warns_and_the_others_still_register(scratch_registry, monkeypatch):
    good = EntryPoint("good", "tests_plugin_good:register", "envgym.envs")
    broken = EntryPoint("broken", "no_such_plugin_module:register", "envgym.envs")

    def fake_entry_points(group):
        assert group == "envgym.envs"
        return [broken, good]

    import sys
    import types

    module = types.ModuleType("tests_plugin_good")
    module.register = lambda: envgym.register("plugin/Good-v0", "envgym.envs.games.guess_number:GuessNumber")
    monkeypatch.setitem(sys.modules, "tests_plugin_good", module)
    monkeypatch.setattr(registration, "entry_points", fake_entry_points)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registration.load_plugins(force=True)
    [warning] = [w for w in caught if "plugin" in str(w.message)]
    assert "'broken' of the package 'no_such_plugin_module'" in str(warning.message)
    assert "pip install -U no_such_plugin_module" in str(warning.message)
    assert 'python -c "import no_such_plugin_module"' in str(warning.message)
    assert "plugin/Good-v0" in registration.registry
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        envgym.list_envs()  # the registry asked again in the same process: no second warning
    assert not [w for w in again if "plugin" in str(w.message)]


def test_builtin_envs_come_from_the_entry_point_group():
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="envgym.envs")}
    assert "games" in names


def test_an_unsafe_env_is_built_only_with_allow_unsafe(scratch_registry):
    envgym.register(
        "test/Unsafe-v0",
        "envgym.envs.games.guess_number:GuessNumber",
        unsafe=True,
        unsafe_reason="its scorer evals answers",
    )
    with pytest.raises(envgym.UnsafeEnv, match="its scorer evals answers.*allow_unsafe=True"):
        envgym.make("test/Unsafe-v0")
    assert envgym.make("test/Unsafe-v0", allow_unsafe=True).unwrapped.high == 100


def test_make_vec_refuses_an_unsafe_env_without_the_opt_in(scratch_registry):
    envgym.register("test/Unsafe-v0", "envgym.envs.games.guess_number:GuessNumber", unsafe=True)
    with pytest.raises(envgym.UnsafeEnv):
        envgym.make_vec("test/Unsafe-v0", 2)
    envgym.make_vec("test/Unsafe-v0", 2, allow_unsafe=True).close()


def test_allow_unsafe_is_harmless_for_a_safe_env(scratch_registry):
    assert envgym.make("games/GuessNumber-v0", allow_unsafe=True).unwrapped.high == 100


def test_the_listing_marks_unsafe_envs_and_says_why(scratch_registry):
    envgym.register(
        "test/Unsafe-v0",
        "envgym.envs.games.guess_number:GuessNumber",
        unsafe=True,
        unsafe_reason="constant answers win",
    )
    listed = envgym.spec("test/Unsafe-v0").to_dict()
    assert (listed["unsafe"], listed["unsafe_reason"]) == (True, "constant answers win")
    assert envgym.spec("games/GuessNumber-v0").to_dict()["unsafe"] is False


def test_the_unsafe_message_names_the_opt_in_that_exists(scratch_registry):
    envgym.register("test/Unsafe-v0", "envgym.envs.games.guess_number:GuessNumber", unsafe=True)
    with pytest.raises(envgym.UnsafeEnv, match=r"allow_unsafe: true in its env_kwargs") as refused:
        envgym.make("test/Unsafe-v0")
    assert "--allow-unsafe" not in str(refused.value)


def test_make_refuses_an_argument_the_env_does_not_take_naming_the_ones_it_does():
    with pytest.raises(TypeError, match=r"math/Arithmetic-v0 takes no argument 'difficulti'; it accepts difficulty"):
        envgym.make("math/Arithmetic-v0", difficulti=2)


def test_every_keyword_make_owns_is_taken_for_an_env_that_does_not_name_it():
    spec = envgym.spec("games/GuessNumber-v0")
    own = dict(max_turns=2, system_prompt="s", few_shot=[], reward=None, render_mode=None, allow_unsafe=False)
    assert set(own) == set(spec.MAKE_KEYWORDS)
    spec.check_kwargs(own)
    env = envgym.make("games/GuessNumber-v0", **own)
    assert env.max_turns == 2  # TimeLimit's, from make's own max_turns

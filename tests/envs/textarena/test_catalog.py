"""The TextArena catalog covers every -v0 game of the installed textarena, and each exclusion's reason still holds."""

import sys
from importlib import resources

import pytest

import envgym

# The registry module, not the bare name: where textarena is not installed (the vLLM venv), "textarena" would be
# found as this tests/envs/textarena folder (a namespace package) and not skip.
ENV_REGISTRY = pytest.importorskip("textarena.envs.registration").ENV_REGISTRY
import textarena  # noqa: E402

from envgym.envs.textarena.catalog import (  # noqa: E402
    EXCLUDED,
    GAMES,
    NEEDS_NLTK_WORDS,
    NEEDS_OPENROUTER,
    NEEDS_PYTHON_312,
)


def game_source(game: str) -> str:
    module = ENV_REGISTRY[game].entry_point.split(":")[0]
    return resources.files("textarena").joinpath(*module.split(".")[1:]).with_suffix(".py").read_text()


def test_adapted_and_excluded_games_are_the_installed_textarena_s_v0_games_exactly():
    installed = {game for game in ENV_REGISTRY if game.endswith("-v0")}
    assert not set(GAMES) & set(EXCLUDED)
    assert set(GAMES) | set(EXCLUDED) == installed
    assert (len(installed), len(GAMES), len(EXCLUDED)) == (95, 72, 23)


def test_every_adapted_game_is_registered_as_textarena_slash_its_id():
    registered = {spec.id for spec in envgym.list_envs() if spec.id.startswith("textarena/")}
    assert registered == {f"textarena/{game}" for game in GAMES}


@pytest.mark.parametrize("game", sorted(game for game, reason in EXCLUDED.items() if reason == NEEDS_OPENROUTER))
def test_an_openrouter_game_cannot_be_built_without_its_key(game, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OpenRouter API key"):
        textarena.make(game)


@pytest.mark.parametrize("game", sorted(game for game, reason in EXCLUDED.items() if reason == NEEDS_NLTK_WORDS))
def test_a_word_game_reads_nltk_s_words_corpus(game):
    # Read, not imported: importing these modules calls nltk.download.
    source = game_source(game)
    assert "from nltk.corpus import words" in source or "nltk.corpus.words" in source or "word_lists" in source


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the f-strings of these games parse on Python 3.12+")
@pytest.mark.parametrize("game", sorted(game for game, reason in EXCLUDED.items() if reason == NEEDS_PYTHON_312))
def test_a_python_312_game_does_not_compile_here(game):
    with pytest.raises(SyntaxError):
        compile(game_source(game), game, "exec")


@pytest.mark.parametrize("game", ["UsedCarNegotiation-v0", "ScorableGames-v0"])
def test_a_game_whose_files_the_wheel_lacks_cannot_start(game):
    with pytest.raises(FileNotFoundError):
        textarena.make(f"{game}-raw").reset(num_players=2, seed=0)


def test_babyai_text_has_no_raw_registration():
    assert "BabyAiText-v0-raw" not in ENV_REGISTRY


def test_every_adapted_game_that_swaps_set_invalid_move_s_arguments_has_its_reward_fixed():
    import re

    from envgym.envs.textarena.catalog import REWARD_FIXES

    # set_invalid_move(reason, reward): a first argument that is a number or a method call, then a string.
    swapped = re.compile(r"set_invalid_move\((?:self\.\w+\(\)|[\d.]+)\s*,\s*f?[\"']")
    found = {game for game in GAMES if swapped.search(game_source(game))}
    assert found == set(REWARD_FIXES) - {"Bandit-v0"}

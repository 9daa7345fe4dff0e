"""TextArena's games (``textarena``, MIT) as ``textarena/<Game>-v0``: one-player games as envs, the others as
multi-seat envs for self-play; needs ``pip install envgym[textarena]`` (docs/textarena.md)."""

import importlib.util

from envgym.registration import register

# The outer turn limit (truncated) over every seat's turns; TextArena's games end well before it by their own rules.
MAX_TURNS = 400


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group; registers nothing when textarena is not installed."""
    if importlib.util.find_spec("textarena") is None:
        return
    from envgym.envs.textarena.catalog import GAMES

    for game, plan in GAMES.items():
        seats = "one player" if plan["players"] == 1 else f"{plan['players']} seats (self-play)"
        register(
            f"textarena/{game}",
            "envgym.envs.textarena.env:make_textarena",
            max_turns=MAX_TURNS,
            description=f"TextArena's {game.removesuffix('-v0')}, {seats}; the game's own messages and rewards.",
            game=game,
        )

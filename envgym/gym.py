"""Every envgym env in Gymnasium's own registry, so ``gymnasium.make`` builds it.

Gymnasium ids cannot hold a second ``/``, so ``games/GuessNumber-v0`` becomes
``envgym/games.GuessNumber-v0`` (Gymnasium namespace ``envgym``, name ``games.GuessNumber``, same version).
Importing this module registers them all; as with other Gymnasium plugins (``gymnasium.register_envs``),
either import it first or name it in the id::

    import gymnasium
    env = gymnasium.make("envgym.gym:envgym/games.GuessNumber-v0")   # imports envgym.gym, then makes the env

``import envgym`` alone does not do this: it would load every plugin at import time. ``gymnasium.make``
adds its own wrappers (order enforcing, the passive checker, ``TimeLimit`` when ``max_episode_steps`` is
given); the env inside is exactly what ``envgym.make`` returns. Plugins installed after the import are
picked up by calling :func:`register_gymnasium_envs` again.
"""

from __future__ import annotations

import functools

import gymnasium

from envgym.registration import list_envs, make

NAMESPACE = "envgym"


def gymnasium_id(envgym_id: str) -> str:
    """The Gymnasium id of an envgym id: ``games/GuessNumber-v0`` -> ``envgym/games.GuessNumber-v0``."""
    namespace, _, rest = envgym_id.partition("/")
    return f"{NAMESPACE}/{namespace}.{rest}"


def register_gymnasium_envs() -> list[str]:
    """Register every envgym env (built-in and plugins) with Gymnasium; returns the Gymnasium ids."""
    ids = []
    for spec in list_envs():
        gym_id = gymnasium_id(spec.id)
        if gym_id not in gymnasium.registry:
            # The envgym registry keeps owning defaults and max_turns: Gymnasium's kwargs pass through as overrides.
            gymnasium.register(
                gym_id, entry_point=functools.partial(make, spec.id), nondeterministic=spec.nondeterministic
            )
        ids.append(gym_id)
    return ids


register_gymnasium_envs()

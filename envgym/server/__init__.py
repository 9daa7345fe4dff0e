"""Envs as network services: the env server (``envgym serve env``), :class:`RemoteEnv`, and Ray.

- :mod:`envgym.server.app`: the FastAPI server (sessions, capacity, idle reaping, auth, size limits).
- :mod:`envgym.server.client`: :class:`RemoteEnv`, the Env API over HTTP.
- :mod:`envgym.server.openenv_app`: the same envs over OpenEnv's protocol, at ``/openenv/{env_id}``.
- :mod:`envgym.server.ray_backend`: ``make_vec(..., mode="ray")`` and rollouts fanned out over Ray actors.
- :mod:`envgym.server.launch`: start a server in a child process (tests, benchmarks, notebooks).

Importing this package imports none of them; ask for what you use.
"""

from typing import Any

_EXPORTS = {
    "RemoteEnv": "envgym.server.client",
    "RemoteEnvError": "envgym.server.client",
    "SessionLost": "envgym.server.client",
    "ServerUnavailable": "envgym.server.client",
    "ServerSettings": "envgym.server.app",
    "create_app": "envgym.server.app",
    "LocalServer": "envgym.server.launch",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'envgym.server' has no attribute {name!r}")

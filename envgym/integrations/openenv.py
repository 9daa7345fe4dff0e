"""OpenEnvEnv: any OpenEnv server played as an envgym env, through OpenEnv's own client.

    env = envgym.make("openenv/Remote-v0", base_url="http://127.0.0.1:8000", max_turns=8)
    messages, info = env.reset(seed=0)
    messages, reward, terminated, truncated, info = env.step("Hello!")

An OpenEnv environment takes a typed action and answers a typed observation; an envgym env takes the
assistant's text and answers chat messages. The mapping:

- action: the assistant's text goes in the action field ``action_field`` (``"message"``, as in OpenEnv's echo
  template, TextArena and envgym's own OpenEnv endpoint); an assistant message with ``tool_calls`` also sends
  them as ``tool_calls``, which the server's action schema must have;
- observation: a ``messages`` list of chat messages (envgym's endpoint) is used as it is; otherwise the
  observation's only text field becomes one user message, and an observation with several fields is shown as
  JSON. ``observation_to_messages`` replaces this rule. The observation's fields (but ``messages`` and ``metadata``)
  are in ``info["observation"]``;
- reward: the observation's reward (``None`` counts as 0.0); ``info``: the observation's ``metadata``;
- ``done`` ends the episode as ``terminated`` (OpenEnv has no truncation), unless the observation says
  ``terminated`` / ``truncated`` itself (envgym's endpoint does).

Episodes play over the WebSocket (``/ws``) that OpenEnv's ``EnvClient`` speaks: OpenEnv's HTTP ``/reset`` and
``/step`` are stateless (a fresh env per call), so they cannot carry an episode. The server's ``/schema`` is
read over HTTP before the first episode, to check the action field exists. A server that fails or cannot be
reached raises :class:`OpenEnvError` (an env failure, never a reward of 0). ``import openenv`` takes a few
seconds (it loads gradio), so it happens on the first ``reset``, not at import or ``make``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from envgym.core import Action, Env, EnvGymError, InvalidAction, Message, StepResult, Task, action_text
from envgym.registration import register

ObservationToMessages = Callable[[dict[str, Any]], list[Message]]
_SIGNAL_FIELDS = ("done", "reward", "metadata")  # OpenEnv's Observation base fields, not content


class OpenEnvError(EnvGymError):
    """The OpenEnv server answered with an error, or could not be reached."""


def register_envs() -> None:
    """Entry point of the ``envgym.envs`` group: ``openenv/Remote-v0`` (needs ``base_url``)."""
    register(
        "openenv/Remote-v0",
        "envgym.integrations.openenv:OpenEnvEnv",
        description="Any OpenEnv server (give base_url), played through OpenEnv's own WebSocket client.",
    )


def observation_messages(observation: dict[str, Any]) -> list[Message]:
    """The default observation -> messages rule (see the module docstring)."""
    messages = observation.get("messages")
    if isinstance(messages, list) and all(isinstance(m, dict) and "role" in m for m in messages):
        return messages
    fields = {key: value for key, value in observation.items() if key not in _SIGNAL_FIELDS}
    texts = [value for value in fields.values() if isinstance(value, str)]
    content = texts[0] if len(texts) == 1 else json.dumps(fields, ensure_ascii=False, sort_keys=True, default=str)
    return [{"role": "user", "content": content}]


class OpenEnvEnv(Env):
    """The OpenEnv environment served at ``base_url`` (``http(s)://`` or ``ws(s)://``).

    action_field: the action field that carries the assistant's text.
    observation_to_messages: turns an observation dict into the new chat messages (default:
        :func:`observation_messages`).
    headers: extra HTTP headers for the connection, e.g. ``{"Authorization": "Bearer ..."}``.
    message_timeout_s: how long one reset or step may take on the server.

    ``reset(seed=s, options=o)`` sends the server a seed drawn from this env's RNG (seeded by ``s``) and, from
    ``o["reset_kwargs"]``, any further keyword arguments its reset takes (``{"task_index": 3}`` on envgym's
    endpoint). One env is one server session, opened on the first reset and closed by ``close()``.
    """

    description = "An OpenEnv server, played through OpenEnv's client."

    def __init__(
        self,
        base_url: str,
        *,
        action_field: str = "message",
        observation_to_messages: ObservationToMessages | None = None,
        headers: dict[str, str] | None = None,
        message_timeout_s: float = 60.0,
    ):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://", "ws://", "wss://")):
            raise ValueError(f"base_url must be the OpenEnv server's http(s):// or ws(s):// URL, got {base_url!r}")
        if message_timeout_s <= 0:
            raise ValueError(f"message_timeout_s must be > 0, got {message_timeout_s}")
        self.base_url = base_url.rstrip("/")
        self.action_field = action_field
        self.observation_to_messages = observation_to_messages or observation_messages
        self.headers = dict(headers or {})
        self.message_timeout_s = message_timeout_s
        self._client: Any = None
        self._action_fields: set[str] = set()

    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        # The server's seed comes from this env's RNG, so reset(seed=s) replays the same episodes.
        kwargs = {"seed": int(self.np_random.integers(2**31)), **(options.get("reset_kwargs") or {})}
        messages, _, _, _, info = self._observe(self._call("reset", **kwargs))
        return messages, info

    def _step(self, action: Action) -> StepResult:
        return self._observe(self._call("step", self._payload(action)))

    def close(self) -> None:
        """Close the server session (best effort: a server that is gone has nothing left to close)."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # closing is best effort
                pass
        super().close()

    # --- plumbing --------------------------------------------------------------------------------
    def _payload(self, action: Action) -> dict[str, Any]:
        payload: dict[str, Any] = {self.action_field: action_text(action)}
        if isinstance(action, dict) and action.get("tool_calls"):
            if "tool_calls" not in self._action_fields:
                raise InvalidAction(
                    f"the OpenEnv server at {self.base_url} takes no tool calls (its action fields "
                    f"are {sorted(self._action_fields)}); answer with text"
                )
            payload["tool_calls"] = action["tool_calls"]
        return payload

    def _observe(self, result: Any) -> StepResult:
        observation = dict(result.observation or {})
        reward = 0.0 if result.reward is None else float(result.reward)
        terminated = bool(observation.get("terminated", result.done))
        truncated = bool(observation.get("truncated", False))
        info = dict(result.metadata or observation.get("metadata") or {})
        info["observation"] = {key: value for key, value in observation.items() if key not in ("metadata", "messages")}
        return self.observation_to_messages(observation), reward, terminated, truncated, info

    def _call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        if self._client is None:
            self._client = self._connect()
        try:
            return getattr(self._client, op)(*args, **kwargs)
        except Exception as error:  # RuntimeError "Server error: ...", ConnectionError, timeouts
            raise OpenEnvError(
                f"OpenEnv server {self.base_url} failed on {op}: {type(error).__name__}: {error}"
            ) from error

    def _connect(self) -> Any:
        """Check the server's action schema, then open OpenEnv's client (its WebSocket session)."""
        import httpx

        http_url = self.base_url.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        try:
            response = httpx.get(f"{http_url}/schema", headers=self.headers, timeout=self.message_timeout_s)
            response.raise_for_status()
            action_schema = response.json()["action"]
        except Exception as error:
            raise OpenEnvError(
                f"could not read the action schema of the OpenEnv server at {http_url}/schema: "
                f"{type(error).__name__}: {error}. Is it running, and is this its base URL?"
            ) from error
        self._action_fields = set(action_schema.get("properties", {}))
        missing = set(action_schema.get("required", [])) - {self.action_field}
        if self.action_field not in self._action_fields or missing:
            raise OpenEnvError(
                f"the OpenEnv server at {self.base_url} takes actions with fields {sorted(self._action_fields)} "
                f"(required: {sorted(action_schema.get('required', []))}); OpenEnvEnv fills one text field, "
                f"action_field={self.action_field!r}. Pass the right action_field, or subclass and override _payload."
            )
        try:
            from openenv.core import GenericEnvClient
        except ImportError as error:
            raise ImportError("OpenEnvEnv needs the openenv package: pip install 'envgym[integrations]'") from error
        client = GenericEnvClient(
            base_url=self.base_url, message_timeout_s=self.message_timeout_s, headers=self.headers or None
        ).sync()
        try:
            client.connect()
        except Exception as error:
            raise OpenEnvError(f"could not open a session on the OpenEnv server at {self.base_url}: {error}") from error
        return client

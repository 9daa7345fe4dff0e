"""OpenEnv's wire protocol (openenv 0.10) spoken by the env server: schemas and response encoding.

OpenEnv environments exchange typed pydantic objects: an ``Action`` in, an ``Observation`` out (its ``done``,
``reward`` and ``metadata`` fields travel beside the others), and a ``State``. An envgym env is a chat, so the
mapping is:

=====================  ====================================================================================
OpenEnv                envgym
=====================  ====================================================================================
``ChatAction``         ``{"message": text}`` is the assistant's text; with ``tool_calls`` (OpenAI format) it is
                       the assistant message ``{"role": "assistant", "content": message, "tool_calls": ...}``
``ChatObservation``    ``messages``: the new chat messages; ``terminated`` / ``truncated`` as envgym has them;
                       ``done`` = terminated or truncated; ``reward``: the turn's reward (``None`` at reset);
                       ``metadata``: the whole ``info`` dict (``reward_components``, ``tools``, ``error``...)
``EpisodeState``       ``episode_id``, ``step_count`` and the ``env_id`` the endpoint serves
reset kwargs           ``seed``, ``episode_id`` (a label), ``task_index``, ``options`` (envgym reset options)
=====================  ====================================================================================

The models are plain pydantic, shaped like OpenEnv's base classes (``extra="forbid"``, a ``metadata`` field),
so the server speaks OpenEnv without importing the ``openenv`` package. The encoders run where the env ran
(a worker process), like the envgym protocol's, and produce the ``data`` of OpenEnv's observation messages.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envgym.server.protocol import encode

OPENENV_API_VERSION = "1.0.0"
"""The OpenEnv HTTP API version answered in ``/openapi.json`` (``openenv validate`` reads it)."""

RESET_KWARGS = ("seed", "episode_id", "task_index", "options")


class ChatAction(BaseModel):
    """One assistant turn."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="The assistant's turn as text, e.g. '<guess>50</guess>'.")
    tool_calls: list[dict[str, Any]] | None = Field(
        None, description="OpenAI-format tool calls made in this turn (function-calling envs)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Not read by the env; kept for tracing.")

    def to_envgym(self) -> str | dict[str, Any]:
        """The envgym action: the text, or an assistant message when the turn carries tool calls."""
        if self.tool_calls is None:
            return self.message
        return {"role": "assistant", "content": self.message, "tool_calls": self.tool_calls}


class ChatObservation(BaseModel):
    """What the env answered: the new chat messages and how the episode stands."""

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]] = Field(description="New OpenAI-format chat messages to append to the history.")
    terminated: bool = Field(False, description="The task ended inside the MDP (answered, solved, failed).")
    truncated: bool = Field(False, description="A limit outside the MDP cut the episode (max turns).")
    done: bool = Field(False, description="terminated or truncated.")
    reward: float | None = Field(None, description="This turn's reward (None after reset).")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="The env's info dict: reward_components, correct, tools, error..."
    )


class EpisodeState(BaseModel):
    """Where the session's episode stands."""

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = Field(None, description="The label given at reset (or a generated one).")
    step_count: int = Field(0, ge=0, description="Steps played in this episode.")
    env_id: str = Field(description="The envgym env this endpoint serves.")


class ResetKwargs(BaseModel):
    """The reset parameters an envgym endpoint accepts (HTTP body or WebSocket ``data``)."""

    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(None, ge=0, description="Seed of the episode.")
    episode_id: str | None = Field(None, max_length=255, description="A label for the episode (tracing only).")
    task_index: int | None = Field(None, ge=0, description="Play task i of the env's task source (GRPO groups).")
    options: dict[str, Any] | None = Field(None, description="envgym reset options, e.g. {'task': {...}}.")

    def envgym_options(self) -> dict[str, Any] | None:
        if self.task_index is None:
            return self.options
        return {**(self.options or {}), "task_index": self.task_index}


class StepBody(BaseModel):
    """``POST /step`` (OpenEnv's ``StepRequest`` with the action typed)."""

    model_config = ConfigDict(extra="forbid")

    action: ChatAction
    timeout_s: float | None = Field(None, gt=0, description="Accepted for OpenEnv compatibility; not used.")
    request_id: str | None = Field(None, max_length=255, description="Accepted for OpenEnv compatibility; not used.")


class ObservationResponse(BaseModel):
    """OpenEnv's serialized observation: the answer of ``/reset``, and the ``data`` of WebSocket observations."""

    observation: ChatObservation
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = Field(None, description="The info dict again (OpenEnv sends it in both places).")


def schemas() -> dict[str, Any]:
    """``GET /schema``: the JSON schemas of the action, the observation and the state."""
    return {
        "action": ChatAction.model_json_schema(),
        "observation": ChatObservation.model_json_schema(),
        "state": EpisodeState.model_json_schema(),
    }


def encode_observation(
    messages: list[dict[str, Any]], reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
) -> bytes:
    """OpenEnv's serialized observation (``serialize_observation``): the observation's own fields under
    ``observation``, with ``reward`` and ``done`` beside it, and ``metadata`` both inside and beside it."""
    done = bool(terminated or truncated)
    observation = {"messages": messages, "terminated": terminated, "truncated": truncated, "metadata": info}
    body: dict[str, Any] = {"observation": observation, "reward": reward, "done": done}
    if info:
        body["metadata"] = info
    return encode(body)


def encode_openenv_reset(result: tuple) -> bytes:
    messages, info = result
    return encode_observation(messages, None, False, False, info)


def encode_openenv_step(result: tuple) -> bytes:
    return encode_observation(*result)

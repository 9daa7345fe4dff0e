"""An envgym tool env as a TRL ``environment_factory`` environment: its tools become the object's methods.

TRL (>= 1.16) makes one environment object per rollout slot, calls ``reset(**row)`` with the dataset row, turns
every public method except ``reset``/``get_reward`` into a tool (the schema comes from the method's signature and
Google-style docstring, through ``transformers.utils.get_json_schema``), and calls a method whenever the model
calls that tool, showing the model what it returns.

Here each tool call is one ``env.step`` with an OpenAI-format assistant message holding that one call, so the
env's own rules apply unchanged: argument validation, per-episode call budgets, result truncation, ``tool_cost``
rewards, turn limits. TRL ends the episode on a turn without tool calls and never shows that final turn to the
environment; :func:`envgym.integrations.trl.envgym_environment_reward` hands it over (``_finish``) so the env's
verifier grades it. That is why these classes define no ``get_reward``: it takes no arguments, so it could not
see the final answer.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from typing import Any, ClassVar

import envgym
from envgym.core import Action, Message, Wrapper
from envgym.tools import Tool, ToolEnv

_JSON_TO_PYTHON: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
_RESERVED = ("reset", "get_reward")
MIN_TRL_VERSION = "1.16"
"""The first TRL whose ``GRPOTrainer`` has both hooks as used here (``env_mask``, ``environments`` in rewards)."""


class EnvgymToolEnvironment:
    """Base of the classes :func:`envgym_environment_factory` builds (one subclass per env, its tools as methods).

    TRL exposes every public function of the class as a tool, so everything here besides ``reset`` is private
    or a property. ``episode`` is the :class:`envgym.Episode` played since the last ``reset``: its turns, rewards
    and ``error``.
    """

    env_id: ClassVar[str]
    env_kwargs: ClassVar[dict[str, Any]]

    def __init__(self) -> None:
        self._env = envgym.make(self.env_id, **self.env_kwargs)
        self._episode: envgym.Episode | None = None

    @property
    def episode(self) -> envgym.Episode:
        if self._episode is None:
            raise RuntimeError("no episode yet: TRL calls reset(**row) before the first tool call")
        return self._episode

    def reset(self, *, task_index: int | None = None, prompt: list[Message] | None = None, **row: Any) -> None:
        """Start the episode of the row's task (``task_index``, from :func:`envgym_dataset`).

        The env is seeded with the task index, so the G rollouts of a GRPO group start from the same state.
        Returns ``None``: the row's prompt already is the env's first messages (checked here).
        """
        if task_index is None:
            columns = sorted([*row, *(["prompt"] if prompt is not None else [])])
            raise ValueError(
                f"the dataset row has no 'task_index' (its columns: {columns}); build "
                "train_dataset with envgym_dataset(env_id, n) so each row names its envgym task"
            )
        index = int(task_index)
        messages, info = self._env.reset(seed=index, options={"task_index": index})
        if prompt is not None:
            check_prompt(prompt, messages, self.env_id, index)
        self._episode = envgym.Episode(
            env_id=self.env_id,
            task_id=info.get("task_id"),
            prompt=messages,
            seed=index,
            reset_info={k: v for k, v in info.items() if k != "tools"},
        )
        return None

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Play one tool call as one env step; the text of the env's answer is what the model reads."""
        episode = self.episode
        if episode.failed:
            return f"Not run: the environment failed ({episode.error}); this episode is discarded."
        if episode.done:
            return "Not run: the episode has ended; give your final answer."
        call = {
            "id": f"call_{episode.num_turns}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }
        messages = self._step({"role": "assistant", "content": "", "tool_calls": [call]})
        return "\n".join(str(message.get("content") or "") for message in messages)

    def _finish(self, completion: list[Message]) -> float | None:
        """Play TRL's final assistant turn (unless the episode already ended); the episode's return, or ``None``
        when it failed. A final message that still holds tool calls was cut by TRL's iteration limit: it is
        not played, and the episode counts as truncated with the rewards it earned."""
        episode = self.episode
        final = completion[-1] if completion else None
        if (
            not episode.done
            and not episode.failed
            and isinstance(final, dict)
            and final.get("role") == "assistant"
            and not final.get("tool_calls")
        ):
            self._step(str(final.get("content") or ""))
        return None if episode.failed else episode.total_reward

    def _step(self, action: Action) -> list[Message]:
        episode = self.episode
        try:
            messages, reward, terminated, truncated, info = self._env.step(action)
        except Exception as error:  # the env, its verifier or a sandbox broke: a failed episode, never a reward
            episode.error = f"{type(error).__name__}: {error}"
            return [{"role": "tool", "content": f"Not run: the environment failed ({episode.error})."}]
        episode.add_turn(action, messages, reward, terminated, truncated, info)
        if "error" in info:
            episode.error = str(info["error"])
        return messages


def require_trl() -> None:
    """Fail early, with the fix, when TRL is missing or older than :data:`MIN_TRL_VERSION`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("trl")
    except PackageNotFoundError:
        raise ImportError(
            f"envgym.integrations.trl needs TRL >= {MIN_TRL_VERSION}: pip install 'trl>={MIN_TRL_VERSION}'"
        ) from None
    from packaging.version import Version  # a dependency of TRL itself

    if Version(installed) < Version(MIN_TRL_VERSION):
        raise ImportError(
            f"envgym.integrations.trl needs TRL >= {MIN_TRL_VERSION} (its GRPOTrainer's rollout_func "
            f"env_mask and environment_factory); TRL {installed} is installed: "
            f"pip install -U 'trl>={MIN_TRL_VERSION}'"
        )


def check_prompt(row_prompt: Any, env_messages: list[Message], env_id: str, index: int) -> None:
    """Refuse a row whose prompt is not the env's prompt for its task (a dataset built with other env kwargs)."""

    def key(messages: Any) -> list[tuple[Any, Any]]:
        return [(m.get("role"), m.get("content")) for m in messages or []]

    if key(row_prompt) != key(env_messages):
        raise ValueError(
            f"the dataset row for task {index} holds a different prompt than {env_id} gives for that task "
            f"(row: {key(row_prompt)!r:.300}; env: {key(env_messages)!r:.300}); build the dataset with "
            "envgym_dataset and the same env id and env kwargs"
        )


def envgym_environment_factory(env_id: str, **env_kwargs: Any) -> type[EnvgymToolEnvironment]:
    """A class to pass as ``GRPOTrainer(environment_factory=...)``: calling it makes one environment object.

    ``env_id`` must be a tool env (a :class:`~envgym.tools.ToolEnv`, possibly under wrappers). Make it with
    ``prompt_format=None`` when its tools would otherwise also be described in the system prompt: TRL passes
    the methods' schemas to the chat template. Build the dataset with :func:`envgym_dataset` and the same
    ``env_kwargs``.
    """
    require_trl()
    probe = envgym.make(env_id, **env_kwargs)
    try:
        tools = list(_tool_env(probe, env_id).tools.values())
    finally:
        probe.close()
    namespace: dict[str, Any] = {
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs),
        "__module__": __name__,
        "__doc__": f"{env_id} for TRL's environment_factory; tools: {', '.join(tool.name for tool in tools)}.",
    }
    for tool in tools:
        namespace[tool.name] = tool_method(tool)
    name = re.sub(r"\W", "", env_id.split("/")[-1].split("-v")[0]) or "Envgym"
    return type(f"{name[0].upper()}{name[1:]}Environment", (EnvgymToolEnvironment,), namespace)


def tool_method(tool: Tool) -> Any:
    """A method whose signature, type hints and Google-style docstring make ``get_json_schema`` give back the
    tool's name, description, parameter types, enums and required list. Other JSON-schema constraints
    (bounds, patterns) are not expressible that way; the env still enforces them and says so to the model."""
    if tool.name.startswith("_") or tool.name in _RESERVED:
        raise ValueError(
            f"tool {tool.name!r} cannot be a TRL environment method: TRL hides names starting with '_' "
            f"and reserves {', '.join(_RESERVED)}"
        )
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = []
    for name in sorted(properties, key=lambda key: key not in required):  # required first, as Python wants
        if not name.isidentifier():
            raise ValueError(
                f"tool {tool.name!r}: parameter {name!r} is not a Python identifier, so it cannot be a method argument"
            )
        spec = properties[name]
        hint = _python_type(tool.name, name, spec)
        default = inspect.Parameter.empty if name in required else None
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        annotations[name] = hint
        description = " ".join(str(spec.get("description") or name).split())
        lines.append(f"    {name}: {description}")
    docstring = (tool.description or tool.name) + ("\n\nArgs:\n" + "\n".join(lines) if lines else "")

    def method(self: EnvgymToolEnvironment, **arguments: Any) -> str:
        return self._call_tool(tool.name, arguments)

    method.__name__ = method.__qualname__ = tool.name
    method.__doc__ = docstring
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = {**annotations, "return": str}
    return method


def _python_type(tool: str, name: str, spec: dict[str, Any]) -> Any:
    """The type hint that ``get_json_schema`` turns back into ``spec``'s type (and enum)."""
    if "enum" in spec:
        return typing.Literal[tuple(spec["enum"])]
    kind = spec.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    unknown = [k for k in kinds if k not in _JSON_TO_PYTHON and k != "null"]
    if not kinds or unknown:
        raise ValueError(
            f"tool {tool!r}: parameter {name!r} has JSON type {kind!r}; a TRL environment method needs "
            f"one of {', '.join(_JSON_TO_PYTHON)} (or a list of them, with 'null')"
        )
    types = [_array_type(spec) if k == "array" else _JSON_TO_PYTHON[k] for k in kinds if k != "null"]
    if "null" in kinds:
        types.append(type(None))
    return types[0] if len(types) == 1 else typing.Union[tuple(types)]  # noqa: UP007 -- built from a runtime list


def _array_type(spec: dict[str, Any]) -> Any:
    item = (spec.get("items") or {}).get("type")
    return list[_JSON_TO_PYTHON[item]] if isinstance(item, str) and item in _JSON_TO_PYTHON else list


def _tool_env(env: Any, env_id: str) -> ToolEnv:
    """The ToolEnv under ``env``'s wrappers."""
    current = env
    while not isinstance(current, ToolEnv):
        if not isinstance(current, Wrapper):
            raise TypeError(
                f"{env_id} is not a tool env (no ToolEnv under its wrappers), so it has no tools to expose "
                "as methods; train it with envgym_rollout_func instead"
            )
        current = current.env
    return current

"""Any envgym env as an Inspect AI ``Task``: ``inspect eval envgym/math/Arithmetic-v0 --model ...``.

Inspect (``pip install 'envgym[inspect]'``) evaluates any of its model providers on a task made of a dataset, a
solver and a scorer. Here:

- dataset: one ``Sample`` per task index (``start .. start+n_tasks-1``); its input is the env's first messages for that
  task, its metadata the env id, task index, task id and the task's own metadata, its target the task's answer
  where that is a plain value (the model never sees the target);
- solver (:func:`envgym_play`): resets a fresh env on the sample's task and plays the whole episode through
  Inspect's model API: each turn ``generate``s with the env's tools offered through Inspect's tool calling
  (the OpenAI schemas a tool env puts in ``info["tools"]``; Inspect never runs them, the env does) or as plain
  text, hands the assistant message to ``env.step`` and appends the env's answer, until the episode ends;
- scorer (:func:`envgym_reward`): the episode's reward (the sum of its per-turn rewards), with the summed
  reward components, per-turn rewards, ``correct`` and how it ended in the score's metadata.

A failure of the env (``info["error"]``, an exception out of ``reset``/``step``) raises
:class:`EnvgymEpisodeError` in the solver, so Inspect records the sample as an error, never a score of 0.

Every registered env is an Inspect task named ``envgym/<env id>`` (loaded through the ``inspect_ai`` entry point
in pyproject.toml), and ``envgym/env`` takes the id as a task argument; both take ``-T n_tasks=``, ``-T start=``,
``-T max_turns=`` and any :func:`envgym.make` keyword. In Python: ``inspect_ai.eval(envgym_task(env_id), model=...)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

import envgym
from envgym.core import Action, Env, Message
from envgym.episode import to_jsonable

NAMESPACE = "envgym"  # Inspect's registry namespace for this package's tasks (the entry point's name)
EPISODE_KEY = "envgym_episode"  # where the solver leaves the episode's outcome in the sample's store
TURN_CAP = 100  # a bound on turns when the env sets none, so a never-ending env cannot hang an eval


class EnvgymEpisodeError(RuntimeError):
    """The env, its verifier or its sandbox failed during an episode: not the model's doing."""


def envgym_task(
    env_id: str, n_tasks: int = 20, start: int = 0, max_turns: int | None = None, **env_kwargs: Any
) -> Task:
    """An Inspect task that plays ``env_id`` on tasks ``start .. start+n_tasks-1``, scored by the env's reward.

    max_turns: the env's turn limit (:func:`envgym.make`'s ``max_turns``, a ``TimeLimit``; default: the registry's).
    env_kwargs: more :func:`envgym.make` keywords (``allow_unsafe=True`` for envs that run code)."""
    if n_tasks < 1 or start < 0:
        raise ValueError(f"an envgym task needs n_tasks >= 1 and start >= 0 (got n_tasks={n_tasks}, start={start})")
    if max_turns is not None:
        env_kwargs["max_turns"] = int(max_turns)
    return Task(
        dataset=envgym_dataset(env_id, range(start, start + n_tasks), **env_kwargs),
        solver=envgym_play(env_id, **env_kwargs),
        scorer=envgym_reward(),
        name=f"{NAMESPACE}/{env_id}",
        metadata={"env_id": env_id, "env_kwargs": to_jsonable(env_kwargs)},
    )


def envgym_dataset(env_id: str, indices: range | list[int], **env_kwargs: Any) -> MemoryDataset:
    """One ``Sample`` per task index: the env's first messages, its answer as the target, where it came from."""
    env = envgym.make(env_id, **env_kwargs)
    try:
        source = env.unwrapped.tasks
        if source is not None and max(indices) >= len(source):
            raise ValueError(
                f"task indices up to {max(indices)} were asked for, but {env_id} has {len(source)} "
                f"tasks; lower -T n_tasks= or -T start="
            )
        samples = []
        for index in indices:
            messages, info = reset_on(env, index)
            current = env.unwrapped.task
            samples.append(
                Sample(
                    id=index,
                    input=inspect_messages(messages),
                    target=_target(current),
                    metadata={
                        "env_id": env_id,
                        "task_index": index,
                        "task_id": info.get("task_id"),
                        "task_metadata": to_jsonable(current.metadata) if current is not None else {},
                    },
                )
            )
    finally:
        env.close()
    return MemoryDataset(samples, name=env_id)


def reset_on(env: Env, index: int) -> tuple[list[Message], dict[str, Any]]:
    """Reset on task ``index`` (seeded by it, as envgym's TRL dataset does); an env without a task source draws
    its task from the seed alone."""
    if env.unwrapped.tasks is None:
        return env.reset(seed=index)
    return env.reset(seed=index, options={"task_index": index})


@solver
def envgym_play(env_id: str, **env_kwargs: Any) -> Solver:
    """Play the sample's task as one envgym episode through the active Inspect model (see the module docstring);
    the outcome goes to the sample's store under :data:`EPISODE_KEY` for :func:`envgym_reward`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        index = int(state.metadata["task_index"])
        env = await _call_env(lambda: envgym.make(env_id, **env_kwargs), "make")
        try:
            messages, info = await _call_env(lambda: reset_on(env, index), "reset")
            tools = [tool_info(schema) for schema in info.get("tools") or []]
            state.messages = inspect_messages(messages)
            turns: list[dict[str, Any]] = []
            ended_by = "max_turns"
            model = get_model()
            while len(turns) < TURN_CAP:
                output = await model.generate(state.messages, tools=tools)
                state.output = output
                state.messages.append(output.message)
                action = envgym_action(output.message)
                observation, reward, terminated, truncated, info = await _call_env(
                    lambda action=action: env.step(action), "step"
                )
                if info.get("error"):
                    raise EnvgymEpisodeError(
                        f"{env_id} task {index}: the env failed at turn {len(turns) + 1}: {info['error']}"
                    )
                turns.append(
                    {
                        "reward": reward,
                        "reward_components": info.get("reward_components") or {},
                        "correct": info.get("correct"),
                        "action_valid": info.get("action_valid", True),
                    }
                )
                state.messages.extend(inspect_messages(observation))
                if terminated or truncated:
                    ended_by = "terminated" if terminated else "truncated"
                    break
            state.store.set(EPISODE_KEY, to_jsonable({"turns": turns, "ended_by": ended_by}))
        finally:
            env.close()
        return state

    return solve


async def _call_env(call: Callable[[], Any], what: str) -> Any:
    """Run a blocking env call off Inspect's event loop; its exceptions become :class:`EnvgymEpisodeError`."""
    try:
        return await anyio.to_thread.run_sync(call)
    except Exception as error:
        raise EnvgymEpisodeError(f"env {what} failed: {type(error).__name__}: {error}") from error


@scorer(metrics=[mean(), stderr()])
def envgym_reward() -> Callable[[TaskState, Target], Any]:
    """The episode's reward, with its components, per-turn rewards, ``correct`` and end in the metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        episode = state.store.get(EPISODE_KEY)
        if episode is None:
            raise EnvgymEpisodeError(
                "no envgym episode in this sample's store: the envgym_reward scorer needs the envgym_play solver"
            )
        return Score(
            value=sum(t["reward"] for t in episode["turns"]),
            answer=state.output.completion,
            metadata=episode_summary(episode["turns"], episode["ended_by"]),
        )

    return score


def episode_summary(turns: list[dict[str, Any]], ended_by: str) -> dict[str, Any]:
    """A score's metadata: summed components, per-turn rewards, the last ``correct`` flag, turns, the end."""
    components: dict[str, float] = {}
    for turn in turns:
        for name, value in (turn.get("reward_components") or {}).items():
            components[name] = components.get(name, 0.0) + float(value)
    flags = [t["correct"] for t in turns if t.get("correct") is not None]
    return {
        "reward_components": components,
        "turn_rewards": [t["reward"] for t in turns],
        "correct": bool(flags[-1]) if flags else None,
        "turns": len(turns),
        "ended_by": ended_by,
    }


def inspect_messages(messages: list[Message]) -> list[ChatMessage]:
    """envgym's OpenAI-form chat messages as Inspect's (assistant tool calls and tool results included)."""
    out: list[ChatMessage] = []
    for message in messages:
        role, content = message.get("role"), _text(message.get("content"))
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "assistant":
            calls = [inspect_tool_call(call, i) for i, call in enumerate(message.get("tool_calls") or [])]
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            out.append(
                ChatMessageTool(content=content, tool_call_id=message.get("tool_call_id"), function=message.get("name"))
            )
        else:  # user, and any role Inspect has no type for, is what the env says to the model
            out.append(ChatMessageUser(content=content))
    return out


def inspect_tool_call(call: dict[str, Any], index: int) -> ToolCall:
    """An OpenAI ``tool_calls`` entry as Inspect's ``ToolCall`` (arguments as a dict, a bad JSON string kept
    as ``parse_error``)."""
    function = call.get("function", call)
    arguments, problem = function.get("arguments") or {}, None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as error:
            arguments, problem = {}, f"arguments are not JSON: {error}"
    if not isinstance(arguments, dict):
        arguments, problem = {}, f"arguments must be an object, got {type(arguments).__name__}"
    return ToolCall(
        id=str(call.get("id") or f"call_{index}"),
        function=str(function.get("name")),
        arguments=arguments,
        parse_error=problem,
    )


def envgym_action(message: ChatMessageAssistant) -> Action:
    """The model's turn as an envgym action: its text, or an assistant message with OpenAI ``tool_calls``."""
    if not message.tool_calls:
        return message.text
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.function, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
        }
        for call in message.tool_calls
    ]
    return {"role": "assistant", "content": message.text, "tool_calls": calls}


def tool_info(schema: dict[str, Any]) -> ToolInfo:
    """An OpenAI ``tools`` entry (``{"type": "function", "function": {...}}``) as Inspect's ``ToolInfo``: offered
    to the model, never run by Inspect."""
    function = schema.get("function", schema)
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return ToolInfo(
        name=function["name"],
        description=function.get("description") or function["name"],
        parameters=ToolParams.model_validate(parameters),
    )


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(to_jsonable(content), ensure_ascii=False)


def _target(current: Any) -> str:
    """The task's answer when it is a plain value; answers such as test suites or goal states stay out."""
    answer = getattr(current, "answer", None)
    return str(answer) if isinstance(answer, (str, int, float)) and not isinstance(answer, bool) else ""


def any_env(env_id: str, n_tasks: int = 20, start: int = 0, max_turns: int | None = None, **env_kwargs: Any) -> Task:
    """``inspect eval envgym/env -T env_id=math/Arithmetic-v0``: any env id as a task argument."""
    return envgym_task(env_id, n_tasks=n_tasks, start=start, max_turns=max_turns, **env_kwargs)


def _env_task_factory(env_id: str) -> Callable[..., Task]:
    def factory(n_tasks: int = 20, start: int = 0, max_turns: int | None = None, **env_kwargs: Any) -> Task:
        return envgym_task(env_id, n_tasks=n_tasks, start=start, max_turns=max_turns, **env_kwargs)

    factory.__doc__ = f"The envgym env {env_id} as an Inspect task."
    return factory


def register_tasks() -> None:
    """Register ``envgym/env`` and ``envgym/<id>`` for every registered env (run when Inspect loads this
    module through its entry point)."""
    _register("env", any_env)
    for spec in envgym.list_envs():
        _register(spec.id, _env_task_factory(spec.id))


def _register(name: str, factory: Callable[..., Task]) -> None:
    from inspect_ai._util.package import get_installed_package_name  # no public API says how Inspect names

    # Inspect prefixes the package's name itself when envgym sits in site-packages; with an editable install
    # it does not, so the name carries the namespace (the entry point's name) here.
    prefixed = get_installed_package_name(factory) == NAMESPACE
    task(name=name if prefixed else f"{NAMESPACE}/{name}")(factory)


register_tasks()

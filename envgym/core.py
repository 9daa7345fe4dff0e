"""The multi-turn text environment contract: Env, Wrapper, Task, TaskSource and their spaces.

An episode is a conversation. ``reset`` returns the first messages of it (system/user prompt); each
``step`` takes the assistant's turn and returns the *new* messages to append (env feedback, tool results),
a reward for that turn, and whether the episode ended:

- ``terminated``: the task ended inside the MDP (answered, solved, failed for good). Bootstrapping stops.
- ``truncated``: a limit outside the MDP cut it short (max turns, token budget, an infrastructure error).
  The task could have gone on, so a learner must not treat the last state as terminal.

Subclasses implement ``_reset(task, options)`` and ``_step(action)``; the public ``reset``/``step`` here
own what every env needs the same way: seeding, task choice (for GRPO groups), validation of actions and
options, and refusing to step an episode that has not started or has ended.
"""

from __future__ import annotations

import asyncio
import dataclasses
import string
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, SupportsFloat, runtime_checkable

import gymnasium
import numpy as np

Message = dict[str, Any]
"""An OpenAI-format chat message: ``{"role": "system"|"user"|"assistant"|"tool", "content": str, ...}``."""

Action = str | Message
"""The assistant's turn: plain text, or an assistant message dict (with ``tool_calls`` for function calling)."""

StepResult = tuple[list[Message], float, bool, bool, dict[str, Any]]

ROLES = ("system", "user", "assistant", "tool")
DEFAULT_MAX_ACTION_CHARS = 100_000


class EnvGymError(Exception):
    """Base class of envgym's own errors."""


class ResetNeeded(EnvGymError, RuntimeError):
    """``step`` was called before ``reset`` or after the episode ended."""


class InvalidAction(EnvGymError, TypeError):
    """The action is neither assistant text nor an assistant message dict."""


class InvalidOptions(EnvGymError, ValueError):
    """``reset(options=...)`` got something it cannot use."""


@dataclasses.dataclass
class Task:
    """One problem instance: the prompt the agent sees and the hidden data its verifier needs.

    ``answer`` is whatever the env's verifier checks against (a number, test cases, a goal state);
    it never reaches the agent. ``metadata`` carries difficulty, source and similar labels.
    """

    id: str
    messages: list[Message]
    answer: Any = None
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)

    def prompt(self) -> list[Message]:
        """A fresh copy of the initial messages (callers may mutate what they get)."""
        return [dict(message) for message in self.messages]


@dataclasses.dataclass(frozen=True)
class RewardRange:
    """What one reward component an env reports can be worth, and when it means something.

    ``low``/``high``: the least and most the component takes (a forfeit's -1, a penalty's 0); reward noise flips
    within them and an answer the policy never gave scores ``low``. ``per_turn``: the value means something on
    every turn (a cost per tool call, a step's payoff); otherwise it grades the answer and a reward spec scores it
    once per episode, on the answering turn, so padding turns cannot add it up.
    """

    low: float = 0.0
    high: float = 1.0
    per_turn: bool = False

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"a reward range needs low <= high, got [{self.low}, {self.high}]")


@runtime_checkable
class TaskSource(Protocol):
    """Where an env draws tasks from: a procedural generator, a file, a dataset.

    ``get(i)`` must be deterministic, so that G envs reset with ``options={"task_index": i}`` play the same
    task (GRPO groups). Procedural sources derive task ``i`` from the seed ``i``.
    """

    def __len__(self) -> int: ...

    def get(self, index: int) -> Task: ...

    def sample(self, rng: np.random.Generator) -> Task: ...


class Messages(gymnasium.spaces.Space):
    """Observation space: a list of chat messages (dicts with a known ``role`` and ``content``)."""

    def __init__(self, max_messages: int = 64, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.max_messages = max_messages

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> list[Message]:
        n = int(self.np_random.integers(1, 3))
        return [{"role": "user", "content": _random_text(self.np_random, 40)} for _ in range(n)]

    def contains(self, x: Any) -> bool:
        return isinstance(x, list) and len(x) <= self.max_messages and all(_is_message(m) for m in x)

    def __repr__(self) -> str:
        return f"Messages(max_messages={self.max_messages})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Messages) and other.max_messages == self.max_messages


class AssistantAction(gymnasium.spaces.Space):
    """Action space: assistant text up to ``max_chars`` characters, or an assistant message dict."""

    def __init__(self, max_chars: int = DEFAULT_MAX_ACTION_CHARS, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.max_chars = max_chars

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return _random_text(self.np_random, 64)

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return len(x) <= self.max_chars
        return _is_message(x) and x.get("role", "assistant") == "assistant"

    def __repr__(self) -> str:
        return f"AssistantAction(max_chars={self.max_chars})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AssistantAction) and other.max_chars == self.max_chars


def _random_text(rng: np.random.Generator, max_len: int) -> str:
    alphabet = np.array(list(string.ascii_letters + string.digits + " <>/.,!?"))
    return "".join(rng.choice(alphabet, size=int(rng.integers(1, max_len + 1))))


def _is_message(x: Any) -> bool:
    return (
        isinstance(x, dict)
        and x.get("role", "assistant") in ROLES
        and (x.get("content") is None or isinstance(x.get("content"), (str, list)))
    )


def action_text(action: Action) -> str:
    """The text of an action, whether it came as a string or an assistant message dict."""
    if isinstance(action, str):
        return action
    content = action.get("content") or ""
    if isinstance(content, list):  # OpenAI content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def validate_action(action: Any, max_chars: int) -> tuple[Action, bool]:
    """Check an action's type and bound its size.

    Returns the action (cut to ``max_chars`` characters if longer) and whether it was cut. Raises
    :class:`InvalidAction` for anything that is not assistant text or an assistant message dict.
    """
    if isinstance(action, str):
        if len(action) > max_chars:
            return action[:max_chars], True
        return action, False
    if isinstance(action, Mapping):
        role = action.get("role", "assistant")
        if role != "assistant":
            raise InvalidAction(f"an action message must have role 'assistant', got role {role!r}")
        content = action.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise InvalidAction(
                f"an action message's 'content' must be a string, a list of content parts or None, "
                f"got {type(content).__name__}"
            )
        if isinstance(content, list):
            for part in content:
                if not isinstance(part, Mapping) or not isinstance(part.get("text", ""), str):
                    raise InvalidAction(
                        "an action message's content parts must be dicts whose 'text' is a string "
                        f"(e.g. {{'type': 'text', 'text': '...'}}), got {part!r:.80}"
                    )
        tool_calls = action.get("tool_calls")
        if tool_calls is not None and not isinstance(tool_calls, list):
            raise InvalidAction(f"'tool_calls' must be a list, got {type(tool_calls).__name__}")
        message = dict(action)
        message["role"] = "assistant"
        if isinstance(content, str) and len(content) > max_chars:
            message["content"] = content[:max_chars]
            return message, True
        return message, False
    raise InvalidAction(
        f"an action must be the assistant's text (str) or an assistant message dict "
        f"({{'role': 'assistant', 'content': ...}}), got {type(action).__name__}"
    )


def validate_options(options: Any) -> dict[str, Any]:
    """Check ``reset`` options. Known keys: ``task_index`` (int) and ``task`` (a :class:`Task`)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InvalidOptions(f"reset options must be a dict or None, got {type(options).__name__}")
    if "task_index" in options:
        index = options["task_index"]
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise InvalidOptions(f"options['task_index'] must be an int, got {type(index).__name__}")
        if index < 0:
            raise InvalidOptions(f"options['task_index'] must be >= 0, got {index}")
    if "task" in options and not isinstance(options["task"], Task):
        raise InvalidOptions(f"options['task'] must be an envgym.Task, got {type(options['task']).__name__}")
    return dict(options)


class AsyncAPI:
    """``areset``/``astep`` for envs and wrappers: the default runs the sync call in a worker thread so the
    event loop never blocks; envs with real I/O (remote envs, judges) override them with native async."""

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        return await asyncio.to_thread(self.reset, seed=seed, options=options)

    async def astep(self, action: Action) -> StepResult:
        return await asyncio.to_thread(self.step, action)


class Env(AsyncAPI, gymnasium.Env[list[Message], Action]):
    """A multi-turn text environment (see the module docstring for the contract).

    Set by subclasses:
        tasks: the :class:`TaskSource` that ``reset`` draws from. Envs without tasks leave it ``None`` and
            ``_reset`` receives ``None``.
        description: one line shown by ``envgym list``.
        reward_ranges: every component the env reports in ``info["reward_components"]``, with its
            :class:`RewardRange`; a reward spec checks the names it reads against it when built. Empty: not
            declared (a spec then treats a component as an answer grade in [0, 1]).
    Set by the registry (``envgym.make``): ``spec``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}
    observation_space = Messages()
    action_space = AssistantAction()
    tasks: TaskSource | None = None
    description: ClassVar[str] = ""
    reward_ranges: Mapping[str, RewardRange] = {}
    max_action_chars: int = DEFAULT_MAX_ACTION_CHARS

    # Episode state owned by the base class.
    _task: Task | None = None
    _started: bool = False
    _episode_over: bool = True
    _last_messages: list[Message] | None = None
    _last_action: Action | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[Message], dict[str, Any]]:
        """Start an episode. ``options={"task_index": i}`` picks task ``i`` (same i -> same task);
        ``options={"task": Task(...)}`` plays a given task; otherwise a task is sampled with the env's RNG."""
        options = validate_options(options)
        super().reset(seed=seed)
        task = self._choose_task(options)
        messages, info = self._reset(task, options)
        self._task = task
        self._started, self._episode_over = True, False
        self._last_messages, self._last_action = messages, None
        if task is not None:
            info.setdefault("task_id", task.id)
        return messages, info

    def step(self, action: Action) -> StepResult:
        """Play the assistant's turn; see the module docstring for ``terminated`` vs ``truncated``."""
        if not self._started:
            raise ResetNeeded("step() was called before reset(); call env.reset() first")
        if self._episode_over:
            raise ResetNeeded("the episode has ended (terminated or truncated); call env.reset() to start another")
        action, cut = validate_action(action, self.max_action_chars)
        messages, reward, terminated, truncated, info = self._step(action)
        if cut:
            info["action_truncated"] = True
        self._episode_over = bool(terminated or truncated)
        self._last_messages, self._last_action = messages, action
        return messages, float(reward), bool(terminated), bool(truncated), info

    @property
    def task(self) -> Task | None:
        """The task of the current episode (``None`` before the first reset)."""
        return self._task

    def render(self) -> str | None:
        """``ansi``: the last assistant turn and the messages that answered it, as text."""
        if self.render_mode != "ansi":
            return None
        lines = []
        if self._last_action is not None:
            lines.append(f"[assistant] {action_text(self._last_action)}")
        for message in self._last_messages or []:
            lines.append(f"[{message.get('role')}] {message.get('content')}")
        return "\n".join(lines)

    def _choose_task(self, options: dict[str, Any]) -> Task | None:
        if "task" in options:
            return options["task"]
        if self.tasks is None:
            if "task_index" in options:
                raise InvalidOptions(
                    f"{type(self).__name__} has no task source, so options['task_index'] is meaningless"
                )
            return None
        if "task_index" in options:
            index = int(options["task_index"])
            if index >= len(self.tasks):
                raise InvalidOptions(
                    f"options['task_index']={index} is out of range: this env has {len(self.tasks)} tasks"
                )
            return self.tasks.get(index)
        return self.tasks.sample(self.np_random)

    def reference_action(self) -> Action | None:
        """An honest, correct action for the current state of this episode, or ``None`` where the env knows none.

        Env authors implement it where they can (a single-turn env returns the gold answer in its required format;
        a game returns the next move of a solver). ``envgym audit`` plays it to prove that no honest answer is
        refused. It reads hidden task data, so it is for audits and tests only, never for a policy.
        """
        return None

    def wrong_action(self) -> Action | None:
        """An honest but wrong action for the current state, in the env's required format, or ``None``.

        ``envgym audit`` compares every adversarial strategy with it: no trick may earn more than an honest wrong
        answer. Declare it where a plain non-answer is not what honest play earns: a format reward, or a game where
        any legal move earns something (a bandit pull, a legal but losing move). ``None``: "I don't know." is used.
        """
        return None

    # --- implemented by subclasses -------------------------------------------------------------
    def _reset(self, task: Task | None, options: dict[str, Any]) -> tuple[list[Message], dict[str, Any]]:
        """Set up the episode for ``task``; return the first messages and the info dict."""
        raise NotImplementedError

    def _step(self, action: Action) -> StepResult:
        """Play one validated assistant turn; return ``(messages, reward, terminated, truncated, info)``."""
        raise NotImplementedError


class Wrapper(AsyncAPI, gymnasium.Wrapper[list[Message], Action, list[Message], Action]):
    """Base class of envgym wrappers: forwards everything, including ``task`` and the async API."""

    env: Env

    @property
    def spec(self):  # noqa: D102 - gymnasium's version rebuilds a gymnasium EnvSpec, which ours is not
        return self.env.spec

    @property
    def task(self) -> Task | None:
        return self.env.task

    def reference_action(self) -> Action | None:
        """The wrapped env's reference action; a wrapper that changes the action format translates it."""
        return self.env.reference_action()

    def wrong_action(self) -> Action | None:
        """The wrapped env's honest wrong action; a wrapper that changes the action format translates it."""
        return self.env.wrong_action()


class ObservationWrapper(Wrapper):
    """Changes the messages of every reset and step through ``observation``."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        messages, info = self.env.reset(seed=seed, options=options)
        return self.observation(messages), info

    def step(self, action: Action):
        messages, reward, terminated, truncated, info = self.env.step(action)
        return self.observation(messages), reward, terminated, truncated, info

    def observation(self, messages: list[Message]) -> Any:
        raise NotImplementedError


def reward_total(components: Mapping[str, SupportsFloat]) -> float:
    """The scalar reward of a turn: the sum of its (already weighted) named components."""
    return float(sum(float(value) for value in components.values()))

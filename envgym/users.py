"""Simulated users inside an episode (tau-bench style): a user who knows a goal and reveals it over turns.

An env with a user hands each assistant text turn (one without tool calls) to a :class:`User`, whose reply is
the env's next message with role ``"user"``: env tokens, so the rollout gives them loss mask 0. What the user
knows comes in a :class:`UserBrief` at the start of each episode; each kind of user reads the part it needs:

- :class:`ScriptedUser` (``goal``): deterministic per task. It reveals the goal's pieces in order, one per
  clarifying question (an assistant turn with a ``?``); asked nothing useful it repeats the piece it is on; once
  every piece is out, an assistant turn without a question ends the conversation (the agent's final message).
- :class:`ReplayUser` (``script``): says a fixed list of turns, for tests, audits and gold replays. A turn that
  acts (tool calls) waits until the agent asks for it, if the env says how to tell.
- :class:`LLMUser` (``prompt`` or ``goal``, ``tools``): a model behind an OpenAI-compatible ``/chat/completions``
  endpoint plays the user, and ends the conversation with a stop token (``###STOP###``). A request that fails
  after its retries raises :class:`UserError`: the env reports it as the episode's ``info["error"]``, never as a
  reward.

A user may act on its own side (tau2-bench's telecom customer toggles settings on their phone): a
:class:`UserTurn` with ``tool_calls`` asks the env to run them; the env passes the results to
:meth:`User.tool_results` and the user goes on, until it says something to the agent. The agent never sees the
user's calls.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from envgym.core import EnvGymError, Message
from envgym.tools.parsing import ToolCall, parse_turn

STOP = "###STOP###"


class EndpointError(EnvGymError, RuntimeError):
    """An OpenAI-compatible endpoint gave no usable answer after its retries: infrastructure, not the agent."""


class UserError(EndpointError):
    """The simulated user could not produce its turn (endpoint down, bad answer): infrastructure, not the agent."""


@dataclass(frozen=True)
class UserTurn:
    """What the user says (``text``, stop tokens removed), whether it ends the conversation (then the env grades
    the episode) and with which token, and the calls it makes on its own side (the env runs them first)."""

    text: str = ""
    stop: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    stop_token: str | None = None


@dataclass(frozen=True)
class UserBrief:
    """What a simulated user knows at the start of an episode.

    goal: what the user wants, in the order it reveals it.
    prompt: the whole system prompt of a model user (tau2-bench's guidelines and scenario); ``None``: one is
        built from ``goal``.
    tools: OpenAI schemas of the tools the user can use on its side.
    script: the turns a :class:`ReplayUser` says, in order.
    """

    goal: tuple[str, ...] = ()
    prompt: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    script: tuple[UserTurn, ...] = field(default=())


class User(ABC):
    """A simulated user: ``start`` begins an episode, ``reply`` answers each assistant text turn, ``tool_results``
    hands back the results of the user's own calls."""

    @abstractmethod
    def start(self, brief: UserBrief) -> None:
        """Forget the last episode and take ``brief``."""

    @abstractmethod
    def reply(self, agent_text: str) -> UserTurn:
        """The user's answer to the agent's message ``agent_text``."""

    def tool_results(self, results: Sequence[Message]) -> UserTurn:
        """The user's next turn after its own calls ran (``results``: ``tool`` messages, in the calls' order)."""
        raise UserError(f"{type(self).__name__} makes no tool calls, so it takes no tool results")


class ScriptedUser(User):
    """Reveals one goal piece per clarifying question, repeats itself otherwise (module docstring)."""

    def __init__(self) -> None:
        self.goal: list[str] = []
        self.revealed = 0

    def start(self, brief: UserBrief) -> None:
        if not brief.goal:
            raise ValueError("a scripted user needs at least one goal piece")
        self.goal, self.revealed = list(brief.goal), 0

    def reply(self, agent_text: str) -> UserTurn:
        asked = "?" in agent_text
        if self.revealed < len(self.goal):
            if asked:
                self.revealed += 1
                return UserTurn(self.goal[self.revealed - 1])
            if self.revealed == 0:
                return UserTurn("I have some requests for you. Please ask me what they are.")
            return UserTurn(f"As I said: {self.goal[self.revealed - 1]}")
        if asked:
            return UserTurn("That is everything I need.")
        return UserTurn("Thank you, goodbye.", stop=True, stop_token=STOP)


class ReplayUser(User):
    """Says a fixed script, one turn per call, whatever the agent writes (tests, audits, gold replays).

    script: the turns to say in every episode, instead of the brief's (a test replaying a changed plan).
    asks: ``asks(agent_text, turn)`` says whether the agent's message asks for ``turn``, a turn with tool calls;
        until it does the user answers ``nudge``. Default: every such turn is asked for.
    patience: after this many nudges in a row the user gives up and ends the conversation (``None``: never), so an
        agent that stalls ends its episode in a few turns instead of at the turn limit.
    After the last turn the user ends the conversation with ``###STOP###``.
    """

    def __init__(
        self,
        script: Sequence[UserTurn] | None = None,
        *,
        asks: Callable[[str, UserTurn], bool] | None = None,
        nudge: str = "What exactly should I do?",
        patience: int | None = None,
    ):
        if patience is not None and patience < 0:
            raise ValueError(f"patience must be >= 0 or None, got {patience}")
        self.fixed = None if script is None else tuple(script)
        self.asks, self.nudge, self.patience = asks, nudge, patience
        self.script: tuple[UserTurn, ...] = ()
        self.said = self.nudged = 0

    def start(self, brief: UserBrief) -> None:
        self.script = self.fixed if self.fixed is not None else brief.script
        if not self.script:
            raise ValueError("a replay user needs a script: pass one, or a brief with one")
        self.said = self.nudged = 0

    def reply(self, agent_text: str) -> UserTurn:
        turn = self._next()
        if turn.tool_calls and self.asks is not None and not self.asks(agent_text, turn):
            self.nudged += 1
            if self.patience is not None and self.nudged > self.patience:
                return UserTurn(STOP, stop=True, stop_token=STOP)
            return UserTurn(self.nudge)
        self.nudged = 0
        return self._say(turn)

    def tool_results(self, results: Sequence[Message]) -> UserTurn:
        return self._say(self._next())

    def _next(self) -> UserTurn:
        return self.script[self.said] if self.said < len(self.script) else UserTurn(STOP, stop=True, stop_token=STOP)

    def _say(self, turn: UserTurn) -> UserTurn:
        self.said += 1
        return turn


class ChatEndpoint:
    """An OpenAI-compatible ``/chat/completions`` endpoint, asked with retries (the model user speaks through it;
    judges that need a whole reply message reuse it).

    base_url: the endpoint's ``/v1`` URL; model: the model name it serves; timeout: seconds per request;
    retries: further attempts after a failed request (transport error, HTTP error status, unreadable answer);
    client: an ``httpx.Client`` to use instead of a new one (tests pass one with a mock transport).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        temperature: float = 0.0,
        max_tokens: int = 256,
        client: httpx.Client | None = None,
    ):
        if retries < 0 or timeout <= 0:
            raise ValueError(f"retries must be >= 0 and timeout > 0, got retries={retries}, timeout={timeout}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.retries, self.temperature, self.max_tokens = model, retries, temperature, max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = client or httpx.Client(timeout=timeout, headers=headers)

    def complete(self, messages: list[Message], *, tools: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        """The reply message (``content`` text and/or ``tool_calls``); raises :class:`EndpointError` when no
        attempt gives one."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if tools:
            body["tools"] = list(tools)
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.5 * 2 ** (attempt - 1), 4.0))
            try:
                response = self.client.post(self.url, json=body)
                response.raise_for_status()
                message = response.json()["choices"][0]["message"]
                content = message.get("content")
                if (isinstance(content, str) and content.strip()) or message.get("tool_calls"):
                    return message
                problem = f"an empty reply ({content!r})"
            except httpx.HTTPError as error:
                problem = f"{type(error).__name__}: {error}"
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
                problem = f"an unreadable reply ({type(error).__name__}: {error})"
        raise EndpointError(f"the endpoint {self.url} failed after {self.retries + 1} attempt(s): {problem}")


class LLMUser(User):
    """A user played by a model over an OpenAI-compatible endpoint (keywords: :class:`ChatEndpoint`'s).

    stop_tokens: any of them in a reply ends the conversation (tau2-bench's user also says ``###TRANSFER###``
        and ``###OUT-OF-SCOPE###``).
    """

    def __init__(self, base_url: str, model: str, *, stop_tokens: Sequence[str] = (STOP,), **endpoint: Any):
        if not stop_tokens or not all(isinstance(token, str) and token for token in stop_tokens):
            raise ValueError(f"stop_tokens must be non-empty strings, got {stop_tokens!r}")
        self.endpoint = ChatEndpoint(base_url, model, **endpoint)
        self.stop_tokens = tuple(stop_tokens)
        self.history: list[Message] = []
        self.tools: tuple[dict[str, Any], ...] = ()

    def start(self, brief: UserBrief) -> None:
        prompt = brief.prompt
        if prompt is None:
            pieces = "\n".join(f"{i + 1}. {piece}" for i, piece in enumerate(brief.goal))
            prompt = (
                "You are a customer writing to an online shop's support agent. Your requests, in order:\n"
                f"{pieces}\nReveal them one at a time, only when the agent asks what you need; never invent "
                f"others. When every request has been handled, reply with exactly {self.stop_tokens[0]}."
            )
        self.history = [{"role": "system", "content": prompt}]
        self.tools = brief.tools

    def reply(self, agent_text: str) -> UserTurn:
        # Roles are flipped: the agent is this model's "user", and the model speaks as the "assistant".
        self.history.append({"role": "user", "content": agent_text})
        return self._turn()

    def tool_results(self, results: Sequence[Message]) -> UserTurn:
        self.history += [
            {"role": "tool", "tool_call_id": result["tool_call_id"], "content": result["content"]} for result in results
        ]
        return self._turn()

    def _turn(self) -> UserTurn:
        try:
            message = self.endpoint.complete(self.history, tools=self.tools)
        except EndpointError as error:
            raise UserError(f"the simulated user: {error}") from error
        text = (message.get("content") or "").strip() if isinstance(message.get("content"), str) else ""
        calls = parse_turn(message).calls if self.tools else []
        if calls:
            self.history.append(
                {"role": "assistant", "content": text or None, "tool_calls": [c.to_openai() for c in calls]}
            )
            return UserTurn(text, tool_calls=tuple(calls))
        if not text:
            raise UserError(f"the simulated user at {self.endpoint.url} answered with neither text nor a tool call")
        self.history.append({"role": "assistant", "content": text})
        token = next((token for token in self.stop_tokens if token in text), None)
        if token is None:
            return UserTurn(text)
        said = re.sub("|".join(map(re.escape, self.stop_tokens)), "", text).strip()
        return UserTurn(said or "Thank you, goodbye.", stop=True, stop_token=token)


def make_user(endpoint: dict[str, Any] | None, *, default: Callable[[], User] = ScriptedUser) -> User:
    """``default()`` for ``None``, else an :class:`LLMUser` built from ``endpoint``'s keywords."""
    if endpoint is None:
        return default()
    if not isinstance(endpoint, dict) or not {"base_url", "model"} <= endpoint.keys():
        raise ValueError(f"user_endpoint must be None or a dict with 'base_url' and 'model', got {endpoint!r}")
    return LLMUser(**endpoint)

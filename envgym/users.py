"""Simulated users inside an episode (tau-bench style): a user who knows a goal and reveals it over turns.

An env with a user hands each assistant text turn (one without tool calls) to a :class:`User`, whose reply is
the env's next message with role ``"user"``: env tokens, so the rollout gives them loss mask 0. Two users:

- :class:`ScriptedUser`: deterministic per task. It reveals the goal's pieces in order, one per clarifying
  question (an assistant turn with a ``?``); asked nothing useful it repeats the piece it is on; once every
  piece is out, an assistant turn without a question ends the conversation (the agent's final message).
- :class:`LLMUser`: a model behind an OpenAI-compatible ``/chat/completions`` endpoint plays the user from a
  prompt holding the goal, and ends the conversation by saying ``###STOP###``. A request that fails after its
  retries raises :class:`UserError`: the env reports it as the episode's ``info["error"]``, never as a reward.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from envgym.core import EnvGymError, Message

STOP = "###STOP###"


class UserError(EnvGymError, RuntimeError):
    """The simulated user could not produce its turn (endpoint down, bad answer): infrastructure, not the agent."""


@dataclass(frozen=True)
class UserTurn:
    """What the user says, and whether it ends the conversation (then the env grades the episode)."""

    text: str
    stop: bool = False


class User(ABC):
    """A simulated user: ``start`` begins an episode with its goal, ``reply`` answers each assistant text turn."""

    @abstractmethod
    def start(self, goal: Sequence[str]) -> None:
        """Forget the last episode and take ``goal``, the pieces to reveal in order."""

    @abstractmethod
    def reply(self, agent_text: str) -> UserTurn:
        """The user's answer to the agent's message ``agent_text``."""


class ScriptedUser(User):
    """Reveals one goal piece per clarifying question, repeats itself otherwise (module docstring)."""

    def __init__(self) -> None:
        self.goal: list[str] = []
        self.revealed = 0

    def start(self, goal: Sequence[str]) -> None:
        if not goal:
            raise ValueError("a scripted user needs at least one goal piece")
        self.goal, self.revealed = list(goal), 0

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
        return UserTurn("Thank you, goodbye.", stop=True)


class LLMUser(User):
    """A user played by a model over an OpenAI-compatible endpoint.

    base_url: the endpoint's ``/v1`` URL; model: the model name it serves; timeout: seconds per request;
    retries: further attempts after a failed request (transport error, HTTP error status, unreadable answer);
    client: an ``httpx.Client`` to use instead of a new one (tests pass one with a mock transport).
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0,
                 retries: int = 2, temperature: float = 0.0, max_tokens: int = 256,
                 client: httpx.Client | None = None):
        if retries < 0 or timeout <= 0:
            raise ValueError(f"retries must be >= 0 and timeout > 0, got retries={retries}, timeout={timeout}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.retries, self.temperature, self.max_tokens = model, retries, temperature, max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = client or httpx.Client(timeout=timeout, headers=headers)
        self.history: list[Message] = []

    def start(self, goal: Sequence[str]) -> None:
        pieces = "\n".join(f"{i + 1}. {piece}" for i, piece in enumerate(goal))
        prompt = ("You are a customer writing to an online shop's support agent. Your requests, in order:\n"
                  f"{pieces}\nReveal them one at a time, only when the agent asks what you need; never invent "
                  f"others. When every request has been handled, reply with exactly {STOP}.")
        self.history = [{"role": "system", "content": prompt}]

    def reply(self, agent_text: str) -> UserTurn:
        # Roles are flipped: the agent is this model's "user", and the model speaks as the "assistant".
        self.history.append({"role": "user", "content": agent_text})
        text = self._complete()
        self.history.append({"role": "assistant", "content": text})
        if STOP in text:
            return UserTurn(text.replace(STOP, "").strip() or "Thank you, goodbye.", stop=True)
        return UserTurn(text)

    def _complete(self) -> str:
        body = {"model": self.model, "messages": self.history, "temperature": self.temperature,
                "max_tokens": self.max_tokens}
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.5 * 2 ** (attempt - 1), 4.0))
            try:
                response = self.client.post(self.url, json=body)
                response.raise_for_status()
                content = response.json()["choices"][0]["message"]["content"]
                if isinstance(content, str) and content.strip():
                    return content.strip()
                problem = f"an empty reply ({content!r})"
            except httpx.HTTPError as error:
                problem = f"{type(error).__name__}: {error}"
            except (ValueError, KeyError, IndexError, TypeError) as error:
                problem = f"an unreadable reply ({type(error).__name__}: {error})"
        raise UserError(f"the simulated user at {self.url} failed after {self.retries + 1} attempt(s): {problem}")


def make_user(endpoint: dict[str, Any] | None) -> User:
    """A :class:`ScriptedUser` for ``None``, else an :class:`LLMUser` built from ``endpoint``'s keywords."""
    if endpoint is None:
        return ScriptedUser()
    if not isinstance(endpoint, dict) or not {"base_url", "model"} <= endpoint.keys():
        raise ValueError(f"user_endpoint must be None or a dict with 'base_url' and 'model', got {endpoint!r}")
    return LLMUser(**endpoint)

"""PromptPrefix: a system prompt and few-shot examples in front of any env's first messages.

Small models often need to *see* the answer format before RL has anything to reinforce: a worked example
in the conversation moves SmolLM2-135M on Arithmetic-v0 from almost never boxing an answer to almost always.
Putting it in a wrapper keeps every env's own prompt (and verifier) untouched, and ``envgym.make(...,
system_prompt=..., few_shot=[...])`` makes it a config line for eval suites and training recipes alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envgym.core import Env, Message, Wrapper
from envgym.multiagent import is_multi_agent

ROLES = ("user", "assistant")


class PromptPrefix(Wrapper):
    """Puts ``system_prompt`` and the ``few_shot`` messages before the messages of every reset.

    ``few_shot`` is a list of chat messages, alternating user/assistant and ending with an assistant turn,
    so the env's own first user message follows a complete example. When the env starts with a system
    message of its own (tool descriptions, rules), ``system_prompt`` goes first in that same message, since
    chat templates take one system message. Only the reset observation changes; steps pass through, except in a
    multi-agent env, where the first messages each later seat receives are its prompt and get the prefix too.
    """

    def __init__(self, env: Env, system_prompt: str | None = None, few_shot: Sequence[Message] | None = None):
        if system_prompt is not None and (not isinstance(system_prompt, str) or not system_prompt.strip()):
            raise ValueError(f"system_prompt must be a non-empty string, got {system_prompt!r}")
        super().__init__(env)
        self.system_prompt = system_prompt
        self.few_shot = _check_few_shot(few_shot or [])
        self._seats_prefixed: set[str] | None = None  # multi-agent envs: the seats whose prompt has the prefix

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        messages, info = self.env.reset(seed=seed, options=options)
        self._seats_prefixed = {info["agent"]} if is_multi_agent(info) else None
        return self._prefixed(messages), info

    def step(self, action: Any):
        messages, reward, terminated, truncated, info = self.env.step(action)
        seat = info.get("agent")
        if self._seats_prefixed is not None and not (terminated or truncated) and seat not in self._seats_prefixed:
            self._seats_prefixed.add(seat)
            messages = self._prefixed(messages)
        return messages, reward, terminated, truncated, info

    def _prefixed(self, messages: list[Message]) -> list[Message]:
        head: list[Message] = []
        rest = list(messages)
        if rest and rest[0].get("role") == "system":
            head.append(dict(rest.pop(0)))
            if self.system_prompt is not None:
                head[0]["content"] = f"{self.system_prompt}\n\n{head[0].get('content') or ''}".rstrip()
        elif self.system_prompt is not None:
            head.append({"role": "system", "content": self.system_prompt})
        return head + [dict(m) for m in self.few_shot] + rest


def _check_few_shot(few_shot: Sequence[Message]) -> list[Message]:
    if isinstance(few_shot, (str, bytes)) or not isinstance(few_shot, Sequence):
        raise ValueError(f"few_shot must be a list of chat messages, got {type(few_shot).__name__}")
    for position, message in enumerate(few_shot):
        expected = ROLES[position % 2]
        if (
            not isinstance(message, dict)
            or message.get("role") != expected
            or not isinstance(message.get("content"), str)
        ):
            raise ValueError(
                f"few_shot[{position}] must be {{'role': '{expected}', 'content': str}} (examples alternate "
                f"user/assistant), got {message!r}"
            )
    if len(few_shot) % 2:
        raise ValueError("few_shot must end with an assistant message, so each example has its answer")
    return [{"role": m["role"], "content": m["content"]} for m in few_shot]

"""Token-in/token-out conversations: append turns as tokens, never re-tokenize the history.

The chat template is applied once to the prompt. After that, the policy's sampled tokens are appended
as they are, and each env answer is appended as the *delta* the template adds for those messages. The
delta is computed on a fixed placeholder conversation that ends with a finished assistant turn, never on
the real history:

    delta(new) = the text of render(PLACEHOLDER + new, generation prompt) after the placeholder's assistant
                 turn and the text that closes it

Because the real history is never re-rendered, templates that rewrite earlier turns cannot change tokens the
model already conditioned on: Qwen3 and DeepSeek-R1 strip earlier ``<think>`` blocks, DeepSeek-R1's
generation prompt opens a ``<think>`` that a finished turn drops, Mistral v3 moves the system prompt and tool
list to the latest user turn. The trajectory is exactly the sequence the model saw (``envgym check-template``
says whether re-rendering would give the same; :mod:`envgym.agents.engines.templates`).

Rejected with an explanation: templates that drop or repeat an assistant turn's content, that close a turn
differently once messages follow it, or whose env messages bring earlier placeholder messages with them
even without a system message (a system prompt repeated at every user turn is left out of the deltas: it
stays where the model first saw it).
"""

from __future__ import annotations

import functools
from typing import Any

from envgym.agents.engines.policy import Generation, encode, render_prompt
from envgym.core import Message

_MARK = "\u2063ENVGYM_ASSISTANT_TURN\u2063"
_SYSTEM = "\u2063ENVGYM_SYSTEM\u2063"
_USER = "\u2063ENVGYM_USER\u2063"
# Tried in order; the second serves templates that move the system prompt to the latest user turn (Mistral v3).
_PLACEHOLDERS: tuple[list[Message], ...] = (
    [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": _USER}],
    [{"role": "user", "content": _USER}],
)
_PROBE: list[Message] = [{"role": "user", "content": "probe"}]


class TemplateError(ValueError):
    """The chat template cannot be extended token by token (see the module docstring)."""


class TemplateDeltas:
    """The template text around an assistant turn and around env messages, for one tokenizer."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        errors = []
        for placeholder in _PLACEHOLDERS:
            try:
                self._use(placeholder)
                return
            except TemplateError as error:
                errors.append(str(error))
            except Exception as error:  # noqa: BLE001 - a template may refuse a role (raise_exception, jinja errors)
                errors.append(
                    f"the template cannot render {[m['role'] for m in placeholder]} ({type(error).__name__}: {error})"
                )
        raise TemplateError("; ".join(dict.fromkeys(errors)))

    def _use(self, placeholder: list[Message]) -> None:
        self._finished = placeholder + [{"role": "assistant", "content": _MARK}]
        self._messages_text.cache_clear()
        finished = self.tokenizer.apply_chat_template(self._finished, tokenize=False)
        if finished.count(_MARK) != 1:
            raise TemplateError(
                f"this chat template renders an assistant turn's content {finished.count(_MARK)} times (rendered "
                f"{finished[-160:]!r}), so the sampled tokens cannot be kept as they are"
            )
        self.turn_close = finished[finished.index(_MARK) + len(_MARK) :]
        """Template text that closes an assistant turn (e.g. ``<|im_end|>\\n``)."""
        self.messages_text(_PROBE)

    @functools.lru_cache(maxsize=256)  # noqa: B019 -- one per tokenizer wrapper, which lives as long as its engine
    def _messages_text(self, key: tuple) -> str:
        messages = [dict(items) for items in key]
        longer = self.tokenizer.apply_chat_template(
            self._finished + messages, tokenize=False, add_generation_prompt=True
        )
        after = longer[longer.find(_MARK) + len(_MARK) :] if longer.count(_MARK) == 1 else None
        if after is None or not after.startswith(self.turn_close):
            raise TemplateError(
                f"rendering env messages {messages!r} after a finished turn changes how that turn is closed (expected "
                f"{self.turn_close!r} after it), so they cannot be appended as tokens"
            )
        delta = after[len(self.turn_close) :]
        if any(text in delta for text in (_SYSTEM, _USER, _MARK)):
            raise TemplateError(
                f"rendering env messages {messages!r} repeats earlier messages after the last turn ({delta[:120]!r}), "
                "so they cannot be appended as tokens"
            )
        return delta

    def messages_text(self, messages: list[Message]) -> str:
        """Template text of env messages appended after a finished turn, with the next generation prompt."""
        key = tuple(tuple(sorted((k, _hashable(v)) for k, v in m.items())) for m in messages)
        return self._messages_text(key)


def _hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, (list, dict)) else value


class TokenConversation:
    """One episode's tokens: the prompt, then policy turns (mask 1) and template/env tokens (mask 0)."""

    def __init__(
        self,
        tokenizer: Any,
        deltas: TemplateDeltas,
        prompt: list[Message],
        tools: list[dict] | None = None,
        eos_ids: list[int] | None = None,
    ):
        self.tokenizer, self.deltas = tokenizer, deltas
        self.prompt_ids = render_prompt(tokenizer, prompt, tools)
        self.completion_ids: list[int] = []
        self.logprobs: list[float] = []
        self.loss_mask: list[int] = []
        self.turn_ends: list[int] = []
        self.eos_ids = set(eos_ids or [tokenizer.eos_token_id])

    @property
    def ids(self) -> list[int]:
        """The whole sequence so far (the next generation continues it)."""
        return self.prompt_ids + self.completion_ids

    def add_policy_turn(self, generation: Generation) -> None:
        """Append the sampled tokens (mask 1), then whatever the template needs to close the turn (mask 0)."""
        if not generation.token_ids:
            raise ValueError("a token-level turn needs the sampled token ids; the policy returned none")
        self._append(generation.token_ids, generation.logprobs, 1)
        self.turn_ends.append(len(self.completion_ids) - 1)
        close = self.deltas.turn_close
        if generation.token_ids[-1] in self.eos_ids:
            eos_text = self.tokenizer.decode(generation.token_ids[-1:])
            close = close[len(eos_text) :] if close.startswith(eos_text) else close
        self._append(encode(self.tokenizer, close), None, 0)

    def add_env_messages(self, messages: list[Message]) -> None:
        """Append env messages and the next generation prompt as template tokens (mask 0)."""
        self._append(encode(self.tokenizer, self.deltas.messages_text(messages)), None, 0)

    def _append(self, ids: list[int], logprobs: list[float] | None, mask: int) -> None:
        if logprobs is not None and len(logprobs) != len(ids):
            raise ValueError(f"the policy returned {len(ids)} tokens but {len(logprobs)} logprobs")
        self.completion_ids.extend(ids)
        self.logprobs.extend(logprobs if logprobs is not None else [0.0] * len(ids))
        self.loss_mask.extend([mask] * len(ids))

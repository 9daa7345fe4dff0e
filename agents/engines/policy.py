"""The policy protocol: generate assistant turns for a batch of conversations.

A policy works at one of two levels, and says which through ``tokenizer``:

- **token level** (``tokenizer`` is set): ``generate(prompts)`` takes token ids and returns the sampled
  token ids with their logprobs. The rollout loop keeps the whole conversation as tokens and never
  re-tokenizes it, which is what RL training needs (``TransformersPolicy``, ``VLLMPolicy``, ``OpenAIPolicy``
  on a completions endpoint with a tokenizer).
- **message level** (``tokenizer`` is ``None``): ``chat(conversations)`` takes chat messages; the server
  applies its own template (``OpenAIPolicy`` on a chat endpoint). Good for evaluation, not for training.

Stop sequences are kept in the returned text and tokens: the tokens were sampled, so a trainer must see
them, and an env that parses ``<tool_call>...</tool_call>`` needs the closing tag.

Seeds: ``SamplingParams.seed`` seeds a whole batch. Engines that seed each request on its own (vLLM, any
OpenAI-compatible server) give request ``i`` the seed ``request_seed(seed, i)``: one seed for every request
would make the G samples of a task identical (no pass@k, zero GRPO advantages).

Sampling logprobs are those of the distribution a token was drawn from: temperature applied, then top-p
(renormalised over the nucleus). Nothing else applies, in particular nothing from a model's own
``generation_config`` (repetition penalty, top-k): a policy samples with what the caller set and no more.

A policy may expose ``settings``: a JSON-able dict of what, besides ``SamplingParams``, shapes its samples
(engine, model, dtype...). ``envgym eval`` keys resumption on it (see :func:`policy_settings`).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any, Protocol, runtime_checkable

import numpy as np

from envgym.core import Message


@dataclasses.dataclass
class SamplingParams:
    """How to sample one assistant turn."""

    max_completion_length: int = 256
    """Most tokens generated for one turn (the rollout may lower it to fit an episode budget)."""
    temperature: float = 1.0
    """0 means greedy decoding."""
    top_p: float = 1.0
    stop: list[str] = dataclasses.field(default_factory=list)
    """Stop sequences (e.g. ``["</tool_call>"]``); generation ends after the first one, which is kept."""
    seed: int | None = None
    """Seeds the sampler for reproducible generations (where the backend supports it); each request of a batch
    gets its own seed derived from it (:func:`request_seed`), so the samples of one batch differ."""

    def __post_init__(self) -> None:
        if self.max_completion_length < 1:
            raise ValueError(f"max_completion_length must be >= 1, got {self.max_completion_length}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0 (0 = greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if isinstance(self.stop, str):
            self.stop = [self.stop]

    def replace(self, **changes: Any) -> SamplingParams:
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass
class Generation:
    """One generated assistant turn.

    ``token_ids``/``logprobs`` are the sampled tokens (including a final end-of-turn token when the model
    emitted one) and their sampling logprobs; empty when a message-level backend did not return them.
    ``finish_reason``: ``"stop"`` (end-of-turn token or stop sequence) or ``"length"`` (hit max_completion_length).
    """

    text: str
    token_ids: list[int] = dataclasses.field(default_factory=list)
    logprobs: list[float] = dataclasses.field(default_factory=list)
    finish_reason: str = "stop"
    action: Message | None = None
    """The assistant message for the env when a message-level backend returned structured ``tool_calls``."""
    error: str | None = None
    """Set when the request for this turn failed (server down, refused, timed out): the rollout loop ends that
    episode with this error (``Episode.error``) instead of sending an empty turn to the env."""


@runtime_checkable
class Policy(Protocol):
    """Anything that writes assistant turns (see the module docstring for the two levels)."""

    name: str
    tokenizer: Any | None

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        """Token level: continue each prompt (token ids) with one assistant turn."""
        ...

    def chat(
        self, conversations: list[list[Message]], params: SamplingParams, tools: list[list[dict]] | None = None
    ) -> list[Generation]:
        """Message level: answer each conversation (OpenAI messages) with one assistant turn."""
        ...


ENGINES = ("transformers", "vllm")


def default_engine() -> str:
    """The local engine ``envgym eval`` and ``envgym train`` use unless told: vLLM where it is installed (its
    batched, paged decoding is the faster one), else transformers. Looks the package up without importing it."""
    return "vllm" if importlib.util.find_spec("vllm") is not None else "transformers"


def request_seed(seed: int | None, index: int) -> int | None:
    """The seed of request ``index`` of a batch seeded with ``seed`` (None stays None: unseeded).

    Mixed through NumPy's ``SeedSequence`` rather than ``seed + index``, so that batches whose seeds are a few
    apart (the rollout advances the seed by one per turn) never hand the same stream to two requests. The
    value fits in 53 bits: exact in any JSON parser and in range for every engine's seed (int64)."""
    if seed is None:
        return None
    state = np.random.SeedSequence([seed % 2**64, index]).generate_state(1, dtype=np.uint64)[0]
    return int(state >> np.uint64(11))


def policy_settings(policy: Any) -> dict[str, Any]:
    """What shapes ``policy``'s samples besides the sampling parameters: its ``settings`` when it has them,
    else its class (a policy that cannot say more is at least not mistaken for another kind)."""
    settings = getattr(policy, "settings", None)
    if settings is None:
        return {
            "policy": f"{type(policy).__module__}.{type(policy).__qualname__}",
            "name": getattr(policy, "name", None),
        }
    return dict(settings)


def render_prompt(tokenizer: Any, messages: list[Message], tools: list[dict] | None = None) -> list[int]:
    """Token ids of ``messages`` with the chat template applied and the generation prompt added."""
    text = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False, add_generation_prompt=True)
    return encode(tokenizer, text)


def encode(tokenizer: Any, text: str) -> list[int]:
    """Token ids of a piece of template text (special tokens in it are recognised, none are added)."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


class LocalTokenPolicy:
    """What every policy that holds its own tokenizer (``self.tokenizer``, ``self.eos_ids``) and token-level
    ``generate`` shares: message-level ``chat`` through its chat template, and turn text without the
    end-of-turn token."""

    tokenizer: Any
    eos_ids: list[int]
    generate: Any  # the subclass's token-level generate(prompts, params) -> list[Generation]

    def chat(
        self, conversations: list[list[Message]], params: SamplingParams, tools: list[list[dict]] | None = None
    ) -> list[Generation]:
        """Message level, through this policy's own chat template; the end-of-turn token is left out of
        ``text``."""
        tools = tools or [None] * len(conversations)
        generations = self.generate([render_prompt(self.tokenizer, c, t) for c, t in zip(conversations, tools)], params)
        for generation in generations:
            generation.text = self.turn_text(generation.token_ids)
        return generations

    def turn_text(self, token_ids: list[int]) -> str:
        """The assistant message text of a turn: its tokens without the end-of-turn token."""
        if token_ids and token_ids[-1] in self.eos_ids:
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids)

    def encode(self, text: str) -> list[int]:
        return encode(self.tokenizer, text)


def merged_weights(model: Any) -> list[tuple[str, Any]]:
    """``(Hugging Face name, tensor)`` of every weight of ``model`` as the base architecture names it, with
    ``peft`` LoRA adapters merged in (the adapters themselves are not weights of the base model)."""
    is_peft = hasattr(model, "merge_adapter") and hasattr(model, "get_base_model")
    if is_peft:
        model.merge_adapter()
    try:
        source = model.get_base_model() if is_peft else model
        weights = []
        for name, tensor in source.state_dict().items():
            if "lora_" in name or "modules_to_save" in name:
                continue
            tensor = tensor.detach()
            # A merged weight changes back when the adapters unmerge below: copy it; plain weights go as they are.
            weights.append((name.replace(".base_layer", ""), tensor.clone() if is_peft else tensor))
        return weights
    finally:
        if is_peft:
            model.unmerge_adapter()

"""The engine options of ``envgym eval`` (and the model commands that share them) as one validated model: which
engine serves the model and how, checked before anything loads.

An option the chosen engine would silently ignore is refused (``--dtype`` with a served model, ``--enforce-eager``
without vLLM...), so a flag never does nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic

from envgym.config import STRICT

DTYPES = ("float32", "bfloat16", "float16", "auto")


class EngineOptions(pydantic.BaseModel):
    """How to get a policy for a model name: a served model (``base_url``), in-process vLLM or transformers."""

    model_config = STRICT

    engine: Literal["transformers", "vllm"] | None = None
    """The local engine (default: vLLM where it is installed, else transformers); unused with ``base_url``."""
    base_url: str | None = None
    """An OpenAI-compatible server to evaluate through instead of a local engine."""
    endpoint: Literal["chat", "completions"] = "chat"
    """With ``base_url``: chat (the server's chat template) or completions (token ids in and out)."""
    tokenizer: str | None = None
    """With ``endpoint="completions"``: the tokenizer of the token ids (default: the model's)."""
    dtype: Literal["float32", "bfloat16", "float16", "auto"] | None = None
    enforce_eager: bool = False
    """vLLM: no CUDA graphs or compilation."""
    max_model_len: Annotated[int, pydantic.Field(ge=1)] | None = None
    """vLLM: the longest sequence (prompt + completion) the engine plans for."""
    device: str | None = None
    """The torch device of the transformers engine."""

    @pydantic.model_validator(mode="after")
    def _no_ignored_option(self) -> EngineOptions:
        served = self.base_url is not None
        if not served and (self.endpoint != "chat" or self.tokenizer is not None):
            raise ValueError("--endpoint and --tokenizer choose how to talk to a server: give --base-url")
        if self.endpoint == "chat" and self.tokenizer is not None:
            raise ValueError("--tokenizer is for --endpoint completions (the chat endpoint uses the server's)")
        if served and self.dtype is not None:
            raise ValueError("--dtype is the server's choice when evaluating through --base-url")
        if (served or self.local_engine() != "vllm") and (self.enforce_eager or self.max_model_len is not None):
            raise ValueError("--enforce-eager and --max-model-len are vLLM engine options: use --engine vllm")
        return self

    def local_engine(self) -> str:
        from envgym.agents.engines.policy import default_engine

        return self.engine or default_engine()

    def vllm_kwargs(self) -> dict[str, Any]:
        """``vllm.LLM`` keyword arguments for the options that were given (the rest keep VLLMPolicy's defaults)."""
        options = {
            "dtype": self.dtype,
            "enforce_eager": self.enforce_eager or None,
            "max_model_len": self.max_model_len,
        }
        return {key: value for key, value in options.items() if value is not None}

    def make_policy(self, model: str) -> Any:
        """The policy serving ``model``: OpenAI-compatible server (chat or token level), vLLM or transformers."""
        if self.base_url is not None:
            from envgym.agents.engines.openai_policy import OpenAIPolicy

            tokenizer = (self.tokenizer or model) if self.endpoint == "completions" else None
            return OpenAIPolicy(self.base_url, model, endpoint=self.endpoint, tokenizer=tokenizer)
        if self.local_engine() == "vllm":
            from envgym.agents.engines.vllm_policy import VLLMPolicy

            return VLLMPolicy(model, **self.vllm_kwargs())
        import torch

        from envgym.agents.engines.transformers_policy import TransformersPolicy

        dtype = None if self.dtype in (None, "auto") else getattr(torch, self.dtype)
        return TransformersPolicy(model, device=self.device, dtype=dtype)

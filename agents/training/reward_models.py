"""Reward models as reward-spec components (``source: reward_model``): a scalar score of a question and response.

Two ways to reach one:

- :class:`RewardModel`: any Hugging Face sequence-classification model with a scalar head
  (``AutoModelForSequenceClassification``, ``num_labels=1``), loaded once per process, batched, on the trainer's
  device (or the component's ``device``). The value of a response is the head's logit for the text the model's
  tokenizer builds from the conversation: its chat template over ``[user: question, assistant: response]`` where
  it has one (how reward models are trained), else ``question + "\\n" + response``.
- :class:`HTTPRewardModel`: a scorer behind a server, ``POST url`` with ``{"texts": [...]}`` answering
  ``{"scores": [...]}``, with retries and a timeout.

A model that cannot be loaded or reached, or answers with the wrong number of scores, raises
:class:`RewardModelError`; the trainer makes that the episodes' error (never a 0).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import torch

from envgym.rewards import RewardComponent


class RewardModelError(RuntimeError):
    """The reward model could not score: not loadable, not a scalar head, unreachable, or a malformed reply."""


class RewardModel:
    """A local sequence-classification reward model with one output (its logit is the reward)."""

    def __init__(self, model: str, *, device: str | torch.device = "cpu", batch_size: int = 8, max_length: int = 1024):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model)
            self.model = AutoModelForSequenceClassification.from_pretrained(model)
        except (OSError, ValueError) as error:
            raise RewardModelError(f"cannot load the reward model {model!r}: {error}") from error
        if self.model.config.num_labels != 1:
            raise RewardModelError(
                f"the reward model {model!r} has {self.model.config.num_labels} labels; a reward "
                "model has a scalar head (num_labels=1)"
            )
        if self.tokenizer.pad_token_id is None:  # batching pads; the head reads the last non-pad token
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if self.model.config.pad_token_id is None:
            self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.device = torch.device(device)
        self.model.to(self.device).eval()
        self.batch_size, self.max_length = batch_size, max_length

    def text(self, question: str, response: str) -> str:
        """The text the model scores for one response (see the module docstring)."""
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                [{"role": "user", "content": question}, {"role": "assistant", "content": response}], tokenize=False
            )
        return f"{question}\n{response}"

    @torch.no_grad()
    def score(self, questions: Sequence[str], responses: Sequence[str]) -> list[float]:
        """The scalar reward of each (question, response) pair, in batches of ``batch_size``."""
        texts = [self.text(q, r) for q, r in zip(questions, responses)]
        scores: list[float] = []
        for first in range(0, len(texts), self.batch_size):
            encoded = self.tokenizer(
                texts[first : first + self.batch_size],
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.max_length,
                add_special_tokens=False,
            )
            logits = self.model(**{k: v.to(self.device) for k, v in encoded.items()}).logits
            scores.extend(float(v) for v in logits[:, 0].float())
        return scores


class HTTPRewardModel:
    """A reward model behind a server: ``POST url {"texts": [...]}`` -> ``{"scores": [...]}``."""

    def __init__(self, url: str, *, timeout: float = 60.0, retries: int = 2, backoff: float = 0.5):
        self.url, self.retries, self.backoff = url, retries, backoff
        self._client = httpx.Client(timeout=timeout)

    def score(self, questions: Sequence[str], responses: Sequence[str]) -> list[float]:
        texts = [f"{q}\n{r}" for q, r in zip(questions, responses)]
        failure = ""
        for attempt in range(self.retries + 1):
            try:
                reply = self._client.post(self.url, json={"texts": texts})
                if reply.status_code == 200:
                    return _scores(reply, len(texts), self.url)
                failure = f"HTTP {reply.status_code}: {reply.text[:200]}"
            except httpx.TransportError as error:
                failure = f"{type(error).__name__}: {error}"
            if attempt < self.retries:
                time.sleep(self.backoff * 2**attempt)
        raise RewardModelError(f"the reward model at {self.url} failed after {self.retries + 1} attempts: {failure}")


def _scores(reply: httpx.Response, count: int, url: str) -> list[float]:
    try:
        scores = [float(v) for v in reply.json()["scores"]]
    except (ValueError, KeyError, TypeError) as error:
        raise RewardModelError(
            f"the reward model at {url} did not answer {{'scores': [...]}}: {reply.text[:200]}"
        ) from error
    if len(scores) != count or not all(math.isfinite(v) for v in scores):
        raise RewardModelError(
            f"the reward model at {url} gave {len(scores)} scores for {count} texts, or a non-finite one: {scores[:8]}"
        )
    return scores


_models: dict[tuple, Any] = {}
_models_lock = threading.Lock()


def shared_reward_model(component: RewardComponent, device: str | torch.device) -> RewardModel | HTTPRewardModel:
    """One reward model per distinct setting in this process (loaded once, reused every step)."""
    options = component.options
    device = options["device"] or str(device)
    key = tuple(sorted(options.items())) + (("resolved_device", device),)
    with _models_lock:
        if key not in _models:
            if options["url"] is not None:
                _models[key] = HTTPRewardModel(options["url"], timeout=options["timeout"], retries=options["retries"])
            else:
                _models[key] = RewardModel(
                    options["model"], device=device, batch_size=options["batch_size"], max_length=options["max_length"]
                )
        return _models[key]

"""OpenAIPolicy: any OpenAI-compatible server (vLLM, SGLang, ``transformers serve``, ``envgym serve model``).

Two levels (see :mod:`envgym.agents.engines.policy`):

- ``endpoint="chat"``: message level, ``/v1/chat/completions``; the server applies its chat template.
- ``endpoint="completions"`` with a ``tokenizer``: token level, ``/v1/completions`` with the prompt sent as
  token ids. The sampled ids come from the choice's ``token_ids`` (vLLM with ``return_token_ids``, and
  envgym's server); servers that do not return them get the text re-encoded (then the ids may differ from the
  sampled ones: prefer a server that returns them). Logprobs are zeros where the server gave none.

Each request of a batch carries its own seed (:func:`~envgym.agents.engines.policy.request_seed`): servers seed
every request on its own, so one seed for all would make the samples of a task identical.

``server_extensions`` (on by default) sends the request fields vLLM, SGLang and envgym's server add to the
OpenAI API: ``return_token_ids`` (the chat path then reports real token counts) and neutral ``top_k``,
``min_p`` and ``repetition_penalty``, because these servers fill fields a request leaves out from the
model's ``generation_config`` (a checkpoint's top-k or repetition penalty would apply silently). Turn it off
for servers that refuse unknown fields (api.openai.com). For logprobs of the distribution tokens were
sampled from (temperature and top-p applied, as the trainer expects), start vLLM with
``--logprobs-mode processed_logprobs``.

Requests of a batch run concurrently (``max_concurrency``); transport errors, 429 and 5xx answers are
retried with exponential backoff (``max_retries``); each request has a ``timeout``. A request that still
fails, or that the server refuses (4xx, not retried), comes back as a ``Generation`` with ``error`` set: the
rollout ends that episode with the error, and the other episodes go on.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envgym.agents.engines.models import load_tokenizer
from envgym.agents.engines.policy import Generation, SamplingParams, request_seed
from envgym.core import Message

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
# vLLM's, SGLang's and envgym's request fields that keep a checkpoint's generation_config out of sampling.
NEUTRAL_SAMPLING = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}


class OpenAIPolicyError(RuntimeError):
    """The server could not be reached, kept answering with an error, or refused the request."""


class OpenAIPolicy:
    """A policy behind an OpenAI-compatible HTTP API (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        endpoint: str = "chat",
        tokenizer: Any = None,
        max_concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 3,
        extra_body: dict[str, Any] | None = None,
        server_extensions: bool = True,
    ):
        import httpx

        if endpoint not in ("chat", "completions"):
            raise ValueError(f"endpoint must be 'chat' or 'completions', got {endpoint!r}")
        if endpoint == "completions" and tokenizer is None:
            raise ValueError(
                "the completions endpoint sends token ids, so it needs the model's tokenizer "
                "(an HF tokenizer or a path to one)"
            )
        if isinstance(tokenizer, str):
            tokenizer = load_tokenizer(tokenizer)
        self.name, self.endpoint = model, endpoint
        self.tokenizer = tokenizer if endpoint == "completions" else None
        self.eos_ids = [tokenizer.eos_token_id] if tokenizer is not None else []
        self.max_retries, self.extra_body = max_retries, dict(extra_body or {})
        self.server_extensions = server_extensions
        self.base_url = base_url.rstrip("/")
        self.settings = {
            "engine": "openai",
            "model": model,
            "endpoint": endpoint,
            "extra_body": self.extra_body,
            "server_extensions": server_extensions,
        }
        """What shapes this policy's samples besides the sampling parameters (``envgym eval`` resumes on it)."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout)
        self._pool = ThreadPoolExecutor(max_workers=max_concurrency)

    def generate(self, prompts: list[list[int]], params: SamplingParams) -> list[Generation]:
        """Token level: each prompt (token ids) goes to ``/completions``."""
        if self.tokenizer is None:
            raise TypeError(
                "this OpenAIPolicy is message level (endpoint='chat'); use chat(), or endpoint='completions'"
            )
        return list(self._pool.map(lambda job: self._complete(job[1], params, job[0]), enumerate(prompts)))

    def chat(
        self, conversations: list[list[Message]], params: SamplingParams, tools: list[list[dict]] | None = None
    ) -> list[Generation]:
        """Message level: each conversation goes to ``/chat/completions``."""
        tools = tools or [None] * len(conversations)
        jobs = enumerate(zip(conversations, tools))
        return list(self._pool.map(lambda job: self._chat(*job[1], params, job[0]), jobs))

    def turn_text(self, token_ids: list[int]) -> str:
        if token_ids and token_ids[-1] in self.eos_ids:
            token_ids = token_ids[:-1]
        return self.tokenizer.decode(token_ids)

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        self._client.close()

    def _body(self, params: SamplingParams, index: int) -> dict[str, Any]:
        """The request fields of request ``index`` of a batch (its own seed; neutral extensions, see above)."""
        body: dict[str, Any] = {
            "model": self.name,
            "max_tokens": params.max_completion_length,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "n": 1,
        }
        if self.server_extensions:
            body.update(NEUTRAL_SAMPLING, return_token_ids=True)
        if params.stop:
            body["stop"] = list(params.stop)
            if self.server_extensions:
                body["include_stop_str_in_output"] = True  # keep the tag: the tokens were sampled
        if params.seed is not None:
            body["seed"] = request_seed(params.seed, index)
        return {**body, **self.extra_body}

    def _complete(self, prompt_ids: list[int], params: SamplingParams, index: int) -> Generation:
        try:
            choice = self._post(
                "/completions", {**self._body(params, index), "prompt": list(prompt_ids), "logprobs": 1}
            )
        except OpenAIPolicyError as error:
            return Generation("", error=str(error))
        text = choice.get("text") or ""
        ids = choice.get("token_ids")
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs")
        if ids is None:
            ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if logprobs is None or len(logprobs) != len(ids):
            logprobs = [0.0] * len(ids)
        return Generation(text, list(ids), [float(x or 0.0) for x in logprobs], _reason(choice))

    def _chat(
        self, messages: list[Message], tools: list[dict] | None, params: SamplingParams, index: int
    ) -> Generation:
        body = {**self._body(params, index), "messages": messages, "logprobs": True}
        if tools:
            body["tools"] = tools
        try:
            choice = self._post("/chat/completions", body)
        except OpenAIPolicyError as error:
            return Generation("", error=str(error))
        message = choice.get("message") or {}
        content = (choice.get("logprobs") or {}).get("content") or []
        ids = choice.get("token_ids") or []
        logprobs = [float(entry.get("logprob", 0.0)) for entry in content]
        if len(logprobs) != len(ids):
            logprobs = logprobs if not ids else [0.0] * len(ids)
        action = None
        if message.get("tool_calls"):  # structured function calls: the env gets the whole assistant message
            action = {"role": "assistant", "content": message.get("content"), "tool_calls": message["tool_calls"]}
        return Generation(message.get("content") or "", list(ids), logprobs, _reason(choice), action)

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The first choice of the server's answer; retries what may pass on a second try, raises
        :class:`OpenAIPolicyError` for the rest."""
        import httpx

        url = f"{self.base_url}{path}"
        delay, last = 0.5, "no attempt made"
        for attempt in range(1, self.max_retries + 2):
            try:
                response = self._client.post(url, json=body)
            except httpx.TransportError as error:
                last = f"{type(error).__name__}: {error}"
            else:
                if response.status_code == 200:
                    return _first_choice(url, response)
                last = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in RETRY_STATUS:
                    raise OpenAIPolicyError(f"POST {url} was refused: {last}")
            if attempt <= self.max_retries:
                time.sleep(delay)
                delay *= 2
        raise OpenAIPolicyError(f"POST {url} failed after {self.max_retries + 1} attempts: {last}")


def _first_choice(url: str, response: Any) -> dict[str, Any]:
    try:
        return response.json()["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise OpenAIPolicyError(f"POST {url} answered without a choice: {response.text[:300]}") from None


def _reason(choice: dict[str, Any]) -> str:
    return "length" if choice.get("finish_reason") == "length" else "stop"

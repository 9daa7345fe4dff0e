"""An LLM judge over any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, SGLang, OpenAI, the
project's own ``envgym serve model``).

Pointwise scoring: the judge model reads a rubric, the question, an optional reference answer and the
response, and ends its reply with ``{"score": N}`` (0..``scale``); the score returned is ``N / scale`` in [0, 1].

Relative (group) scoring, as RULER does: the judge reads all G responses to one question in one request and
scores each against the others, ending with ``{"scores": [N1, ..., NG]}`` (:meth:`Judge.score_group`); a reply
that misses a response, or scores one out of range, counts as no score.

Inputs are data, never instructions (:mod:`envgym.verifiers.judge_prompt`): every input sits in an escaped data
block, the reply is read from its final JSON object, and a response that writes the judge's grammar, imitates
the prompt or addresses the grader is never sent and scores 0 (``Judgement.withheld`` says why; in a group it is
replaced by :data:`WITHHELD`).

Failure policy:
- transport errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with exponential backoff, then
  raise :class:`JudgeError` (outside the policy's reach: the caller drops the episode);
- other HTTP errors (400, 401, 404) raise :class:`JudgeError` at once (retrying cannot fix them);
- a reply without a parsable score is asked again (up to ``retries`` times), then returned as a
  :class:`Judgement` with ``score=None``: the response broke the judge's reply, and the reward spec scores it
  as the policy's failure (0, counted).

Graded examples (``{question, reference, response, score}``) are rendered in the same blocks and reply format
as the requests and sent between the system prompt and every pointwise request: a small judge copies the reply
format from them.

Judgements are cached (LRU, thread-safe) by (model, rubric, question, response, reference), including a
final "no score" after all retries: RL groups resubmit identical responses, and a cached verdict costs
nothing. Failures (:class:`JudgeError`) are never cached.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from envgym.verifiers.judge_prompt import (
    check_examples,
    example_messages,
    parse_group_scores,
    parse_score,
    system_prompt,
    user_message,
    withheld_reason,
)

DEFAULT_RUBRIC = (
    "You are a strict grader. Judge whether the response answers the question correctly and completely. "
    "If a reference answer is given, the response must agree with it; wording may differ. "
    "Explain briefly, then give the score: 0 (wrong) to {scale} (fully correct)."
)
DEFAULT_GROUP_RUBRIC = (
    "You are a strict grader. Several responses to the same question follow, numbered from 1. Judge each for "
    "correctness and completeness, comparing them with each other; if a reference answer is given, a response "
    "must agree with it. Explain briefly, then score each response: 0 (wrong) to {scale} (fully correct)."
)
DEFAULT_STEP_RUBRIC = (
    "You are a strict grader of reasoning steps. The response to grade is the solution so far; judge only its "
    "last step: is it correct and does it follow from the question and the steps before it? "
    "Explain briefly, then give the score: 0 (wrong) to {scale} (correct)."
)
WITHHELD = "[withheld: this response wrote a grade of its own or addressed the grader]"
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class JudgeError(RuntimeError):
    """The judge endpoint could not be reached or refused the request (after retries where they help)."""


@dataclasses.dataclass(frozen=True)
class Judgement:
    """``score`` in [0, 1], or None if the judge's reply had no parsable score; ``reply`` is its raw text.
    ``withheld``: why the response was never sent (it then scores 0), or None."""

    score: float | None
    reply: str
    attempts: int
    cached: bool = False
    withheld: str | None = None


@dataclasses.dataclass(frozen=True)
class GroupJudgement:
    """``scores[k]`` in [0, 1] for response k, or ``scores=None`` if the reply did not score every response.
    ``withheld[k]``: why response k was never sent (it scores 0), or None."""

    scores: tuple[float, ...] | None
    reply: str
    attempts: int
    cached: bool = False
    withheld: tuple[str | None, ...] = ()


class Judge:
    """Pointwise rubric judge. ``base_url`` ends in ``/v1`` (e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        rubric: str = DEFAULT_RUBRIC,
        group_rubric: str = DEFAULT_GROUP_RUBRIC,
        scale: int = 10,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
        max_tokens: int = 512,
        temperature: float = 0.0,
        cache_size: int = 4096,
        examples: Sequence[Mapping[str, Any]] = (),
        json_mode: bool = False,
        http_client: httpx.Client | None = None,
    ):
        if scale < 1:
            raise ValueError(f"scale must be >= 1, got {scale}")
        if retries < 0 or timeout <= 0:
            raise ValueError(f"need retries >= 0 and timeout > 0, got retries={retries}, timeout={timeout}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.rubric, self.group_rubric, self.scale = model, rubric, group_rubric, scale
        self.retries, self.backoff = retries, backoff
        self.max_tokens, self.temperature = max_tokens, temperature
        self.examples = example_messages(check_examples(examples), scale)
        self.json_mode = json_mode
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.timeout = httpx.Timeout(timeout)
        self._client = http_client or httpx.Client(timeout=self.timeout, headers=self.headers)
        self._cache: collections.OrderedDict[tuple, Judgement] = collections.OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _ask(self, body: dict[str, Any], parse: Callable[[str], Any]) -> tuple[str, int, Any]:
        """Post ``body`` until ``parse`` reads the reply (``retries`` more times at most): the last reply, the
        number of attempts and what was read (``None`` if no reply could be read)."""
        reply, parsed = "", None
        for attempt in range(1, self.retries + 2):
            reply = self._post(body)
            parsed = parse(reply)
            if parsed is not None:
                return reply, attempt, parsed
        return reply, self.retries + 1, None

    # --- public API -------------------------------------------------------------------------------
    def score(self, question: str, response: str, reference: str | None = None) -> Judgement:
        """Judge one response (blocking; thread-safe)."""
        withheld = withheld_reason(response)
        if withheld is not None:
            return Judgement(0.0, WITHHELD, 0, withheld=withheld)
        key = self._key(question, response, reference)
        cached = self._cached(key)
        if cached is not None:
            return cached
        body = self.request_body(question, response, reference)
        reply, attempts, score = self._ask(body, lambda text: parse_score(text, self.scale))
        return self._store(key, Judgement(score, reply, attempts))

    def score_group(self, question: str, responses: list[str], reference: str | None = None) -> GroupJudgement:
        """Judge the G responses to one question relative to each other, in one request (blocking; thread-safe).
        A reply that does not score every response is asked again (up to ``retries`` times), then returned with
        ``scores=None``; an endpoint failure raises :class:`JudgeError`."""
        if not responses:
            raise ValueError("score_group needs at least one response")
        withheld = tuple(withheld_reason(response) for response in responses)
        responses = [WITHHELD if hidden else response for response, hidden in zip(responses, withheld)]
        key = ("group", self.model, self.group_rubric, self.scale, question, tuple(responses), reference)
        judgement = self._cached(key)
        if judgement is None:
            body = self.group_request_body(question, responses, reference)
            reply, attempts, scores = self._ask(body, lambda text: parse_group_scores(text, len(responses), self.scale))
            judgement = self._store(key, GroupJudgement(scores, reply, attempts))
        if judgement.scores is None:
            return dataclasses.replace(judgement, withheld=withheld)
        return dataclasses.replace(
            judgement,
            scores=tuple(0.0 if hidden else score for score, hidden in zip(judgement.scores, withheld)),
            withheld=withheld,
        )

    async def ascore(self, question: str, response: str, reference: str | None = None) -> Judgement:
        """Judge one response from asyncio (its own ``httpx.AsyncClient`` per call; many run concurrently)."""
        withheld = withheld_reason(response)
        if withheld is not None:
            return Judgement(0.0, WITHHELD, 0, withheld=withheld)
        key = self._key(question, response, reference)
        cached = self._cached(key)
        if cached is not None:
            return cached
        body = self.request_body(question, response, reference)
        reply, attempts, score = "", 0, None
        async with httpx.AsyncClient(timeout=self.timeout, headers=self.headers) as client:
            for attempt in range(self.retries + 1):
                attempts = attempt + 1
                reply = await self._apost(client, body)
                score = parse_score(reply, self.scale)
                if score is not None:
                    break
        return self._store(key, Judgement(score, reply, attempts))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------------
    def request_body(self, question: str, response: str, reference: str | None = None) -> dict[str, Any]:
        """The chat-completion request sent for one judgement (log it to audit the judge)."""
        system = system_prompt(self.rubric, self.scale, group=False)
        user = user_message(question, [response], reference, numbered=False)
        return self._body([{"role": "system", "content": system}, *self.examples, {"role": "user", "content": user}])

    def group_request_body(self, question: str, responses: list[str], reference: str | None = None) -> dict[str, Any]:
        """The chat-completion request of one relative judgement of a group (the graded examples are pointwise, so
        they are not shown here: they would teach the other reply format)."""
        system = system_prompt(self.group_rubric, self.scale, group=True)
        user = user_message(question, responses, reference, numbered=True)
        return self._body([{"role": "system", "content": system}, {"role": "user", "content": user}])

    def _body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if self.json_mode:  # vLLM, SGLang and OpenAI then constrain the reply to JSON
            body["response_format"] = {"type": "json_object"}
        return body

    def _post(self, body: dict[str, Any]) -> str:
        for attempt in range(self.retries + 1):
            try:
                reply, failure = self._outcome(self._client.post(self.url, json=body))
            except httpx.TransportError as error:  # connect errors and timeouts
                reply, failure = None, f"{type(error).__name__}: {error}"
            if reply is not None:
                return reply
            if attempt < self.retries:
                time.sleep(self.backoff * 2**attempt)
        raise JudgeError(f"the judge at {self.url} failed after {self.retries + 1} attempts: {failure}")

    async def _apost(self, client: httpx.AsyncClient, body: dict[str, Any]) -> str:
        for attempt in range(self.retries + 1):
            try:
                reply, failure = self._outcome(await client.post(self.url, json=body))
            except httpx.TransportError as error:
                reply, failure = None, f"{type(error).__name__}: {error}"
            if reply is not None:
                return reply
            if attempt < self.retries:
                await asyncio.sleep(self.backoff * 2**attempt)
        raise JudgeError(f"the judge at {self.url} failed after {self.retries + 1} attempts: {failure}")

    def _outcome(self, result: httpx.Response) -> tuple[str | None, str]:
        """``(reply, "")`` for a 200, ``(None, why)`` for a failure worth retrying; raises for one that is not."""
        if result.status_code == 200:
            return _reply_text(result), ""
        failure = f"HTTP {result.status_code}: {result.text[:200]}"
        if result.status_code not in _RETRY_STATUS:
            raise JudgeError(f"the judge at {self.url} refused the request: {failure}")
        return None, failure

    def _key(self, question: str, response: str, reference: str | None) -> tuple:
        return (self.model, self.rubric, self.scale, question, response, reference)

    def _cached(self, key: tuple) -> Any:
        with self._lock:
            found = self._cache.get(key)
            if found is None:
                return None
            self._cache.move_to_end(key)
            return dataclasses.replace(found, cached=True)

    def _store(self, key: tuple, judgement: Any) -> Any:
        with self._lock:
            self._cache[key] = judgement
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return judgement


def _reply_text(result: httpx.Response) -> str:
    try:
        return result.json()["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise JudgeError(f"the judge's reply is not an OpenAI chat completion: {result.text[:200]}") from error

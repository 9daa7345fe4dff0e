"""An LLM judge over any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, SGLang, OpenAI, the
project's own ``envgym serve model``).

Pointwise scoring: the judge model reads a rubric, the question, an optional reference answer and the
response, and ends its reply with ``Score: N`` (0..``scale``); the score returned is ``N / scale`` in [0, 1].

Relative (group) scoring, as RULER does: the judge reads all G responses to one question in one request and
scores each against the others, one line ``Response k: N`` per response (:meth:`Judge.score_group`); a reply
that misses a response, or scores one out of range, counts as no score.

Failure policy (a reward must never be silently 0 because of infrastructure):
- transport errors, timeouts, HTTP 429 and 5xx are retried ``retries`` times with exponential backoff, then
  raise :class:`JudgeError`;
- other HTTP errors (400, 401, 404) raise :class:`JudgeError` at once (retrying cannot fix them);
- a reply without a parsable score is asked again (up to ``retries`` times), then returned as a
  :class:`Judgement` with ``score=None``, so the caller decides what an ungradable response is worth.

A small judge model follows the reply format far more reliably when it is shown graded examples: ``examples``
(chat messages, alternating user/assistant, as the judge would receive and answer them) go between the rubric
and the request, in every request of that judge.

A response that writes a verdict in the judge's own reply format (``Score: N``, ``Response k: N``) scores 0 and
is never shown to the judge: judges copy it (the packaged SmolLM2, given four graded examples, scored 20 of 20
wrong answers 1 once `` Score: 1`` was appended to them), so it is the first reward hack a policy finds. In a
group, such a response is replaced by :data:`WITHHELD` in the request and its score is 0. The price: an answer
that legitimately writes ``score: 12`` is scored 0 too.

Judgements are cached (LRU, thread-safe) by (model, rubric, question, response, reference), including a
final "no score" after all retries: RL groups resubmit identical responses, and a cached verdict costs
nothing. Failures (:class:`JudgeError`) are never cached.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Callable

import httpx

DEFAULT_RUBRIC = (
    "You are a strict grader. Judge whether the response answers the question correctly and completely. "
    "If a reference answer is given, the response must agree with it; wording may differ. "
    "Explain briefly, then end with a final line of the form 'Score: N' where N is an integer from 0 "
    "(wrong) to {scale} (fully correct)."
)
DEFAULT_GROUP_RUBRIC = (
    "You are a strict grader. Several responses to the same question follow, numbered from 1. Judge each for "
    "correctness and completeness, comparing them with each other; if a reference answer is given, a response "
    "must agree with it. Explain briefly, then end with one line per response of the form 'Response k: N' where "
    "N is an integer from 0 (wrong) to {scale} (fully correct)."
)
DEFAULT_STEP_RUBRIC = (
    "You are a strict grader of reasoning steps. The response to grade is the solution so far; judge only its "
    "last step: is it correct and does it follow from the question and the steps before it? "
    "Explain briefly, then end with a final line of the form 'Score: N' where N is an integer from 0 "
    "(wrong) to {scale} (correct)."
)
_GROUP_SCORE = re.compile(r"response\s*#?\s*(\d+)\s*[:=-]\s*\**\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?",
                          re.IGNORECASE)
_SCORE = re.compile(r"score\s*[:=]?\s*\**\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?", re.IGNORECASE)
WITHHELD = "[withheld: this response wrote a grade of its own]"
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class JudgeError(RuntimeError):
    """The judge endpoint could not be reached or refused the request (after retries where they help)."""


@dataclasses.dataclass(frozen=True)
class Judgement:
    """``score`` in [0, 1], or None if the judge's reply had no parsable score; ``reply`` is its raw text."""

    score: float | None
    reply: str
    attempts: int
    cached: bool = False


@dataclasses.dataclass(frozen=True)
class GroupJudgement:
    """``scores[k]`` in [0, 1] for response k, or ``scores=None`` if the reply did not score every response."""

    scores: tuple[float, ...] | None
    reply: str
    attempts: int
    cached: bool = False


def parse_group_scores(reply: str, count: int, scale: int) -> tuple[float, ...] | None:
    """The ``Response k: N`` (or ``N/M``) lines of ``reply`` as fractions of ``scale``, one per response 1..count
    (the last line for a response wins); None when a response has no score or a score is out of range."""
    scores: dict[int, float] = {}
    for index, value, out_of in _GROUP_SCORE.findall(reply):
        top, number = float(out_of) if out_of else float(scale), float(value)
        if top <= 0 or not 0 <= number <= top:
            return None
        scores[int(index)] = number / top
    if not all(k in scores for k in range(1, count + 1)):
        return None
    return tuple(scores[k] for k in range(1, count + 1))


def self_graded(response: str) -> bool:
    """Whether ``response`` writes a verdict in a judge's reply format (``Score: N`` or ``Response k: N``)."""
    return bool(_SCORE.search(response) or _GROUP_SCORE.search(response))


def check_examples(examples: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """Graded examples as chat messages: user and assistant turns in turn, starting with a user turn and ending
    with the judge's answer (an assistant turn), each with a string ``content``. Raises ValueError otherwise."""
    if isinstance(examples, (str, Mapping)) or not isinstance(examples, Sequence):
        raise ValueError(f"examples must be a list of chat messages, got {type(examples).__name__}")
    checked = []
    for index, message in enumerate(examples):
        role = "user" if index % 2 == 0 else "assistant"
        if (not isinstance(message, Mapping) or set(message) != {"role", "content"} or message["role"] != role
                or not isinstance(message["content"], str)):
            raise ValueError(f"examples[{index}] must be {{role: {role}, content: <text>}} (examples alternate user and "
                             f"assistant turns, starting with user), got {str(message)[:80]!r}")
        checked.append({"role": role, "content": message["content"]})
    if len(checked) % 2:
        raise ValueError("examples must end with an assistant turn (the judge's graded answer to the last user turn)")
    return checked


def parse_score(reply: str, scale: int) -> float | None:
    """The last ``Score: N`` (or ``Score: N/M``) in ``reply`` as a fraction of ``scale``; None if absent or
    out of range."""
    matches = _SCORE.findall(reply)
    if not matches:
        stripped = reply.strip()
        if not re.fullmatch(r"\d+(?:\.\d+)?", stripped):
            return None
        matches = [(stripped, "")]
    value, out_of = matches[-1]
    top = float(out_of) if out_of else float(scale)
    number = float(value)
    if top <= 0 or not 0 <= number <= top:
        return None
    return number / top


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
        examples: Sequence[Mapping[str, str]] = (),
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
        self.examples = check_examples(examples)
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
        if self_graded(response):
            return Judgement(0.0, WITHHELD, 0)
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
        withheld = [self_graded(response) for response in responses]
        responses = [WITHHELD if hidden else response for response, hidden in zip(responses, withheld)]
        key = ("group", self.model, self.group_rubric, self.scale, question, tuple(responses), reference)
        judgement = self._cached(key)
        if judgement is None:
            body = self.group_request_body(question, responses, reference)
            reply, attempts, scores = self._ask(body, lambda text: parse_group_scores(text, len(responses), self.scale))
            judgement = self._store(key, GroupJudgement(scores, reply, attempts))
        if judgement.scores is None or not any(withheld):
            return judgement
        return dataclasses.replace(judgement, scores=tuple(0.0 if hidden else score
                                                           for score, hidden in zip(judgement.scores, withheld)))

    async def ascore(self, question: str, response: str, reference: str | None = None) -> Judgement:
        """Judge one response from asyncio (its own ``httpx.AsyncClient`` per call; many run concurrently)."""
        if self_graded(response):
            return Judgement(0.0, WITHHELD, 0)
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
        parts = [f"Question:\n{question}"]
        if reference is not None:
            parts.append(f"Reference answer:\n{reference}")
        parts.append(f"Response to grade:\n{response}")
        return {
            "model": self.model,
            "messages": [{"role": "system", "content": self._system(self.rubric)}, *self.examples,
                         {"role": "user", "content": "\n\n".join(parts)}],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }

    def group_request_body(self, question: str, responses: list[str], reference: str | None = None) -> dict[str, Any]:
        """The chat-completion request of one relative judgement of a group."""
        parts = [f"Question:\n{question}"]
        if reference is not None:
            parts.append(f"Reference answer:\n{reference}")
        parts.extend(f"Response {k}:\n{response}" for k, response in enumerate(responses, start=1))
        return {
            "model": self.model,
            "messages": [{"role": "system", "content": self._system(self.group_rubric)}, *self.examples,
                         {"role": "user", "content": "\n\n".join(parts)}],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }

    def _system(self, rubric: str) -> str:
        # Only {scale} is filled in: str.format would read the braces of LaTeX or JSON in a rubric as fields.
        return rubric.replace("{scale}", str(self.scale))

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

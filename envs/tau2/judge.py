"""τ²'s judge of natural-language assertions ("the agent refused to book a basic-economy change"), over any
OpenAI-compatible endpoint instead of τ²'s litellm call.

The prompt is τ²'s (:func:`envgym.envs.tau2.prompts.nl_judge_messages`); the judge answers a JSON object with one
``{"expectedOutcome", "reasoning", "metExpectation"}`` per assertion, and the result is 1 when every assertion is
met (τ²'s rule). Two things are stricter than τ²: a reply wrapped in a code fence is read (τ² would fail on it),
and a reply that does not judge every assertion is asked again instead of counting the missing ones as met. A
judge that gives no usable reply after its retries raises :class:`~envgym.users.EndpointError`, which the env
reports as the episode's ``info["error"]``: an unreadable judge is never a score.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tau2.data_model.message import Message as Tau2Message

from envgym.envs.tau2.prompts import nl_judge_messages
from envgym.users import ChatEndpoint, EndpointError

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class AssertionJudge:
    """Judges a trajectory against natural-language assertions (keywords: :class:`~envgym.users.ChatEndpoint`'s;
    ``retries`` also bounds the re-asks after unreadable replies)."""

    def __init__(self, base_url: str, model: str, **endpoint: Any):
        endpoint.setdefault("max_tokens", 1024)
        self.endpoint = ChatEndpoint(base_url, model, **endpoint)

    def judge(self, trajectory: list[Tau2Message], assertions: list[str]) -> list[dict[str, Any]]:
        """One ``{"assertion", "met", "reasoning"}`` per assertion, in order."""
        messages = nl_judge_messages(trajectory, assertions)
        reply = ""
        for _ in range(self.endpoint.retries + 1):
            reply = self.endpoint.complete(messages).get("content") or ""
            verdicts = read_verdicts(reply, len(assertions))
            if verdicts is not None:
                return [
                    {"assertion": assertion, "met": met, "reasoning": reasoning}
                    for assertion, (met, reasoning) in zip(assertions, verdicts)
                ]
        raise EndpointError(
            f"the assertion judge at {self.endpoint.url} did not judge all {len(assertions)} assertion(s) in "
            f"{self.endpoint.retries + 1} attempt(s); last reply: {reply[:200]!r}"
        )


def read_verdicts(reply: str, count: int) -> list[tuple[bool, str]] | None:
    """``(met, reasoning)`` for each of ``count`` assertions from the judge's reply, or ``None`` if it does not
    judge exactly ``count`` of them with a boolean each."""
    match = _JSON_OBJECT.search(reply)
    if match is None:
        return None
    try:
        results = json.loads(match.group(0)).get("results")
    except (ValueError, AttributeError):
        return None
    if not isinstance(results, list) or len(results) != count:
        return None
    verdicts = []
    for result in results:
        if not isinstance(result, dict) or not isinstance(result.get("metExpectation"), bool):
            return None
        verdicts.append((result["metExpectation"], str(result.get("reasoning", ""))))
    return verdicts

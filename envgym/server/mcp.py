"""`envgym serve tools ENV_ID`: the tools of an envgym tool env as an MCP server (stdio or streamable HTTP).

Any MCP client (an agent framework, an IDE, the ``mcp`` SDK's ``ClientSession``) then lists the env's tools
with their JSON schemas and calls them. Tools of a stateful env act on an episode (ShopOrders' database,
MultiHopQA's corpus), so each MCP session gets its own episode: the env is built and reset (``seed``,
``task_index``) when the session starts and closed when it ends. Its calls run one at a time on a thread of
the episode's own, because envs are not thread-safe. The task's prompt is the server's ``instructions``.

What is served is the tools, not the episode: there is no reward over MCP (the env grades a final answer in
``step``, which MCP has no place for); play episodes through ``envgym serve env`` for that.

``mcp`` is imported inside the functions, so importing this module needs none of it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

READY_LINE = "envgym tools server listening on"


class EpisodeTools:
    """One episode of ``env_id`` and its tools, living on a thread of its own."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any], seed: int | None, task_index: int | None):
        self.env_id, self.env_kwargs, self.seed, self.task_index = env_id, env_kwargs, seed, task_index
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="envgym-mcp-episode")
        self.env: Any = None
        self.tools: dict[str, Any] = {}
        self.messages: list[dict[str, Any]] = []

    def open(self) -> EpisodeTools:
        """Build the env and start its episode (call on the episode's thread: see :meth:`aopen`)."""
        import envgym
        from envgym.tools import ToolEnv

        env = envgym.make(self.env_id, **self.env_kwargs)
        tool_env = env.unwrapped
        if not isinstance(tool_env, ToolEnv):
            env.close()
            raise ValueError(
                f"{self.env_id} has no tools to serve: it is not built on envgym.tools.ToolEnv "
                f"(tools/ShopOrders-v0 and search/MultiHopQA-v0 are)"
            )
        options = {"task_index": self.task_index} if self.task_index is not None else None
        self.messages, _ = env.reset(seed=self.seed, options=options)
        self.env, self.tools = env, tool_env.tools
        return self

    async def aopen(self) -> EpisodeTools:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self.open)

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        tool = self.tools.get(name)
        if tool is None:
            raise ValueError(f"there is no tool named {name!r}; the tools are {', '.join(self.tools)}")
        return await asyncio.get_running_loop().run_in_executor(self._thread, tool.call, arguments)

    async def aclose(self) -> None:
        if self.env is not None:
            await asyncio.get_running_loop().run_in_executor(self._thread, self.env.close)
        self._thread.shutdown(wait=False)

    def instructions(self) -> str:
        prompt = "\n\n".join(f"{m['role']}: {m.get('content') or ''}" for m in self.messages)
        return (
            f"The tools of the envgym env {self.env_id}, acting on one episode of it. The task of that "
            f"episode:\n\n{prompt}"
        )


def tools_server(
    env_id: str, *, env_kwargs: dict[str, Any] | None = None, seed: int | None = 0, task_index: int | None = None
) -> Any:
    """The MCP server (``mcp.server.lowlevel.Server``) of ``env_id``'s tools; each session plays its own
    episode of the env built with ``env_kwargs`` and reset with ``seed`` and ``task_index``.

    One episode is built here first, so a wrong id, kwargs or an env without tools fail before serving."""
    from mcp import types
    from mcp.server.lowlevel import Server

    env_kwargs = dict(env_kwargs or {})
    probe = EpisodeTools(env_id, env_kwargs, seed, task_index).open()
    listed = [
        types.Tool(name=tool.name, description=tool.description, inputSchema=tool.parameters)
        for tool in probe.tools.values()
    ]
    instructions = probe.instructions()
    probe.env.close()

    @contextlib.asynccontextmanager
    async def episode_per_session(server: Any) -> AsyncIterator[EpisodeTools]:
        episode = await EpisodeTools(env_id, env_kwargs, seed, task_index).aopen()
        try:
            yield episode
        finally:
            await episode.aclose()

    server: Any = Server(f"envgym {env_id}", instructions=instructions, lifespan=episode_per_session)

    @server.list_tools()
    async def list_tools() -> list[Any]:
        return listed

    # envgym's own argument check (Tool.validate) answers bad calls, in words that teach the schema.
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[Any]:
        episode: EpisodeTools = server.request_context.lifespan_context
        return [types.TextContent(type="text", text=await episode.call(name, arguments))]

    return server


def tools_http_app(server: Any, host: str = "127.0.0.1") -> Any:
    """An ASGI app serving ``server`` over MCP's streamable HTTP at ``/mcp``. On a loopback host, requests
    must name a loopback Host and Origin (the SDK's DNS-rebinding protection, as FastMCP sets it)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    security = None
    if host in ("127.0.0.1", "localhost", "::1"):
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    sessions = StreamableHTTPSessionManager(app=server, security_settings=security)

    class Endpoint:  # a class, so Starlette's Route hands it the raw ASGI call
        async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
            await sessions.handle_request(scope, receive, send)

    return Starlette(routes=[Route("/mcp", endpoint=Endpoint())], lifespan=lambda app: sessions.run())


async def serve_stdio(server: Any) -> None:
    """Serve ``server`` on this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

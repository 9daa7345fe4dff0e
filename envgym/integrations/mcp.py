"""MCPTools: the tools of any MCP server as envgym :class:`~envgym.tools.Tool` objects, for a ToolEnv.

    with MCPTools.stdio("python", ["calculator_server.py"]) as mcp:      # or MCPTools.http("http://host/mcp")
        env = ToolEnv(envgym.make("math/Arithmetic-v0"), mcp.tools, prompt_format="json")

One MCPTools holds one MCP session (``mcp`` SDK's ``ClientSession`` over stdio or streamable HTTP) open on an
event loop of its own, in a background thread, so the tools are plain synchronous callables: ToolEnv calls
them from any thread, inside or outside an event loop. Each tool keeps the server's name, description and
input schema (names with characters envgym's tools do not allow, such as ``.``, get ``_`` in their place and
still call the server's name).

Failures keep the envgym contract: a call the server answers as a tool error (``isError``, or bad
arguments) is raised as :class:`MCPToolError`, which ToolEnv shows the agent as an observation; a server that
dies, times out or cannot be reached raises :class:`~envgym.tools.ToolUnavailable`, which ToolEnv lets
through, so a broken server is an error, never a reward of 0.
"""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import contextlib
import re
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from envgym.tools import Tool, ToolUnavailable

_AGENT_ERRORS = (-32602, -32601)  # JSON-RPC invalid params, method not found: the call was wrong, not the server


class MCPToolError(RuntimeError):
    """The MCP server answered the call as a tool error (the agent sees the message)."""


class MCPTools:
    """The tools of one MCP server, over one open session. Build with :meth:`stdio` or :meth:`http`; close
    with :meth:`close` (or use it as a context manager).

    timeout_s: how long connecting, and each call, may take before the server counts as unavailable.
    """

    def __init__(self, transport: Callable[[], Any], description: str, *, timeout_s: float = 60.0):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self.description, self.timeout_s = description, timeout_s
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="envgym-mcp-client", daemon=True)
        self._thread.start()
        self._closing: asyncio.Event | None = None
        self._session: Any = None
        ready: concurrent.futures.Future = concurrent.futures.Future()
        self._owner = asyncio.run_coroutine_threadsafe(self._hold(transport, ready), self._loop)
        try:
            listed = ready.result(timeout=timeout_s)
        except BaseException as error:
            self.close()
            if isinstance(error, concurrent.futures.TimeoutError):
                raise ToolUnavailable(f"MCP server {description} did not answer within {timeout_s:g}s") from None
            raise ToolUnavailable(f"could not open an MCP session with {description}: {_reason(error)}") from error
        self.tools: list[Tool] = [self._tool(entry) for entry in listed]

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout_s: float = 60.0,
    ) -> MCPTools:
        """Start ``command args`` and speak MCP over its stdin/stdout (``env``: its environment; default: the
        SDK's safe subset of this one)."""
        from mcp.client.stdio import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(command=command, args=list(args), env=env, cwd=cwd)
        return cls(lambda: stdio_client(parameters), f"`{' '.join([command, *args])}` (stdio)", timeout_s=timeout_s)

    @classmethod
    def http(cls, url: str, *, headers: dict[str, str] | None = None, timeout_s: float = 60.0) -> MCPTools:
        """Speak MCP's streamable HTTP with the server at ``url`` (usually ending in ``/mcp``)."""
        if not url.startswith(("http://", "https://")):
            raise ValueError(
                f"url must be the MCP server's http(s):// endpoint, e.g. http://127.0.0.1:8001/mcp, got {url!r}"
            )
        import httpx
        from mcp.client.streamable_http import streamable_http_client

        @contextlib.asynccontextmanager
        async def transport() -> Any:
            async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(timeout_s, read=timeout_s)) as client:
                async with streamable_http_client(url, http_client=client) as (read, write, _):
                    yield read, write

        return cls(transport, url, timeout_s=timeout_s)

    def close(self) -> None:
        """End the MCP session (and a stdio server's process) and stop the background loop."""
        if self._loop.is_closed():
            return
        if self._closing is not None:
            self._loop.call_soon_threadsafe(self._closing.set)
        with contextlib.suppress(BaseException):
            self._owner.result(timeout=self.timeout_s)
        self._owner.cancel()  # still connecting (a server that never answered): give up on it
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=self.timeout_s)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> MCPTools:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MCPTools({self.description}, tools={[tool.name for tool in getattr(self, 'tools', [])]})"

    # --- plumbing --------------------------------------------------------------------------------
    async def _hold(self, transport: Callable[[], Any], ready: concurrent.futures.Future) -> None:
        """Open the transport and the session, list the tools, and keep both open until :meth:`close`. One task
        enters and exits them all, as anyio's task groups inside the SDK require."""
        from mcp import ClientSession, types

        self._closing = asyncio.Event()
        try:
            async with transport() as (read, write):
                async with ClientSession(
                    read, write, read_timeout_seconds=timedelta(seconds=self.timeout_s)
                ) as session:
                    await session.initialize()
                    listed, cursor = [], None
                    while True:
                        page = await session.list_tools(
                            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                        )
                        listed += page.tools
                        cursor = page.nextCursor
                        if not cursor:
                            break
                    self._session = session
                    ready.set_result(listed)
                    await self._closing.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            elif not self._closing.is_set():
                raise
        finally:
            self._session = None

    def _tool(self, entry: Any) -> Tool:
        name = re.sub(r"[^A-Za-z0-9_-]", "_", entry.name)
        parameters = dict(entry.inputSchema or {})
        parameters.setdefault("type", "object")

        def call(**arguments: Any) -> str:
            return self._call(entry.name, arguments)

        call.__name__ = name
        return Tool(name=name, description=entry.description or "", parameters=parameters, function=call)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        from mcp.shared.exceptions import McpError

        session = self._session
        if session is None:
            raise ToolUnavailable(f"the MCP session with {self.description} is closed")
        if threading.current_thread() is self._thread:
            raise RuntimeError(
                "an MCP tool was called from MCPTools' own event loop thread; call it from another thread"
            )
        future = asyncio.run_coroutine_threadsafe(session.call_tool(name, arguments), self._loop)
        try:
            result = future.result(timeout=self.timeout_s + 5)
        except McpError as error:
            if error.error.code in _AGENT_ERRORS:
                raise MCPToolError(error.error.message) from None
            raise ToolUnavailable(f"MCP server {self.description} failed on {name}: {error.error.message}") from error
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolUnavailable(
                f"MCP server {self.description} did not answer {name} within {self.timeout_s:g}s"
            ) from None
        except Exception as error:  # the transport broke (server process gone, connection refused)
            raise ToolUnavailable(f"MCP server {self.description} failed on {name}: {_reason(error)}") from error
        text = _result_text(result)
        if result.isError:
            raise MCPToolError(text)
        return text


def _result_text(result: Any) -> str:
    """What the agent reads: the text parts, other parts as JSON, or the structured content."""
    parts = []
    for block in result.content:
        parts.append(block.text if getattr(block, "type", None) == "text" else block.model_dump_json(exclude_none=True))
    if not parts and result.structuredContent is not None:
        import json

        return json.dumps(result.structuredContent, ensure_ascii=False)
    return "\n".join(parts)


def _reason(error: BaseException) -> str:
    """The innermost causes of an error (anyio wraps transport failures in exception groups)."""
    if isinstance(error, getattr(builtins, "BaseExceptionGroup", ())):  # Python 3.11+; anyio groups on 3.10 too
        return "; ".join(_reason(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"

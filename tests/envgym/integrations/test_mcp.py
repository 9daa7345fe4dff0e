"""MCP both ways, with the mcp SDK as the peer: `envgym serve tools` answers the SDK's own client (stdio and
streamable HTTP), and MCPTools gives a ToolEnv the tools of a server built with the SDK's own FastMCP."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import anyio
import pytest

import envgym
from envgym.server.launch import app_in_thread
from envgym.tools import ToolEnv, ToolUnavailable

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from envgym.integrations.mcp import MCPToolError, MCPTools  # noqa: E402
from envgym.server.mcp import tools_http_app, tools_server  # noqa: E402

SHOP = "tools/ShopOrders-v0"
CALCULATOR = str(Path(__file__).with_name("mcp_calculator.py"))
TIMEOUT_S = 60


def shop_episode(seed: int):
    env = envgym.make(SHOP)
    env.reset(seed=seed)
    return env


def text(result) -> str:
    return "\n".join(block.text for block in result.content)


# --- envgym serve tools, judged by the SDK's client --------------------------------------------------------------


async def test_the_sdk_client_lists_and_calls_an_envs_tools_over_stdio():
    reference = shop_episode(seed=3)
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "envgym", "serve", "tools", SHOP, "--seed", "3"]
    )
    with anyio.fail_after(TIMEOUT_S):
        async with stdio_client(command) as (read, write), mcp.ClientSession(read, write) as session:
            initialized = await session.initialize()
            listed = (await session.list_tools()).tools
            orders = await session.call_tool("list_orders", {"customer_id": 1})
    tools = reference.unwrapped.tools
    assert reference.unwrapped.task.messages[-1]["content"] in initialized.instructions
    assert [(t.name, t.description, t.inputSchema) for t in listed] == [
        (t.name, t.description, t.parameters) for t in tools.values()
    ]
    assert not orders.isError and text(orders) == tools["list_orders"].call({"customer_id": 1})


async def test_serve_tools_over_http_prints_its_url_and_answers_the_sdk_client():
    from envgym.server.mcp import READY_LINE

    command = [sys.executable, "-m", "envgym", "serve", "tools", SHOP, "--transport", "http", "--port", "0"]
    with anyio.fail_after(TIMEOUT_S):
        async with await anyio.open_process(command) as process:
            try:
                line = b""
                while not line.endswith(b"\n"):
                    line += await process.stdout.receive(1)
                assert line.decode().startswith(READY_LINE)
                url = line.decode().split()[len(READY_LINE.split())]
                async with (
                    streamable_http_client(f"{url}/mcp") as (read, write, _),
                    mcp.ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    listed = (await session.list_tools()).tools
            finally:
                process.terminate()
    assert "place_order" in {tool.name for tool in listed}


async def test_a_bad_call_is_a_tool_error_in_envgyms_words():
    server = tools_server(SHOP, seed=3)
    with app_in_thread(tools_http_app(server)) as url, anyio.fail_after(TIMEOUT_S):
        async with streamable_http_client(f"{url}/mcp") as (read, write, _), mcp.ClientSession(read, write) as session:
            await session.initialize()
            wrong_type = await session.call_tool("list_orders", {"customer_id": "one"})
            no_such_tool = await session.call_tool("drop_tables", {})
    assert wrong_type.isError and "customer_id' must be integer" in text(wrong_type)
    assert no_such_tool.isError and "no tool named 'drop_tables'" in text(no_such_tool)


async def test_each_http_session_plays_its_own_episode():
    server = tools_server(SHOP, seed=3)

    async def orders_after(action: dict | None) -> list[dict]:
        async with streamable_http_client(f"{url}/mcp") as (read, write, _), mcp.ClientSession(read, write) as session:
            await session.initialize()
            if action is not None:
                await session.call_tool(action["name"], action["arguments"])
            return json.loads(text(await session.call_tool("list_orders", {"customer_id": 1})))

    with app_in_thread(tools_http_app(server)) as url, anyio.fail_after(TIMEOUT_S):
        cancelled = await orders_after({"name": "cancel_order", "arguments": {"order_id": 2}})
        untouched = await orders_after(None)
    assert [o["status"] for o in cancelled if o["order_id"] == 2] == ["cancelled"]
    assert [o["status"] for o in untouched if o["order_id"] == 2] == ["pending"]


def test_an_env_without_tools_is_refused_before_serving():
    with pytest.raises(ValueError, match="GuessNumber-v0 has no tools to serve"):
        tools_server("games/GuessNumber-v0")


# --- MCPTools, against the SDK's FastMCP ------------------------------------------------------------------------


def calculator_app():
    """A fresh calculator's streamable HTTP app (loaded from its file: the tests folder is not a package)."""
    spec = importlib.util.spec_from_file_location("mcp_calculator", CALCULATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build().streamable_http_app()


def test_mcptools_over_stdio_are_envgym_tools_with_the_servers_schemas():
    with MCPTools.stdio(sys.executable, [CALCULATOR], timeout_s=TIMEOUT_S) as server:
        tools = {tool.name: tool for tool in server.tools}
        assert set(tools) == {"add", "memory_store", "memory_recall"}  # "memory.store" made a valid envgym name
        assert tools["add"].parameters["required"] == ["a", "b"] and tools["add"].description == "Add two numbers."
        assert tools["add"].call({"a": 2, "b": 40}) == "42"
        assert tools["memory_store"].call({"key": "x", "value": 4}) == "stored x"
        assert tools["memory_recall"].call({"key": "x"}) == "4.0"  # the call reached the server's own name


def test_a_tool_error_on_the_server_is_an_mcp_tool_error():
    with MCPTools.stdio(sys.executable, [CALCULATOR], timeout_s=TIMEOUT_S) as server:
        recall = next(tool for tool in server.tools if tool.name == "memory_recall")
        with pytest.raises(MCPToolError, match="nothing stored under 'missing'"):
            recall.call({"key": "missing"})


def test_a_tool_env_takes_its_tools_from_an_mcp_server_over_http():
    from helpers.add_numbers import AddNumbers

    with app_in_thread(calculator_app()) as url, MCPTools.http(f"{url}/mcp", timeout_s=TIMEOUT_S) as server:
        env = ToolEnv(AddNumbers(), server.tools, prompt_format="json")
        messages, info = env.reset(seed=0)
        assert {schema["function"]["name"] for schema in info["tools"]} == {"add", "memory_store", "memory_recall"}
        a, b = (int(n) for n in re.findall(r"\d+", messages[-1]["content"]))
        call = json.dumps({"name": "add", "arguments": {"a": a, "b": b}})
        messages, _, terminated, _, info = env.step(f"<tool_call>{call}</tool_call>")
        assert messages[0]["role"] == "tool" and messages[0]["content"] == str(a + b) and not terminated
        _, reward, terminated, _, _ = env.step(f"<answer>{messages[0]['content']}</answer>")
    assert (reward, terminated) == (1.0, True)


def test_an_mcp_server_that_is_gone_is_tool_unavailable_never_an_observation():
    from helpers.add_numbers import AddNumbers

    with app_in_thread(calculator_app()) as url:
        server = MCPTools.http(f"{url}/mcp", timeout_s=3)  # a call to a stopped HTTP server waits for the timeout
    try:
        env = ToolEnv(AddNumbers(), server.tools, prompt_format="json")
        env.reset(seed=0)
        with pytest.raises(ToolUnavailable, match="failed on add|did not answer"):
            env.step('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>')
    finally:
        server.close()


def test_a_server_that_cannot_be_reached_is_tool_unavailable():
    with pytest.raises(ToolUnavailable, match="could not open an MCP session"):
        MCPTools.stdio(sys.executable, ["-c", "raise SystemExit(3)"], timeout_s=TIMEOUT_S)


def test_the_docs_examples_run(capsys):
    page = Path(__file__).resolve().parents[3] / "docs" / "mcp.md"
    namespace: dict = {"__name__": "docs_mcp"}
    for code in re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL):
        exec(compile(code, str(page), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "list_orders" in printed and "['search']" in printed and "Doc 1(Title:" in printed

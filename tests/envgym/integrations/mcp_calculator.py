"""A small MCP server built with the mcp SDK's own FastMCP, for the MCPTools tests.

`python mcp_calculator.py` serves one on stdin/stdout; tests call `build()` for one to serve over streamable
HTTP (a FastMCP's HTTP app can be started only once)."""

from mcp.server.fastmcp import FastMCP


def build() -> FastMCP:
    server = FastMCP("calculator", log_level="WARNING")
    memory: dict[str, float] = {}

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool(name="memory.store")
    def store(key: str, value: float) -> str:
        """Remember a number under a key (state that lives as long as the server)."""
        memory[key] = value
        return f"stored {key}"

    @server.tool(name="memory.recall")
    def recall(key: str) -> float:
        """The number stored under a key."""
        if key not in memory:
            raise KeyError(f"nothing stored under {key!r}")
        return memory[key]

    return server


if __name__ == "__main__":
    build().run("stdio")

"""A small MCP server for toolcall's tests, on the SDK's MCPServer (FastMCP in mcp 1.x).

Its tools each exercise one path: a name that clashes with the bundled `calculate`, a destructive
tool, a read-only one, an error result, a call that hangs, and one that kills the server.

    python fixture_server.py                  stdio
    python fixture_server.py --http PORT      streamable HTTP on 127.0.0.1:PORT
    python fixture_server.py --hang-at-start  never answers `initialize`
    python fixture_server.py --fail-at-start  writes a line to stderr and exits 1
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

NOTES = {"groceries": "eggs, rice, green tea", "plans": "visit Kyoto in April"}

server = MCPServer("fixture")


@server.tool(description="Evaluate an arithmetic expression (clashes with the bundled one).")
def calculate(expression: str) -> str:
    return f"fixture says {expression} is 42"


@server.tool(
    description="Read a note by its title.",
    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
)
def read_note(title: str) -> str:
    if title not in NOTES:
        raise ToolError(f"no note titled {title!r}; titles: {', '.join(NOTES)}")
    return NOTES[title]


@server.tool(
    description="Delete a note for good.",
    annotations=ToolAnnotations(destructive_hint=True),
)
def delete_note(title: str) -> str:
    return f"deleted {title}"


@server.tool(description="Look up a stock price (always fails: the exchange is closed).")
def stock_price(symbol: str) -> str:
    raise ToolError(f"the exchange is closed; no price for {symbol}")


@server.tool(description="Count to a number, slowly (never returns).")
def slow_count(to: int) -> str:
    time.sleep(3600)
    return str(to)


@server.tool(description="Restart the note service (kills this server).")
def restart_service() -> str:
    print("fixture: restarting, goodbye", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(description="Today's weather as data.", structured_output=True)
def weather_data(city: str) -> dict[str, object]:
    return {"city": city, "temperature_c": 21, "sky": "clear"}


def main(argv: list[str]) -> None:
    print("fixture: starting", file=sys.stderr, flush=True)
    if "--fail-at-start" in argv:
        print("fixture: cannot open the notes database", file=sys.stderr, flush=True)
        sys.exit(1)
    if "--hang-at-start" in argv:
        time.sleep(3600)
    if "--http" in argv:
        port = int(argv[argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
        return
    server.run()


if __name__ == "__main__":
    main(sys.argv[1:])

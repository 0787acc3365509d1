"""The `toolcall tools` listing: what is loaded, with its parameters and where it came from."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from toolcall_cli.tools.registry import Tool


def print_tool_table(tools: Sequence[Tool], console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    if not tools:
        console.print("No tools are loaded.")
        return
    if not console.is_terminal:
        # Piped: one line per tool, nothing cut to the width of a terminal that is not there.
        for tool in tools:
            console.print(
                f"{tool.spec.name}({parameter_list(tool)})  [{policy_words(tool)}]  {tool.source}",
                markup=False,
                soft_wrap=True,
            )
        return
    table = Table(title=f"{len(tools)} tools", title_justify="left", expand=False)
    table.add_column("name", style="bold cyan", no_wrap=True)
    table.add_column("parameters")
    table.add_column("description")
    table.add_column("policy", style="yellow")
    table.add_column("source", style="dim", overflow="fold")
    for tool in tools:
        params = parameter_list(tool)
        summary = tool.spec.description.splitlines()[0] if tool.spec.description else ""
        table.add_row(
            tool.spec.name, params, summary, policy_words(tool), short_source(tool.source)
        )
    console.print(table)


def policy_words(tool: Tool) -> str:
    """`read, timeout 5s, asks first`: what the execution layer enforces for this tool."""
    return ", ".join(tool.policy())


def parameter_list(tool: Tool) -> str:
    """`city, day?`: optional parameters are marked with `?`."""
    props = tool.spec.parameters.get("properties", {})
    required = set(tool.spec.parameters.get("required", []))
    return ", ".join(p if p in required else f"{p}?" for p in props)


def short_source(source: str) -> str:
    """`bundled: weather.py`, the path relative to the working dir when it is inside it, or
    `mcp:SERVER` for an MCP server's tool (or `built-in`): not a path."""
    from pathlib import Path

    if source.startswith("mcp:") or not source or source == "built-in":
        return source

    from toolcall_cli.tools.loader import bundled_tools_dir, display_path

    path = Path(source)
    if path.parent.resolve() == bundled_tools_dir().resolve():
        return f"bundled: {path.name}"
    return display_path(path)

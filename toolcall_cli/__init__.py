"""toolcall: watch, learn and debug LLM tool use (function calling) live in the terminal.

The library API is small: `tool` marks a function as a tool (optional: any typed function
will do), `ask` runs one question and yields its events, and `events` holds what it yields.
Everything else in the package is internal and may change. Each subpackage's `__init__` says
what it offers the rest of toolcall; a module named `_like_this` is its own package's business."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolcall_cli.tools.registry import tool
from toolcall_cli.version import __version__

if TYPE_CHECKING:
    from toolcall_cli import events
    from toolcall_cli.app.errors import AppError
    from toolcall_cli.app.library import ask

__all__ = ["AppError", "__version__", "ask", "events", "tool"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: `toolcall --help` does not need the session's machinery.
    if name == "ask":
        from toolcall_cli.app.library import ask

        return ask
    if name == "AppError":
        from toolcall_cli.app.errors import AppError

        return AppError
    if name == "events":
        import toolcall_cli.events as events

        return events
    raise AttributeError(f"module 'toolcall_cli' has no attribute {name!r}")

"""Renderers turn a run's events into output: a rich live view, plain lines, JSON lines or
just the answer.

Public here: `make_renderer`, `Renderer` and `RenderMode` (the renderers are in the private
`_live`, `_plain` and `_jsonl`), and the modules `base`, `explain`, and the views of one command
each: `doctor`, `kata`, `recorded`, `replay`, `serve_log`."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Literal, cast

from toolcall_cli.render.base import Renderer

if TYPE_CHECKING:
    from rich.console import Console

RenderMode = Literal["live", "plain", "json", "quiet"]

__all__ = ["RenderMode", "Renderer", "make_renderer"]


def make_renderer(
    mode: RenderMode,
    console_or_stream: Console | IO[str] | None = None,
    *,
    show_request: bool = False,
    auto_refresh: bool = True,
) -> Renderer:
    """The renderer for `mode`, writing to a rich Console or a text stream (default stdout).

    `show_request` prints each request body in the live view; `auto_refresh=False` makes the
    live view redraw only on events (for tests).
    """
    # Each renderer is imported when chosen: rich's live machinery costs a run piped to a file
    # or another program (plain, JSON, quiet) tens of milliseconds it never uses.
    if mode == "live":
        from rich.console import Console

        from toolcall_cli.render._live import LiveRenderer

        console = (
            console_or_stream
            if isinstance(console_or_stream, Console)
            else Console(file=console_or_stream)  # None: rich's own stdout
        )
        return LiveRenderer(console, show_request=show_request, auto_refresh=auto_refresh)
    stream = _stream(console_or_stream)
    if mode == "plain":
        from toolcall_cli.render._plain import PlainRenderer

        return PlainRenderer(stream, show_request=show_request)
    if mode == "json":
        from toolcall_cli.render._jsonl import JsonLinesRenderer

        return JsonLinesRenderer(stream)
    if mode == "quiet":
        from toolcall_cli.render._plain import QuietRenderer

        return QuietRenderer(stream)
    raise ValueError(f"unknown render mode: {mode!r}")


def _stream(target: Console | IO[str] | None) -> IO[str]:
    # Looked up at call time, not import time, so a redirected sys.stdout is honoured.
    if target is None:
        return sys.stdout
    # A rich Console writes to its file. Asked without loading rich: no Console exists before
    # rich.console is imported.
    rich_console = sys.modules.get("rich.console")
    if rich_console is not None and isinstance(target, rich_console.Console):
        return cast("IO[str]", target.file)
    return cast("IO[str]", target)

"""Renderers turn a run's events into output: a rich live view, plain lines, JSON lines or
just the answer."""

from __future__ import annotations

import sys
from typing import IO, Literal

from rich.console import Console

from toolcall_cli.render.base import Renderer
from toolcall_cli.render.jsonl import JsonLinesRenderer
from toolcall_cli.render.live import LiveRenderer
from toolcall_cli.render.plain import PlainRenderer, QuietRenderer

RenderMode = Literal["live", "plain", "json", "quiet"]

__all__ = [
    "JsonLinesRenderer",
    "LiveRenderer",
    "PlainRenderer",
    "QuietRenderer",
    "RenderMode",
    "Renderer",
    "make_renderer",
]


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
    if mode == "live":
        console = (
            console_or_stream
            if isinstance(console_or_stream, Console)
            else Console(file=console_or_stream)  # None: rich's own stdout
        )
        return LiveRenderer(console, show_request=show_request, auto_refresh=auto_refresh)
    stream = _stream(console_or_stream)
    if mode == "plain":
        return PlainRenderer(stream, show_request=show_request)
    if mode == "json":
        return JsonLinesRenderer(stream)
    if mode == "quiet":
        return QuietRenderer(stream)
    raise ValueError(f"unknown render mode: {mode!r}")


def _stream(target: Console | IO[str] | None) -> IO[str]:
    if isinstance(target, Console):
        return target.file
    # Looked up at call time, not import time, so a redirected sys.stdout is honoured.
    return target if target is not None else sys.stdout

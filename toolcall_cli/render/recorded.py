"""A recorded run drawn again as the live view drew it: for `trace show` (the terminal, an HTML
page, an SVG image) and for each failing run of `eval --html`."""

from __future__ import annotations

import io
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from toolcall_cli.events import Event
    from toolcall_cli.trace import Trace

SHOWN_WIDTH = 110
"""Columns of a page `--html` / `--svg` makes: wide enough for the view's panels."""


def local_time(when: str) -> str:
    """An ISO time as this machine's local `01-02 03:04` (the id holds the year)."""
    try:
        return datetime.fromisoformat(when).astimezone().strftime("%m-%d %H:%M")
    except ValueError:
        return when


def title_line(trace: Trace) -> str:
    """`trace 20250102-030405-a1b2c3 · run · toolcall 0.1.0 · 2025-01-02 03:04:05`."""
    parts = [f"trace {trace.path.stem}"]
    header = trace.header
    if header is None:
        parts.append("written before the format had a header (version 0)")
    else:
        parts += [
            str(header.get("command", "?")),
            f"toolcall {header.get('toolcall', '?')}",
            local_time(str(header.get("created", ""))),
        ]
        own = (header.get("settings") or {}).get("system_prompt")
        if isinstance(own, str):
            parts.append(f"own system prompt ({len(own):,} chars)")
    return " · ".join(parts)


def show_live(trace: Trace, events: Iterable[Event], console: Console) -> None:
    from rich.text import Text

    from toolcall_cli.render import make_renderer

    console.print(Text(title_line(trace), style="dim"))
    # On a terminal the live region is drawn at its own pace, not once per recorded delta;
    # elsewhere (a pipe, a page being recorded) it is never drawn at all.
    renderer = make_renderer("live", console, auto_refresh=console.is_terminal)
    try:
        for event in events:
            renderer.handle(event)
    finally:
        renderer.close()


def recording_console() -> Console:
    """A console that draws into memory, to be saved as a page or an image."""
    from rich.console import Console

    return Console(record=True, file=io.StringIO(), width=SHOWN_WIDTH, highlight=False)

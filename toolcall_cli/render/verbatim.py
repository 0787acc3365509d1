"""Text someone else wrote (the model, a tool, the code a kata grades), marked where a view
shows it: piped, the spaces at the ends of its lines are its own and stay (a Markdown hard
break is two of them), while those rich adds around it go (cli._running)."""

from __future__ import annotations

from rich.style import Style

VERBATIM = Style(meta={"verbatim": True})
"""No look of its own: it says only whose the text is, and is carried by its segments."""


def verbatim(style: str = "") -> Style:
    """`style`, on text that is shown as it was written."""
    return Style.parse(style) + VERBATIM if style else VERBATIM


def is_verbatim(style: Style | None) -> bool:
    return style is not None and style.meta.get("verbatim") is True

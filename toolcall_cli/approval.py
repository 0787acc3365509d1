"""Asking the user before a dangerous tool runs."""

from __future__ import annotations

import json
import sys

import typer

from toolcall_cli.loop import Approver, deny_all
from toolcall_cli.messages import ToolCall
from toolcall_cli.render.base import Renderer
from toolcall_cli.tools.registry import Tool


class Approval:
    """Asks on the terminal. The current renderer's live view is suspended while it asks, or
    the prompt would be drawn over; `renderer` is set by whoever renders the run."""

    def __init__(self) -> None:
        self.renderer: Renderer | None = None

    def __call__(self, call: ToolCall, tool: Tool) -> bool:
        args = json.dumps(call.arguments, ensure_ascii=False)
        question = f"Run dangerous tool {call.name}({args})?"
        try:
            if self.renderer is None:
                return typer.confirm(question, default=False, err=True)
            with self.renderer.suspended():
                return typer.confirm(question, default=False, err=True)
        except typer.Abort:  # Ctrl-C (or Ctrl-D) at the question interrupts, as anywhere else
            raise KeyboardInterrupt from None


def approver(yes: bool) -> Approver:
    """--yes approves everything; without a terminal to ask on, dangerous tools are declined."""
    if yes:
        return lambda call, tool: True
    if not sys.stdin.isatty():
        return deny_all
    return Approval()


def attach(approve: Approver, renderer: Renderer) -> None:
    """Let an interactive approver suspend this renderer while it asks."""
    if isinstance(approve, Approval):
        approve.renderer = renderer

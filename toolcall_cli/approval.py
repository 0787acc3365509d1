"""Asking the user before a dangerous tool runs: yes, no, or always (for this tool, for the
rest of the session)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import typer

from toolcall_cli.loop import Approver, Decision, deny_all
from toolcall_cli.messages import ToolCall
from toolcall_cli.render.base import Renderer
from toolcall_cli.tools.registry import Tool

ANSWERS: dict[str, Decision] = {
    "y": "yes",
    "yes": "yes",
    "是": "yes",
    "好": "yes",
    "n": "no",
    "no": "no",
    "否": "no",
    "不": "no",
    "a": "always",
    "always": "always",
    "总是": "always",
}
"""What the user may type at the question (English or Chinese); Enter alone means no."""

MAX_ARGUMENTS_SHOWN = 300
"""The call is shown in the question; a huge argument must not push the question off screen."""

Ask = Callable[[str], str]


def decision(answer: str) -> Decision | None:
    """The user's answer read as a decision; None when it is not one of the answers."""
    text = answer.strip().lower()
    return "no" if not text else ANSWERS.get(text)


def question(call: ToolCall, tool: Tool) -> str:
    args = json.dumps(call.arguments, ensure_ascii=False)
    if len(args) > MAX_ARGUMENTS_SHOWN:
        args = args[:MAX_ARGUMENTS_SHOWN] + f"… ({len(args):,} chars)"
    # Model-written text goes to the terminal: control characters could move the cursor or
    # fake a line, so they are shown escaped.
    args = "".join(c if c.isprintable() else repr(c)[1:-1] for c in args)
    return (
        f"Run dangerous tool {call.name}({args})?\n"
        f"  [y]es / [n]o / [a]lways (yes to {call.name} for the rest of the session)"
    )


def _ask_on_terminal(text: str) -> str:
    try:
        answer: str = typer.prompt(text, default="n", show_default=True, err=True)
    except typer.Abort:  # Ctrl-C (or Ctrl-D) at the question interrupts, as anywhere else
        raise KeyboardInterrupt from None
    return answer


class Approval:
    """Asks on the terminal. The current renderer's live view is suspended while it asks, or
    the prompt would be drawn over; `renderer` is set by whoever renders the run."""

    ATTEMPTS = 3
    """An answer that is none of the choices is asked again, then taken as no."""

    def __init__(self, ask: Ask = _ask_on_terminal) -> None:
        self.renderer: Renderer | None = None
        self._ask = ask

    def __call__(self, call: ToolCall, tool: Tool) -> Decision:
        if self.renderer is None:
            return self._decide(call, tool)
        with self.renderer.suspended():
            return self._decide(call, tool)

    def _decide(self, call: ToolCall, tool: Tool) -> Decision:
        text = question(call, tool)
        for _ in range(self.ATTEMPTS):
            chosen = decision(self._ask(text))
            if chosen is not None:
                return chosen
            text = "Please answer y (yes), n (no) or a (always)"
        return "no"


def approver(yes: bool) -> Approver:
    """--yes approves everything; without a terminal to ask on, dangerous tools are declined at
    once, and the run says so (it never waits for an answer that cannot come)."""
    if yes:
        return lambda call, tool: "yes"
    if not sys.stdin.isatty():
        return deny_all
    return Approval()


def attach(approve: Approver, renderer: Renderer) -> None:
    """Let an interactive approver suspend this renderer while it asks."""
    if isinstance(approve, Approval):
        approve.renderer = renderer

"""Asking the user before a dangerous tool runs: yes, no, or always (for this tool, for the
rest of the session); and before a call copied from a tool result runs: yes or no, for that
call alone, whatever --yes says."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import typer

from toolcall_cli.loop import Approver, Decision, deny_all
from toolcall_cli.messages import ToolCall
from toolcall_cli.quoted import Quote
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
    return (
        f"Run dangerous tool {shown_call(call)}?\n"
        f"  [y]es / [n]o / [a]lways (yes to {shown_name(call)} for the rest of the session)"
    )


def quoted_question(call: ToolCall, tool: Tool, quote: Quote) -> str:
    """The question about a call copied from a tool result: it names the result, and offers no
    "always", since each such call is the result's text speaking, not the model."""
    what = "dangerous tool " if tool.dangerous else ""
    where = printable(f"{quote.result_name} {quote.result_id}"[:MAX_ARGUMENTS_SHOWN])
    return (
        f"⚠ This call appears in the result of {where}: a tool's text may have written it "
        f"(prompt injection).\nRun {what}{shown_call(call)}?\n  [y]es / [n]o"
    )


def shown_call(call: ToolCall) -> str:
    args = json.dumps(call.arguments, ensure_ascii=False)
    if len(args) > MAX_ARGUMENTS_SHOWN:
        args = args[:MAX_ARGUMENTS_SHOWN] + f"… ({len(args):,} chars)"
    return f"{shown_name(call)}({printable(args)})"


def shown_name(call: ToolCall) -> str:
    return printable(call.name[:MAX_ARGUMENTS_SHOWN])


def printable(text: str) -> str:
    """Model-written text goes to the terminal: control characters could move the cursor or
    fake a line, so they are shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _ask_on_terminal(text: str) -> str:
    try:
        answer: str = typer.prompt(text, default="n", show_default=True, err=True)
    except typer.Abort:  # Ctrl-C (or Ctrl-D) at the question interrupts, as anywhere else
        raise KeyboardInterrupt from None
    return answer


class Approval:
    """Asks on the terminal. The current renderer's live view is suspended while it asks, or
    the prompt would be drawn over; `renderer` is set by whoever renders the run.

    `yes` (--yes): dangerous tools run without asking; a call copied from a tool result is
    still asked about, since --yes cannot know that a result planted it."""

    ATTEMPTS = 3
    """An answer that is none of the choices is asked again, then taken as no."""

    def __init__(self, ask: Ask = _ask_on_terminal, *, yes: bool = False) -> None:
        self.renderer: Renderer | None = None
        self._ask = ask
        self._yes = yes

    def __call__(self, call: ToolCall, tool: Tool) -> Decision:
        if self._yes:
            return "yes"
        with self._terminal():
            return self._decide(question(call, tool), always=True)

    def about_quoted(self, call: ToolCall, tool: Tool, quote: Quote) -> Decision:
        with self._terminal():
            return self._decide(quoted_question(call, tool, quote), always=False)

    def _terminal(self) -> AbstractContextManager[None]:
        return nullcontext() if self.renderer is None else self.renderer.suspended()

    def _decide(self, text: str, *, always: bool) -> Decision:
        choices = "y (yes), n (no) or a (always)" if always else "y (yes) or n (no)"
        for _ in range(self.ATTEMPTS):
            chosen = decision(self._ask(text))
            if chosen is not None and (always or chosen != "always"):
                return chosen
            text = f"Please answer {choices}"
        return "no"


def say_yes(call: ToolCall, tool: Tool) -> Decision:
    """--yes where nobody can be asked: dangerous tools run; a call copied from a tool result
    is refused (this approver cannot ask about one)."""
    return "yes"


def approver(yes: bool) -> Approver:
    """--yes approves dangerous tools; without a terminal to ask on, they are declined at once,
    and the run says so (it never waits for an answer that cannot come). A call copied from a
    tool result is asked about on a terminal, --yes or not, and refused without one."""
    if not sys.stdin.isatty():
        return say_yes if yes else deny_all
    return Approval(yes=yes)


def attach(approve: Approver, renderer: Renderer) -> None:
    """Let an interactive approver suspend this renderer while it asks."""
    if isinstance(approve, Approval):
        approve.renderer = renderer

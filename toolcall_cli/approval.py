"""Asking the user before a dangerous tool runs: yes, no, or always (for this tool, for the
rest of the session); and before a call copied from a tool result runs: yes or no, for that
call alone, whatever --yes says."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import typer

from toolcall_cli.events import ApprovalAsked, StepPaused
from toolcall_cli.loop import Decision
from toolcall_cli.messages import ToolCall
from toolcall_cli.stepping import TerminalStepper

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


def question(call: ToolCall) -> str:
    return (
        f"Run dangerous tool {shown_call(call)}?\n"
        f"  [y]es / [n]o / [a]lways (yes to {shown_name(call)} for the rest of the session)"
    )


def quoted_question(asked: ApprovalAsked) -> str:
    """The question about a call copied from a tool result: it names the result, and offers no
    "always", since each such call is the result's text speaking, not the model."""
    what = "dangerous tool " if asked.dangerous else ""
    where = printable(f"{asked.result_name} {asked.result_id}"[:MAX_ARGUMENTS_SHOWN])
    return (
        f"⚠ This call appears in the result of {where}: a tool's text may have written it "
        f"(prompt injection).\nRun {what}{shown_call(asked.call)}?\n  [y]es / [n]o"
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
    """Answers the run's ApprovalAsked at the terminal. (--yes never reaches here for a
    dangerous tool: the loop runs it unasked. A call copied from a tool result is always asked
    about, since --yes cannot know that a result planted it.)"""

    ATTEMPTS = 3
    """An answer that is none of the choices is asked again, then taken as no."""

    def __init__(self, ask: Ask = _ask_on_terminal) -> None:
        self._ask = ask

    def answer(self, asked: ApprovalAsked) -> None:
        asked.answer(self.decide(asked))

    def decide(self, asked: ApprovalAsked) -> Decision:
        if asked.offers_always:
            return self._decide(question(asked.call), always=True)
        return self._decide(quoted_question(asked), always=False)

    def _decide(self, text: str, *, always: bool) -> Decision:
        choices = "y (yes), n (no) or a (always)" if always else "y (yes) or n (no)"
        for _ in range(self.ATTEMPTS):
            chosen = decision(self._ask(text))
            if chosen is not None and (always or chosen != "always"):
                return chosen
            text = f"Please answer {choices}"
        return "no"


class TerminalAnswers:
    """Answers what a run asks at the terminal: approvals, and --step's pauses."""

    def __init__(self, approval: Approval | None, stepper: TerminalStepper | None) -> None:
        self.approval = approval
        self.stepper = stepper

    def answer(self, event: ApprovalAsked | StepPaused) -> None:
        if isinstance(event, ApprovalAsked):
            if self.approval is not None:
                self.approval.answer(event)
        elif self.stepper is not None:
            self.stepper.answer(event)


def terminal_answers(stepper: TerminalStepper | None = None) -> TerminalAnswers | None:
    """Who answers at this terminal: approval when stdin is one (otherwise nobody can be asked,
    and what is asked is declined at once, never waited for), and --step's stepper."""
    approval = Approval() if sys.stdin.isatty() else None
    if approval is None and stepper is None:
        return None
    return TerminalAnswers(approval, stepper)

"""--step: the run pauses before each model request and each tool execution, and the user
chooses. Enter goes on; `e` edits the call's arguments (checked against the tool's schema as
the model's are); `s` skips the call (the model reads "skipped by the user"); `q` stops the run.

The pause is the loop's (rounds.Stepper), as approval is; this module only asks on the terminal.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Literal

import typer

from toolcall_cli.events import StepPaused
from toolcall_cli.messages import ToolCall
from toolcall_cli.render.base import compact_json, one_line, visible
from toolcall_cli.rounds import Edited, StepAction
from toolcall_cli.wire.tokens import request_tokens

Ask = Callable[[str, str], "str | None"]
"""Asks with a prompt and a prefilled text; the line typed, or None at Ctrl-D."""
Say = Callable[[str], None]

LAST_MESSAGE_CHARS = 300
"""How much of the request's last message the pause shows: enough to see what is asked."""
ARGUMENTS_CHARS = 600

TOOL_CHOICES = "  [Enter] run it / [e] edit its arguments / [s] skip it / [q] stop the run"
REQUEST_CHOICES = "  [Enter] send it / [q] stop the run"
NOT_A_CHOICE = "  Please press Enter, or type one of the letters shown"


def _ask_on_terminal(message: str, default: str) -> str | None:
    """A prompt-toolkit line, prefilled, on stderr (stdout may be the --json or plain output).
    Ctrl-C interrupts the run, as anywhere else."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.output import create_output

    session: PromptSession[str] = PromptSession(output=create_output(stdout=sys.stderr))
    try:
        return session.prompt(message, default=default)
    except EOFError:
        return None


def _say_on_terminal(text: str) -> None:
    typer.echo(text, err=True)


def request_preview(iteration: int, body: dict[str, Any]) -> str:
    """What the model is about to be sent: how much, and the message it answers."""
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    size = len(json.dumps(body, ensure_ascii=False, default=str))
    # A text strategy lists its tools in the system prompt: no `tools` key to count then.
    offered = f", {len(tools)} tool spec(s)" if tools else ""
    lines = [
        f"step: model request {iteration}: {len(messages)} message(s){offered}, "
        f"{size:,} chars (about {request_tokens(body):,} tokens)"
    ]
    if messages and isinstance(messages[-1], dict):
        last = messages[-1]
        content = last.get("content")
        text = content if isinstance(content, str) else compact_json(content)
        lines.append(
            f"  last message ({last.get('role', '?')}): "
            f"{visible(one_line(text, LAST_MESSAGE_CHARS))}"
        )
    return "\n".join(lines)


def call_preview(call: ToolCall) -> str:
    args = visible(one_line(compact_json(call.arguments), ARGUMENTS_CHARS))
    return f"step: about to run {visible(call.name)} {args}  (call {visible(call.id)})"


class TerminalStepper:
    """Answers the run's StepPaused at the terminal."""

    def __init__(self, ask: Ask = _ask_on_terminal, say: Say = _say_on_terminal) -> None:
        self._ask = ask
        self._say = say

    def answer(self, pause: StepPaused) -> None:
        if pause.before == "request":
            pause.answer(self.before_request(pause.iteration, pause.request or {}))
        elif pause.call is not None:
            pause.answer(self.before_tool(pause.call, pause.problem, pause.draft))

    def before_request(self, iteration: int, body: dict[str, Any]) -> Literal["go", "quit"]:
        self._say(request_preview(iteration, body))
        self._say(REQUEST_CHOICES)
        while True:
            answer = self._ask("step> ", "")
            if answer is None or answer.strip().lower() == "q":
                return "quit"
            if not answer.strip():
                return "go"
            self._say(NOT_A_CHOICE)

    def before_tool(
        self, call: ToolCall, problem: str | None = None, draft: dict[str, Any] | None = None
    ) -> StepAction:
        """The user's choice. `problem`: the arguments they wrote last (`draft`) did not fit
        the tool, so they edit again, or go back to the choices."""
        if problem is not None:
            self._say(f"  not run: {problem}")
            self._say("  Edit again (Ctrl-D: back to the choices)")
            edited = self._edit(json.dumps(draft or call.arguments, ensure_ascii=False))
            if edited is not None:
                return edited
        else:
            self._say(call_preview(call))
        self._say(TOOL_CHOICES)
        while True:
            answer = self._ask("step> ", "")
            choice = "q" if answer is None else answer.strip().lower()
            if choice == "":
                return "go"
            if choice == "s":
                return "skip"
            if choice == "q":
                return "quit"
            if choice == "e":
                edited = self._edit(json.dumps(call.arguments, ensure_ascii=False))
                if edited is not None:
                    return edited
                self._say(TOOL_CHOICES)
                continue
            self._say(NOT_A_CHOICE)

    def _edit(self, text: str) -> Edited | None:
        """The arguments as the user rewrote them, once they are a JSON object (the loop checks
        them against the tool's schema); None when the user gave up (Ctrl-D)."""
        while True:
            answer = self._ask("arguments> ", text)
            if answer is None:
                return None
            text = answer
            problem = edit_problem(text)
            if problem is None:
                return Edited(json.loads(text))
            self._say(f"  not run: {problem}")
            self._say("  Edit again (Ctrl-D: back to the choices)")


def edit_problem(text: str) -> str | None:
    """Why the edited text cannot be arguments: not JSON, or not an object; None when it can
    (whether they fit the tool's schema, the loop says)."""
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as error:
        return f"that is not JSON ({error.msg} at column {error.colno})"
    if not isinstance(arguments, dict):
        return 'the arguments must be a JSON object, like {"city": "Paris"}'
    return None


def stepper(step: bool) -> TerminalStepper | None:
    """The stepper --step asks for; a usage error in one line when nobody can answer it."""
    if not step:
        return None
    if not sys.stdin.isatty():
        raise NotInteractive
    return TerminalStepper()


class NotInteractive(Exception):
    """--step with stdin that is no terminal: no one could answer at the pauses."""

    MESSAGE = "--step pauses for your answers and needs an interactive terminal on stdin"

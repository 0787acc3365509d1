"""Running a tool's function and turning what it returns (or raises) into the text the model
reads: shared by the thread pool and the isolated worker, so both give the same result."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolcall_cli import strictjson
from toolcall_cli.tools.registry import Tool


@dataclass
class Outcome:
    """What the tool's thread produced: the result's text, or why there is none."""

    text: str = ""
    failure: tuple[str, str] | None = None
    """(error kind, message) when the tool raised or its result could not become text."""


def run_in_thread(found: Tool, arguments: dict[str, Any], outcome: Outcome) -> None:
    """Run the tool and turn its value (or exception) into text, all in the tool's thread: both
    run the tool's own code (`__str__`, `default=str`), which may fail in any way or hang, and
    only this thread is bounded by the timeout and safe to let anything escape from."""
    try:
        value = found.func(**arguments)
    except BaseException as error:  # even SystemExit must not end the run
        outcome.failure = ("tool_error", exception_text(error))
        return
    try:
        outcome.text = result_text(value)
    except BaseException as error:
        outcome.failure = ("tool_error", unserialisable_text(error))


def exception_text(error: BaseException) -> str:
    """`ValueError: <message>`: the message is how the tool tells the model what to fix."""
    try:
        message = str(error)
    except BaseException:  # a hostile __str__; the type name still says what happened
        message = "(its message could not be read)"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def unserialisable_text(error: BaseException) -> str:
    """Why a returned value could not become the text the model reads."""
    if isinstance(error, RecursionError):
        return "the result is nested too deeply to be turned into JSON; return a flatter value."
    return f"the result could not be turned into text: {exception_text(error)}"


def result_text(value: object) -> str:
    """What the model reads: strings as they are, everything else as JSON (None → "null")."""
    # default=str: a date or a set is better shown as text than refused.
    text = value if isinstance(value, str) else _json_text_of(value)
    # Lone surrogates (from bytes decoded with surrogateescape) cannot be sent as UTF-8. The
    # unbound str.encode also makes a plain str of a str subclass, whatever it overrides.
    return str.encode(text, "utf-8", "replace").decode("utf-8")


def _json_text_of(value: object) -> str:
    """A returned value as strict JSON: an Infinity or NaN in it becomes a string, with a note
    saying so (JSON has neither, and the model must not be taught otherwise)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError as error:
        if "float" not in str(error):  # a circular structure, say: not ours to mend
            raise
        return strictjson.dumps(value)

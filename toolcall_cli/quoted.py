"""Which calls are quoted from tool results: a call copied out of a page or a mail a tool read
is how prompt injection works, so it runs only when the user approves it, whatever --yes says.
A result is read here as data, only to compare its calls with the model's: nothing is run."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.events import ToolCallParsed
from toolcall_cli.messages import Message, ToolCall, ToolSpec
from toolcall_cli.strategies.content_calls import bare_call
from toolcall_cli.strategies.text_parser import CallTextParser, parse_text
from toolcall_cli.tools.executor import runs_with

CallKey = tuple[str, str]
"""A call's tool name and its arguments in one canonical form."""

MAX_OPENERS = 64
"""Places in one result where a call may begin that are read again from there, up to the first
call or error, within OPENER_WINDOW characters. Text before a call (an unclosed quote or brace,
a `<think>`) can hide it from a reading of the whole result, while a model quoting the call
alone gets it read: so the call is looked for where it starts, too."""
OPENER_WINDOW = 4096
_STEP = 256
"""The window is fed to the reader in pieces of this size, so reading stops soon after the
first call ends instead of parsing every call after it again."""
MAX_TEXTS = 64
"""Strings of a JSON result read as text of their own (a page's text is a JSON string, its
quotes escaped: the model reads it unescaped)."""
MAX_JSON_DEPTH = 32

_OPENER = re.compile(
    r"<(?:tool_call|tools?|response|json|JSON|xml|function_call|function)\b"
    r"|\[TOOL_CALLS\]"  # Mistral's v11+ call names its tool outside the JSON: no "name" key
    r"""|\{\s*["']?(?:name|function|arguments|parameters)["']?\s*:"""
)
_MAY_HOLD_A_CALL = re.compile(r"[<{]")


@dataclass(frozen=True)
class Quote:
    """The tool result a call was found in."""

    result_name: str
    """The tool that returned it."""
    result_id: str
    """The id of the call it answered."""
    verbatim: bool
    """True: the call's own text stands in the result (spacing aside). False: the result holds
    the same call, name and arguments, written another way."""


def call_key(name: str, arguments: Any) -> CallKey | None:
    """The call as compared: its name, and its arguments with key order, spacing inside strings
    and `1.0` against `1` made the same. None for arguments too deep to compare."""
    try:
        canonical = json.dumps(
            _canonical(arguments if arguments is not None else {}),
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
    except (RecursionError, ValueError):
        return None
    return name.strip(), canonical


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def squeezed(text: str) -> str:
    """Text without any whitespace: a call quoted with other spacing is still the same text."""
    return "".join(text.split())


class ResultQuotes:
    """The tool results of a conversation (earlier runs of a chat included), read for calls.
    `read` takes in the results added since it last looked; `find` says which result, if any,
    a call was taken from."""

    def __init__(self) -> None:
        self._texts: list[tuple[str, Quote]] = []
        """Each result's text (and the text of each string of a JSON result), squeezed."""
        self._calls: dict[CallKey, Quote] = {}
        """Every call that can be read out of a result, by its key: the first result holding
        it."""
        self._read = 0
        """How many messages of the history were read."""

    def read(self, history: Sequence[Message], known: Collection[str]) -> None:
        """Take in the tool results added to `history` since the last call. `known`: the tool
        names, for a bare `{"name": "get_time"}` to count as a call (as in a reply)."""
        if len(history) < self._read:  # the history was cut back (a turn dropped): start again
            self._texts.clear()
            self._calls.clear()
            self._read = 0
        for message in history[self._read :]:
            if message.role == "tool" and message.content:
                self._take(message, known)
        self._read = len(history)

    def find(self, call: ToolCall, spec: ToolSpec | None = None) -> Quote | None:
        """The result `call` was taken from: one whose text holds the call's own text, or from
        which the same call (name and arguments) can be read, or, given the tool's `spec`, one
        that runs as the call does. None when no result holds it."""
        raw = squeezed(call.raw)
        if raw and _is_call_text(call):
            for text, quote in self._texts:
                if raw in text:
                    return Quote(quote.result_name, quote.result_id, verbatim=True)
        key = call_key(call.name, call.arguments)
        found = self._calls.get(key) if key is not None else None
        if found is None and spec is not None and isinstance(call.arguments, dict):
            return self._runs_as_quoted(call.name.strip(), call.arguments, spec)
        return found

    def _runs_as_quoted(self, name: str, arguments: dict[str, Any], spec: ToolSpec) -> Quote | None:
        """The result holding a call that runs as this one does. A model carrying out what a
        page asked need not copy it: it may write the phone number as a number, or add an
        argument the tool leaves out, and the same message is sent."""
        wanted = call_key(name, runs_with(spec, arguments))
        for (quoted_name, quoted_arguments), quote in self._calls.items():
            if quoted_name != name:
                continue
            written = json.loads(quoted_arguments)
            if isinstance(written, dict) and call_key(name, runs_with(spec, written)) == wanted:
                return quote
        return None

    def _take(self, message: Message, known: Collection[str]) -> None:
        quote = Quote(message.name or "?", message.tool_call_id or "?", verbatim=False)
        reading = _ResultReading(known)
        reading.text(message.content or "", depth=0)
        self._texts.extend((squeezed(text), quote) for text in reading.texts)
        for key in reading.calls:
            self._calls.setdefault(key, quote)


def _is_call_text(call: ToolCall) -> bool:
    """Whether the call's raw text is a whole call, naming its tool (a text-protocol call) and
    not only its arguments (a native call): `{"city": "Paris"}` in a result is no quoted call."""
    return any(name == call.name.strip() for name, _ in _calls_in_text(call.raw, (call.name,)))


def _calls_in_text(text: str, known: Collection[str]) -> Iterator[CallKey]:
    """What the reply readers make of `text`: the text protocol's lenient reader, and the
    JSON-in-content reader's bare `{"name": ...}`."""
    for call in parse_text(text, "").calls:
        key = call_key(call.name, call.arguments)
        if key is not None:
            yield key
    bare = bare_call(text.strip(), known, "")
    if bare is not None:
        yield bare.name, "{}"


def _calls_at(text: str, start: int) -> list[CallKey]:
    """The calls the text protocol's reader makes of `text` from `start`, read up to the piece
    in which the first call or error resolves (none if what comes first is no call)."""
    parser = CallTextParser("")
    end = min(len(text), start + OPENER_WINDOW)
    at = start
    while at < end:
        piece = text[at : min(at + _STEP, end)]
        at += len(piece)
        calls = _call_keys(parser.feed(piece))
        if calls or parser.errors:
            return calls
    return _call_keys(parser.close())


def _call_keys(events: Sequence[object]) -> list[CallKey]:
    found = [e.call for e in events if isinstance(e, ToolCallParsed)]
    return [key for call in found if (key := call_key(call.name, call.arguments)) is not None]


class _ResultReading:
    """One result read for calls, within bounds: a result is the outside world's text."""

    def __init__(self, known: Collection[str]) -> None:
        self.known = known
        self.texts: list[str] = []
        self.calls: set[CallKey] = set()
        self._openers_left = MAX_OPENERS

    def text(self, text: str, depth: int) -> None:
        if len(self.texts) >= MAX_TEXTS:
            return
        self.texts.append(text)
        self.calls.update(_calls_in_text(text, self.known))
        # Each opener is read, even one inside what an earlier opener's reading took in: that
        # reading stops at its first call, which may be a harmless one right before the payload.
        for opener in _OPENER.finditer(text):
            if self._openers_left <= 0:
                break
            self._openers_left -= 1
            self.calls.update(_calls_at(text, opener.start()))
        if depth < MAX_JSON_DEPTH:
            value = _json(text)
            if isinstance(value, (dict, list)):
                self._value(value, depth + 1)

    def _value(self, value: Any, depth: int) -> None:
        """A JSON value of a result: call-shaped objects in it count as calls, and its strings
        that may hold one are read as text."""
        if depth > MAX_JSON_DEPTH:
            return
        if isinstance(value, str):
            if _MAY_HOLD_A_CALL.search(value):
                self.text(value, depth)
        elif isinstance(value, list):
            for item in value:
                self._value(item, depth + 1)
        elif isinstance(value, dict):
            key = _call_object(value, self.known)
            if key is not None:
                self.calls.add(key)
            for item in value.values():
                self._value(item, depth + 1)


def _call_object(value: dict[str, Any], known: Collection[str]) -> CallKey | None:
    """A call written as a JSON object: `{"name": ..., "arguments": ...}`, OpenAI's
    `{"function": {"name": ..., "arguments": "<JSON text>"}}`, or `{"name": "get_time"}` for a
    known tool."""
    function = value.get("function")
    body = function if isinstance(function, dict) else value
    name = body.get("name")
    if not isinstance(name, str):
        return None
    for word in ("arguments", "parameters"):
        if word in body:
            arguments = body[word]
            if isinstance(arguments, str):
                arguments = _json(arguments)
            return call_key(name, arguments) if isinstance(arguments, dict) else None
    return call_key(name, {}) if name.strip() in known else None


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None

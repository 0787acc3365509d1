"""Kata `stream` (stream strategy): read tool calls out of a reply while it streams in, and keep
the text meant for the user apart, so it can be shown as it arrives.

Write the class `StreamParser`. The engine feeds it the reply in chunks of any size, as the
server sends them (a chunk may end in the middle of a tag: "<tool_", "call>"), then calls
close() once. The calls are written as in kata `parse`:

    Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>

The rules the checker grades:
- Every rule of kata `parse` holds: a </tool_call> inside a JSON string does not end a call, a
  ```json block holding a call is a call, a <tool_call> never closed counts when a whole JSON
  object follows it, the JSON is read strictly first and then with the three repairs (single
  quotes, trailing commas, unquoted keys), "parameters" means "arguments", and so on.
- Everything outside the calls (and outside ``` fences around a call) is display text; no
  markup of a call ever shows in it.
- Feeding the same reply in any chunking gives the same calls and the same display text.
- Text goes out early: a chunk's text is returned by the feed() that received it, except what
  might still be the start of a tag or fence ("<tool_c" at the end of a chunk) - hold that
  back until the next chunk tells.
- A call is returned by the feed() that completes it, not later.
- Each character is looked at a bounded number of times: never re-scan the whole buffer for
  every chunk (that is what makes some servers' parsers quadratic in the reply's length).
"""

from __future__ import annotations

import json
import re
from typing import Any

OPEN, CLOSE, FENCE = "<tool_call>", "</tool_call>", "```"


class StreamParser:
    """Turns a reply, fed in chunks, into events:

    {"type": "text", "text": str}                          text for the user
    {"type": "call", "name": str, "arguments": <value>}    a call, as kata parse reads it
    {"type": "error", "error": str}                        a call that cannot be read: one line
                                                           for the model, as in kata parse

    feed(chunk) returns the events that chunk completed (often none); close() ends the reply
    and returns the rest. Neither raises on any input.
    """

    def __init__(self) -> None:
        self.mode = "text"  # "text", "call" (after <tool_call>) or "fence" (after ```)
        self.held = ""  # text mode: what may be the start of <tool_call> or ```
        self.body: list[str] = []  # call or fence mode: the text since the opener
        self.quote = ""  # call mode: the quote of the JSON string we are in, if any
        self.escaped = False  # call mode: the last character was a backslash in a string
        self.matched = 0  # call mode: how much of </tool_call> the last characters were
        self.fence_tail = ""  # fence mode: the last two characters, for a ``` across chunks

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        rest = chunk
        while rest:
            if self.mode == "text":
                rest = self._feed_text(rest, events)
            elif self.mode == "call":
                rest = self._feed_call(rest, events)
            else:
                rest = self._feed_fence(rest, events)
        return events

    def close(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if self.mode == "text":
            add_text(events, self.held)
        elif self.mode == "fence":  # a fence never closed is prose
            add_text(events, FENCE + "".join(self.body))
        else:
            events += self._close_call()
        self.mode, self.held, self.body = "text", "", []
        return events

    # --- text: look for an opener, show the rest --------------------------------------------

    def _feed_text(self, chunk: str, events: list[dict[str, Any]]) -> str:
        """Show the text before the next opener and switch mode; return what follows it."""
        text = self.held + chunk
        found = re.search(r"<tool_call>|```", text)
        if found is None:
            keep = opener_prefix_length(text)
            add_text(events, text[: len(text) - keep])
            self.held = text[len(text) - keep :]
            return ""
        add_text(events, text[: found.start()])
        self.held = ""
        self.body = []
        if found.group() == OPEN:
            self.mode, self.quote, self.escaped, self.matched = "call", "", False, 0
        else:
            self.mode, self.fence_tail = "fence", ""
        return text[found.end() :]

    # --- call: scan the JSON for the closing tag --------------------------------------------

    def _feed_call(self, chunk: str, events: list[dict[str, Any]]) -> str:
        """Scan each character once, matching </tool_call> outside JSON strings. Returns what
        follows the closing tag when this chunk holds it."""
        for i, c in enumerate(chunk):
            if self.quote:
                if self.escaped:
                    self.escaped = False
                elif c == "\\":
                    self.escaped = True
                elif c == self.quote:
                    self.quote = ""
                continue
            if c == CLOSE[self.matched]:
                self.matched += 1
                if self.matched == len(CLOSE):  # the tag may have begun in an earlier chunk
                    body = "".join(self.body) + chunk[: i + 1]
                    events.append(read_call(body[: -len(CLOSE)], closed=True))
                    self.mode, self.body = "text", []
                    return chunk[i + 1 :]
                continue
            self.matched = 1 if c == "<" else 0
            if c in "\"'":
                self.quote = c
        self.body.append(chunk)
        return ""

    def _close_call(self) -> list[dict[str, Any]]:
        """The reply ended inside a call: a whole JSON object is still a call. If the quotes
        never balanced, a raw </tool_call> in it ends the call after all, and what follows is
        read again from the start."""
        body = "".join(self.body)
        end = body.find(CLOSE)
        if end < 0:
            return [read_call(body, closed=False)]
        events = [read_call(body[:end], closed=True)]
        again = StreamParser()
        return events + again.feed(body[end + len(CLOSE) :]) + again.close()

    # --- fence: a call when it holds one, else prose ----------------------------------------

    def _feed_fence(self, chunk: str, events: list[dict[str, Any]]) -> str:
        """Wait for the closing ```; then the block is a call when it holds one, else prose.
        Returns what follows the closing fence when this chunk holds it."""
        before = self.fence_tail
        found = (before + chunk).find(FENCE)
        if found < 0:
            self.body.append(chunk)
            self.fence_tail = (before + chunk)[-2:]
            return ""
        text = "".join(self.body) + chunk
        end = len(text) - len(chunk) - len(before) + found
        call = fenced_call(text[:end])
        if call is not None:
            events.append(call)
        else:
            add_text(events, FENCE + text[:end] + FENCE)
        self.mode, self.body = "text", []
        return text[end + len(FENCE) :]


def add_text(events: list[dict[str, Any]], text: str) -> None:
    if not text:
        return
    if events and events[-1]["type"] == "text":
        events[-1]["text"] += text
    else:
        events.append({"type": "text", "text": text})


def opener_prefix_length(text: str) -> int:
    """How many characters at the end of `text` could still grow into <tool_call> or ```."""
    for size in range(min(len(text), len(OPEN) - 1), 0, -1):
        tail = text[-size:]
        if OPEN.startswith(tail) or FENCE.startswith(tail):
            return size
    return 0


def fenced_call(body: str) -> dict[str, Any] | None:
    inner = re.sub(r"^[\w+.-]*\n", "", body)  # the language word
    value = load_json(inner) if inner.strip().startswith("{") else None
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return as_call(value)
    return None


# --- reading one call: the same as kata parse ------------------------------------------------


def read_call(body: str, *, closed: bool) -> dict[str, Any]:
    value = load_json(body)
    if value is None and not closed:
        return {"type": "error", "error": "the reply ended inside a tool call: write it again"}
    if value is None:
        return {"type": "error", "error": f"the tool call is not valid JSON: {shorten(body)}"}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return {"type": "error", "error": 'a tool call must be {"name": ..., "arguments": {...}}'}
    return as_call(value)


def as_call(value: dict[str, Any]) -> dict[str, Any]:
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        decoded = load_json(arguments)
        arguments = decoded if isinstance(decoded, dict) else arguments
    return {"type": "call", "name": value["name"], "arguments": arguments}


def load_json(text: str) -> Any:
    for candidate in (text, relaxed(text)):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def relaxed(text: str) -> str:
    """`text` with single-quoted strings, trailing commas and unquoted keys made JSON."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = copy_string(text, i, out)
            continue
        after = skip_space(text, i + 1)
        if c == "," and text[after : after + 1] in ("}", "]"):
            i += 1
            continue
        word = IDENTIFIER.match(text, i)
        if word:
            colon = skip_space(text, word.end())
            out.append(json.dumps(word.group()) if text[colon : colon + 1] == ":" else word[0])
            i = word.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def copy_string(text: str, start: int, out: list[str]) -> int:
    quote = text[start]
    pieces = ['"']
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            pieces.append("'" if text[i + 1] == "'" else text[i : i + 2])
            i += 2
            continue
        if c == quote:
            out.append("".join(pieces) + '"')
            return i + 1
        pieces.append('\\"' if c == '"' else c)
        i += 1
    out.append(text[start:])
    return len(text)


def skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

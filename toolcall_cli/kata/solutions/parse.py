"""Kata `parse` (regex strategy): read tool calls out of a model's text with string parsing.

The system prompt asked the model to write each call as

    <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>

and the model mostly does. Write `parse_tool_calls(text)`: the calls in one whole reply, in
order, each either a call the engine can run or an error it can send back to the model.

The rules the checker grades:
- A call is a JSON object with a string "name", between <tool_call> and </tool_call>.
  Whitespace around the JSON does not matter; text outside the calls is prose, not a call.
- A </tool_call> inside a JSON string ("query": "what is </tool_call>?") does not end the call.
- A ```json fenced block (any language word, or none) whose content is one call object is a
  call too: chat-tuned models write calls that way. Any other fenced block is prose.
- A <tool_call> never closed still counts when a whole JSON object follows it (the model
  stopped before the tag); when the JSON itself is cut off, it is an error.
- Read the JSON strictly first. Only when that fails, repair the three slips models make:
  single quotes, trailing commas, unquoted keys. Anything else is an error: do not guess.
- "parameters" in place of "arguments" means the same; no arguments at all means {}; arguments
  written as a JSON string that holds an object are decoded; any other value is kept as written.
- Do not check names or arguments against the tools: that is the loop's job.
"""

from __future__ import annotations

import json
import re
from typing import Any

OPEN, CLOSE, FENCE = "<tool_call>", "</tool_call>", "```"


def parse_tool_calls(text: str) -> list[dict[str, Any]]:
    """Every call in `text`, in order.

    A call the engine can run: {"name": str, "arguments": <the arguments, usually a dict>}.
    A call that cannot be read: {"error": str}, one line saying what is wrong, written for the
    model (the loop sends it back as the call's result, so the model can write it again).
    Text without calls gives []. Never raises.
    """
    found: list[dict[str, Any]] = []
    position = 0
    while (start := next_block(text, position)) >= 0:
        if text.startswith(FENCE, start):
            position = read_fence(text, start, found)
            continue
        body_start = start + len(OPEN)
        end = closing_tag(text, body_start)
        if end < 0:  # never closed: the rest of the reply is the call, or what is left of it
            found.append(read_call(text[body_start:], closed=False))
            break
        found.append(read_call(text[body_start:end], closed=True))
        position = end + len(CLOSE)
    return found


def next_block(text: str, position: int) -> int:
    """Where the next <tool_call> or ``` starts, or -1."""
    starts = [i for i in (text.find(OPEN, position), text.find(FENCE, position)) if i >= 0]
    return min(starts, default=-1)


def closing_tag(text: str, start: int) -> int:
    """Where the </tool_call> that ends the call starts: the first one outside a JSON string.
    When the quotes never balance (the JSON is broken), the first one anywhere; -1 if none."""
    quote = ""
    i = start
    while i < len(text):
        c = text[i]
        if quote and c == "\\":
            i += 2  # an escaped character never ends a string
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif text.startswith(CLOSE, i):
            return i
        i += 1
    return text.find(CLOSE, start)


def read_fence(text: str, start: int, found: list[dict[str, Any]]) -> int:
    """Read a fenced block: a call when it holds one, else prose. Returns where to go on."""
    end = text.find(FENCE, start + len(FENCE))
    if end < 0:
        return len(text)
    body = re.sub(r"^[\w+.-]*\n", "", text[start + len(FENCE) : end])  # the language word
    value = load_json(body) if body.strip().startswith("{") else None
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        found.append(as_call(value))
    return end + len(FENCE)


def read_call(body: str, *, closed: bool) -> dict[str, Any]:
    value = load_json(body)
    if value is None and not closed:
        return {"error": "the reply ended inside a tool call (it was cut off): write it again"}
    if value is None:
        return {"error": f"the tool call is not valid JSON: {shorten(body)}"}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return {"error": 'a tool call must be a JSON object: {"name": ..., "arguments": {...}}'}
    return as_call(value)


def as_call(value: dict[str, Any]) -> dict[str, Any]:
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # written twice over: "arguments": "{\"city\": \"Paris\"}"
        decoded = load_json(arguments)
        arguments = decoded if isinstance(decoded, dict) else arguments
    return {"name": value["name"], "arguments": arguments}


def load_json(text: str) -> Any:
    """The JSON value in `text`: strictly, else after repairing the three usual slips; None
    when neither reads."""
    for candidate in (text, relaxed(text)):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def relaxed(text: str) -> str:
    """`text` with single-quoted strings, trailing commas and unquoted keys made JSON. One pass,
    and strings are copied whole, so nothing inside a string is ever changed."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = copy_string(text, i, out)
            continue
        after = skip_space(text, i + 1)
        if c == "," and text[after : after + 1] in ("}", "]"):
            i += 1  # a trailing comma: drop it
            continue
        word = IDENTIFIER.match(text, i)
        if word:
            colon = skip_space(text, word.end())
            bare_key = text[colon : colon + 1] == ":"
            out.append(json.dumps(word.group()) if bare_key else word.group())
            i = word.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def copy_string(text: str, start: int, out: list[str]) -> int:
    """Copy the string starting at `start` into `out` as a double-quoted JSON string; returns
    where it ends. A string never closed is copied as it is (and will not parse)."""
    quote = text[start]
    pieces = ['"']
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            escaped = text[i + 1]
            pieces.append("'" if escaped == "'" else c + escaped)
            i += 2
            continue
        if c == quote:
            out.append("".join(pieces) + '"')
            return i + 1
        pieces.append('\\"' if c == '"' else c)  # a " inside a '...' string
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

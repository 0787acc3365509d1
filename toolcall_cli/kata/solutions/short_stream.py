"""Kata `stream`, whiteboard-sized: text goes out as it comes, except what may be the start of
<tool_call>; a call is read when its </tool_call> arrives (strict JSON, else an error).

Fails what kata parse's short reference fails (repairs, ``` fences, </tool_call> inside a
string), and the 600,000-character reply fed one character at a time (it searches its buffer
again on each chunk): fine in an interview, where the state machine - hold back a possible tag,
emit text early, emit a call when it closes - is the answer, and the rest is said out loud.
"""

import json
from typing import Any

OPEN, CLOSE = "<tool_call>", "</tool_call>"


class StreamParser:
    def __init__(self) -> None:
        self.buffer = ""  # text not yet emitted: a possible opener, or a call's body
        self.in_call = False

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        self.buffer += chunk
        events: list[dict[str, Any]] = []
        while True:
            marker = CLOSE if self.in_call else OPEN
            at = self.buffer.find(marker)
            if at < 0:
                break
            before, self.buffer = self.buffer[:at], self.buffer[at + len(marker) :]
            events.append(call(before) if self.in_call else {"type": "text", "text": before})
            self.in_call = not self.in_call
        if not self.in_call:  # emit all but a tail that could start <tool_call>
            keep = next(
                (n for n in range(len(OPEN) - 1, 0, -1) if self.buffer.endswith(OPEN[:n])), 0
            )
            events.append({"type": "text", "text": self.buffer[: len(self.buffer) - keep]})
            self.buffer = self.buffer[len(self.buffer) - keep :]
        return [e for e in events if e.get("text") != ""]

    def close(self) -> list[dict[str, Any]]:
        rest, self.buffer = self.buffer, ""
        if self.in_call:
            self.in_call = False
            return [call(rest)]
        return [{"type": "text", "text": rest}] if rest else []


def call(body: str) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except ValueError as error:
        return {"type": "error", "error": f"the call is not valid JSON ({error}): write it again"}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return {"type": "error", "error": 'a call is a JSON object with a string "name"'}
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str) and arguments.strip().startswith("{"):
        arguments = json.loads(arguments)  # arguments written as JSON text
    return {"type": "call", "name": value["name"], "arguments": arguments}

"""Kata `parse`, whiteboard-sized: the calls between <tool_call> tags, strict JSON, an error for
the model when a call cannot be read. No repair, no ``` fences, no </tool_call> inside a string.

What it fails, and why that is fine in an interview: the repairs of broken JSON (single quotes,
trailing commas, unquoted keys), calls in ``` fences, and a </tool_call> written inside a JSON
string. Each is one more rule you can name out loud ("next I would repair the three slips models
make, and only those"); the interviewer wants the shape - find, decode, error back, never raise.
"""

from __future__ import annotations

import json
import re
from typing import Any

CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)  # an unclosed last call counts


def parse_tool_calls(text: str) -> list[dict[str, Any]]:
    """Every call in `text`, in order: {"name", "arguments"} or {"error"}. Never raises."""
    found: list[dict[str, Any]] = []
    for body in CALL.findall(text):
        try:
            call = json.loads(body)
        except ValueError as error:
            found.append({"error": f"the call is not valid JSON ({error}): write it again"})
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            found.append({"error": 'a call is a JSON object with a string "name"'})
            continue
        arguments = call.get("arguments", call.get("parameters", {}))
        if isinstance(arguments, str):  # arguments written as JSON text
            try:
                decoded = json.loads(arguments)
                arguments = decoded if isinstance(decoded, dict) else arguments
            except ValueError:
                pass
        found.append({"name": call["name"], "arguments": arguments})
    return found

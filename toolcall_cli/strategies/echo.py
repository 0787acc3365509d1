"""A parsed reply turned back into the assistant message the history keeps, and the next request
echoes: the server's own `tool_calls` for native calling, the model's text for the text protocol.
When only some calls of a reply run, the echo holds only those, so every call the next request
shows has its result."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from toolcall_cli.messages import Message, ToolCall
from toolcall_cli.strategies.base import Reply
from toolcall_cli.strategies.text_prompt import CALL_CLOSE, CALL_OPEN


def assistant_message(reply: Reply) -> Message:
    """The message the history keeps for `reply`."""
    if reply.native is not None:
        return Message(
            role="assistant",
            content=reply.native.get("content"),
            tool_calls=reply.calls,
            reasoning=reply.reasoning or None,
            extra={"tool_calls": reply.native.get("tool_calls") or []},
        )
    return Message(
        role="assistant",
        content=reply.raw if reply.raw else None,
        tool_calls=reply.calls,
        reasoning=reply.reasoning or None,
    )


def first_calls(reply: Reply, cap: int) -> tuple[Reply, int]:
    """The reply with only its first `cap` calls (broken ones after whole ones), and how many
    were dropped. The history records this reply, so the next request neither echoes nor has to
    answer the calls that never ran."""
    calls = reply.calls[:cap]
    errors = reply.errors[: max(cap - len(calls), 0)]
    dropped = len(reply.calls) + len(reply.errors) - len(calls) - len(errors)
    if not dropped:
        return reply, 0
    if reply.native is not None:
        kept = {c.id for c in calls} | {e.call_id for e in errors}
        wire = [c for c in reply.native.get("tool_calls") or [] if c.get("id") in kept]
        native = {**reply.native, "tool_calls": wire}
        return replace(reply, calls=calls, errors=errors, native=native), dropped
    written = [reply.text, *(call_text(c) for c in calls), *(e.raw for e in errors)]
    raw = "\n".join(part for part in written if part.strip())
    return replace(reply, raw=raw, calls=calls, errors=errors), dropped


def call_text(call: ToolCall) -> str:
    """A call as the text protocol writes it."""
    body: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.ref:
        body = {"id": call.ref, **body}
    if call.depends_on:
        body["depends_on"] = list(call.depends_on)
    return f"{CALL_OPEN}{json.dumps(body, ensure_ascii=False)}{CALL_CLOSE}"

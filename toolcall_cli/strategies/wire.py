"""Wire-format helpers the strategies share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcall_cli.messages import Message
from toolcall_cli.strategies.prompt import tool_result_block


def usage_counts(usage: dict[str, Any]) -> dict[str, int]:
    """The integer token counts of an OpenAI `usage` object (nested details are dropped)."""
    return {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}


def text_protocol_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """History as a plain chat model sees it: results become user messages of result blocks.

    Consecutive tool results are grouped into one user message, each block tied to its call id.
    """
    wire: list[dict[str, Any]] = []
    pending: list[str] = []
    for message in messages:
        if message.role == "tool":
            pending.append(
                tool_result_block(
                    message.tool_call_id or "", message.name or "", message.content or ""
                )
            )
            continue
        if pending:
            wire.append({"role": "user", "content": "\n".join(pending)})
            pending = []
        wire.append({"role": message.role, "content": message.content or ""})
    if pending:
        wire.append({"role": "user", "content": "\n".join(pending)})
    return wire

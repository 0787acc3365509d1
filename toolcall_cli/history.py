"""The history window: the last N tool rounds go to the model in full; older rounds are
compacted into one short, deterministic summary (no extra model call). The session's own
history is never changed: only what is sent is windowed."""

from __future__ import annotations

import json
from collections.abc import Sequence

from toolcall_cli.messages import Message

SUMMARY_PREFIX = "[context summary]"
ENGINE_NOTE_PREFIX = "[toolcall]"
"""Starts every instruction the engine itself adds to the conversation (not a user question)."""
PREVIEW_CHARS = 120


def tool_rounds(history: Sequence[Message]) -> list[tuple[int, int]]:
    """(start, end) index ranges of tool rounds: an assistant message and the tool messages
    answering it."""
    rounds: list[tuple[int, int]] = []
    i = 0
    while i < len(history):
        end = i + 1
        if history[i].role == "assistant":
            while end < len(history) and history[end].role == "tool":
                end += 1
        if end > i + 1:
            rounds.append((i, end))
        i = end
    return rounds


def windowed(history: Sequence[Message], keep_rounds: int | None) -> tuple[list[Message], int]:
    """The history to send, and how many rounds were compacted into the summary."""
    rounds = tool_rounds(history)
    if keep_rounds is None or len(rounds) <= keep_rounds:
        return list(history), 0
    old = rounds[: len(rounds) - keep_rounds]
    lines = [line for start, end in old for line in round_lines(history[start:end])]
    summary = Message(
        role="user",
        content=f"{SUMMARY_PREFIX} {len(old)} earlier tool round(s), compacted:\n"
        + "\n".join(lines),
    )
    dropped = {i for start, end in old for i in range(start, end)}
    first = old[0][0]
    kept: list[Message] = []
    for i, message in enumerate(history):
        if i == first:
            kept.append(summary)
        if i not in dropped:
            kept.append(message)
    return kept, len(old)


def round_lines(messages: Sequence[Message]) -> list[str]:
    """One line per call: `- name(args) -> result preview`."""
    results = {m.tool_call_id: m.content or "" for m in messages if m.role == "tool"}
    lines = []
    for call in messages[0].tool_calls:
        args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
        lines.append(f"- {call.name}({args}) -> {preview(results.pop(call.id, '(no result)'))}")
    lines += [f"- (unparsed call) -> {preview(text)}" for text in results.values()]
    return lines


def preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"

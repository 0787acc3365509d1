"""The history window: the last N tool rounds go to the model in full; older rounds are
compacted into one short, deterministic summary (no extra model call). The session's own
history is never changed: only what is sent is windowed."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolcall_cli.messages import Message

SUMMARY_PREFIX = "[context summary]"
ENGINE_NOTE_PREFIX = "[toolcall]"
"""Starts every instruction the engine itself adds to the conversation (not a user question)."""
PREVIEW_CHARS = 120
CUT_STEPS = (2000, 1000, 500, 200)
"""The lengths long tool results are cut to, one after another, until a request fits."""


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


@dataclass(frozen=True)
class Fitted:
    """What to send so a request fits its token budget, and what that took."""

    messages: list[Message]
    compacted: int
    """Tool rounds sent as the summary."""
    cut: int
    """Tool results cut shorter in what is sent."""
    tokens: int
    """The estimate of the request as it will be sent."""
    fits: bool


def fitted(
    history: Sequence[Message],
    keep_rounds: int | None,
    budget: int,
    measure: Callable[[list[Message]], int],
) -> Fitted:
    """The history to send within `budget` tokens, as `measure` counts a request built from it.

    The kept history is never changed. First older rounds go into the summary, down to the
    last round (the one the model is answering); then long results of the rounds still sent
    are cut shorter; then every round goes into the summary. If nothing fits, the smallest
    version is returned with `fits` False: the caller says so and sends it anyway."""
    rounds = len(tool_rounds(history))
    start = rounds if keep_rounds is None else min(keep_rounds, rounds)
    tried: list[Fitted] = []

    def attempt(messages: list[Message], compacted: int, cut: int) -> Fitted:
        tokens = measure(messages)
        tried.append(Fitted(messages, compacted, cut, tokens, tokens <= budget))
        return tried[-1]

    for keep in range(start, min(start, 1) - 1, -1):
        sent, compacted = windowed(history, keep)
        if (found := attempt(sent, compacted, 0)).fits:
            return found
    for limit in CUT_STEPS:
        shorter, cut = cut_results(sent, limit)
        if cut and (found := attempt(shorter, compacted, cut)).fits:
            return found
    if compacted < rounds:
        sent, compacted = windowed(history, 0)
        if (found := attempt(sent, compacted, 0)).fits:
            return found
    return min(tried, key=lambda fit: fit.tokens)


def cut_results(messages: Sequence[Message], limit: int) -> tuple[list[Message], int]:
    """The messages with every tool result longer than `limit` characters cut to it, marked as
    cut; and how many were."""
    shorter: list[Message] = []
    cut = 0
    for message in messages:
        content = message.content or ""
        if message.role == "tool" and len(content) > limit:
            note = f"\n[cut to fit the context window: {limit:,} of {len(content):,} characters]"
            message = dataclasses.replace(message, content=content[:limit] + note)
            cut += 1
        shorter.append(message)
    return shorter, cut

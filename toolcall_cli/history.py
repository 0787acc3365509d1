"""The history window: the last N tool rounds go to the model in full; older rounds are
compacted into one short, deterministic summary (no extra model call). The session's own
history is never changed: only what is sent is windowed."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.feedback import NOTE_PREFIX
from toolcall_cli.messages import Message
from toolcall_cli.wording import plural

SUMMARY_PREFIX = "[context summary]"
ENGINE_NOTE_PREFIX = NOTE_PREFIX
"""Starts every instruction the engine itself adds to the conversation (not a user question)."""
PREVIEW_CHARS = 120
"""How much of each result the summary of older rounds keeps while tools are offered: the
rounds sent in full hold what the model works with."""
ANSWER_RESULT_CHARS = 2000
"""How much of each result the summary keeps once tools are withdrawn: then the summary is all
the model has to answer from, and a 120-character preview cut off the very figure asked for
(a weather result's `high_c`, seen with a real small model)."""
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


def windowed(
    history: Sequence[Message], keep_rounds: int | None, result_chars: int = PREVIEW_CHARS
) -> tuple[list[Message], int]:
    """The history to send, and how many rounds were compacted into the summary, which keeps
    `result_chars` of each result."""
    rounds = tool_rounds(history)
    if keep_rounds is None or len(rounds) <= keep_rounds:
        return list(history), 0
    old = rounds[: len(rounds) - keep_rounds]
    calls = [entry for start, end in old for entry in round_calls(history[start:end])]
    # How often a call was made tells a model that may call tools not to make it again. Once
    # tools are withdrawn (whole results) it has no use, and a small model answering from the
    # summary copied "(the same call 2 times)" into its answer.
    counted = result_chars < ANSWER_RESULT_CHARS
    lines = [
        f"- {call} -> {preview(result, result_chars)}{times_said(n) if counted else ''}"
        for call, result, n in once_each(calls)
    ]
    summary = Message(
        role="user",
        content=f"{SUMMARY_PREFIX} {plural(len(old), 'earlier tool round')}, compacted:\n"
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


def round_calls(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """Each call of a round as `name(args)`, with its result."""
    results = {m.tool_call_id: without_note(m.content or "") for m in messages if m.role == "tool"}
    calls = []
    for call in messages[0].tool_calls:
        args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
        calls.append((f"{call.name}({args})", results.pop(call.id, "(no result)")))
    return calls + [("(unparsed call)", text) for text in results.values()]


def without_note(result: str) -> str:
    """A result without the engine's note on its last line (a repeat's "you already called…"):
    the summary says how often a call was made, and a small model answering from the summary
    said the note back instead of the figure before it."""
    head, _, last = result.rpartition("\n")
    return head if head and last.startswith(ENGINE_NOTE_PREFIX) else result


def once_each(calls: Sequence[tuple[str, str]]) -> list[tuple[str, str, int]]:
    """Each call once, with its first result and how often it was made with that result: a
    model that repeated one call four times reads its result once, not four copies to go on
    from. A repeat's result is the first one with the engine's note after it (rounds.reused);
    a call whose result changed (a die roll) keeps each result."""
    kept: list[tuple[str, str, int]] = []
    for call, result in calls:
        same = next(
            (i for i, (c, r, _) in enumerate(kept) if c == call and repeats(result, r)), None
        )
        if same is None:
            kept.append((call, result, 1))
        else:
            c, r, n = kept[same]
            kept[same] = (c, r, n + 1)
    return kept


def repeats(result: str, first: str) -> bool:
    return result == first or result.startswith(first + "\n")


def times_said(n: int) -> str:
    return "" if n == 1 else f" (the same call {n} times)"


def preview(text: str, chars: int = PREVIEW_CHARS) -> str:
    """Whitespace collapsed to single spaces and cut with `…`."""
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def result_data(result: str) -> str:
    """A tool result without the engine's notes after it: what the tool gave."""
    return result.split("\n" + ENGINE_NOTE_PREFIX, 1)[0]


def result_json(result: str) -> Any:
    """A result's JSON object or array (its notes left out); None for any other result."""
    head = result_data(result).strip()
    if not head.startswith(("{", "[")):
        return None
    try:
        value = json.loads(head)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


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
    result_chars: int = PREVIEW_CHARS,
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
        sent, compacted = windowed(history, keep, result_chars)
        if (found := attempt(sent, compacted, 0)).fits:
            return found
    for limit in CUT_STEPS:
        shorter, cut = cut_results(sent, limit)
        if cut and (found := attempt(shorter, compacted, cut)).fits:
            return found
    for chars in dict.fromkeys((result_chars, PREVIEW_CHARS)):
        if compacted < rounds or chars != result_chars:
            sent, compacted = windowed(history, 0, chars)
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

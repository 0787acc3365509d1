"""What every renderer shares: the Renderer protocol and the text helpers that keep model and
tool output safe and short to show."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn, Protocol

import jiter

from toolcall_cli.events import (
    AnswerWithoutTools,
    ApprovalAnswered,
    ApprovalAsked,
    CallFromResult,
    Event,
    FedBack,
    FinalAnswer,
    GroundingChecked,
    IterationStarted,
    LimitReached,
    ModelChunk,
    ModelFailed,
    ModelReplied,
    Notice,
    PlaceholdersFilled,
    ReplyNotRead,
    RunFinished,
    RunStarted,
    StepPaused,
    TimelineEntry,
    ToolFinished,
    ToolsChosen,
    ToolStarted,
    ToolTimeline,
)
from toolcall_cli.history import preview
from toolcall_cli.messages import ToolCall
from toolcall_cli.strategies.text_prompt import CALL_CLOSE, CALL_OPEN, unclosed
from toolcall_cli.wording import plural


class Renderer(Protocol):
    """Consumes a run's events one by one; `close()` ends the output (also after Ctrl-C)."""

    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...

    def suspended(self) -> AbstractContextManager[None]:
        """Hands the terminal over for a while, e.g. to ask before a dangerous tool runs."""
        ...


class LineWriter:
    """What the renderers that write lines share (plain, JSON, quiet): each write is flushed at
    once, so a reader sees the steps live, and the terminal is never held."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def _write(self, text: str) -> None:
        self._stream.write(text + "\n")
        self._stream.flush()

    def close(self) -> None:
        self._stream.flush()

    @contextmanager
    def suspended(self) -> Iterator[None]:
        yield  # nothing to hand over


def assert_never(value: NoReturn) -> NoReturn:
    """`typing.assert_never`, which Python 3.10 lacks: mypy proves every event kind is handled."""
    raise AssertionError(f"unhandled event: {value!r}")


# The groups a renderer handles the event kinds in (with the parser's, events.ParserEvent): one
# method per group, each ending in assert_never, so mypy proves every kind is handled.
TurnEvent = IterationStarted | ModelChunk | ModelReplied | ToolsChosen | FedBack
"""An iteration's request, the model's reply, and what goes back to the model."""
ToolEvent = (
    ToolStarted
    | PlaceholdersFilled
    | CallFromResult
    | ApprovalAnswered
    | ToolFinished
    | ToolTimeline
)
"""A round of tool calls as it runs."""
RunEvent = (
    RunStarted
    | Notice
    | AnswerWithoutTools
    | GroundingChecked
    | FinalAnswer
    | LimitReached
    | ModelFailed
    | ReplyNotRead
    | RunFinished
)
"""The run's start, its notices, and how it ends."""
Waiting = ApprovalAsked | StepPaused
"""The run waits for the consumer's answer: the consumer asks the user (with the view suspended),
so no view shows these."""


# C0 controls except tab and newline, DEL and C1 controls: a model or a tool could send an
# escape sequence that moves the cursor or recolours the terminal, so they are shown, not sent.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """Text safe to write to a terminal: control characters become `\\xNN`."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass(frozen=True)
class Cut:
    """A text shortened for display, and how long it was in full."""

    text: str
    full_length: int
    was_cut: bool

    def note(self) -> str:
        """`… (1,234 chars in full)` when shortened, else empty."""
        return f"… ({self.full_length:,} chars in full)" if self.was_cut else ""

    def with_note(self, separator: str = " ") -> str:
        """The text, then the note after `separator` when it was shortened."""
        return f"{self.text}{separator}{self.note()}" if self.was_cut else self.text


def cut(text: str, max_chars: int, max_lines: int | None = None) -> Cut:
    """Keep the head of `text`: at most `max_chars` characters and `max_lines` lines."""
    shown = text[:max_chars] if max_chars >= 0 else text
    if max_lines is not None:
        lines = shown.split("\n")
        if len(lines) > max_lines:
            shown = "\n".join(lines[:max_lines])
    return Cut(text=shown, full_length=len(text), was_cut=len(shown) < len(text))


RESULT_SHOWN = (300, 6)
"""The characters and lines a view shows of a tool's result, of what a tool printed, and of
call text that could not be read."""
NAME_CHARS = 64
"""Longest tool name or call id shown whole; OpenAI's own limit for a function name."""
ARGUMENT_CHARS = 2000
"""Longest arguments text shown on a call's line."""


def shown_name(name: str) -> str:
    """A tool name or call id as the view shows it: a model can send one megabytes long."""
    return visible(cut(name, NAME_CHARS).with_note(separator=""))


def shown_arguments(arguments: Any) -> str:
    """A call's arguments as one line of JSON, cut (saying so) when the model sent a lot."""
    return visible(cut(compact_json(arguments), ARGUMENT_CHARS).with_note())


def compact_json(value: Any) -> str:
    """Arguments as one line of JSON; anything JSON cannot hold is shown by its repr."""
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # circular structures, NaN in odd places
        return repr(value)


def indent(text: str, prefix: str = "    ") -> str:
    """Each line after `prefix`; an empty line stays empty (no spaces left at a line's end)."""
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def request_summary(body: dict[str, Any]) -> str:
    """`3 messages, 2 tools, streaming`: what went to the model, in one line."""
    messages = body.get("messages")
    tools = body.get("tools")
    parts = [plural(len(messages) if isinstance(messages, list) else 0, "message")]
    if isinstance(tools, list) and tools:
        parts.append(plural(len(tools), "tool"))
    if body.get("response_format"):
        parts.append("response_format")
    if body.get("stream"):
        parts.append("streaming")
    return ", ".join(parts)


HEADER_TOOLS = 12
"""How many tool names the run's header lists before it only counts the rest: a session of
200 tools would otherwise open with a screenful of names (what each request carries is shown
per iteration when tools are chosen)."""


def tools_line(names: Sequence[str]) -> str:
    """The header's list of the session's tools: all of a few, the first few of many."""
    shown = ", ".join(visible(name) for name in names[:HEADER_TOOLS]) or "(none)"
    if len(names) <= HEADER_TOOLS:
        return shown
    return f"{shown}, … {len(names) - HEADER_TOOLS} more ({len(names)} in all)"


def usage_summary(usage: dict[str, int]) -> str:
    """`120 prompt / 45 completion tokens`, or `` when the model reported none."""
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if prompt is not None or completion is not None:
        return f"{_count(prompt)} prompt / {_count(completion)} completion tokens"
    total = usage.get("total_tokens")
    return f"{_count(total)} tokens" if total is not None else ""


def _count(value: object) -> str:
    # Usage comes from the server: a number normally, but nothing guarantees it.
    if value is None:
        return "0"
    return f"{value:,}" if isinstance(value, int) else visible(str(value))


def reply_summary(event: ModelReplied) -> str:
    """`finish tool_calls, 0.41s, 120 prompt / 45 completion tokens`."""
    parts = [f"finish {visible(event.finish_reason)}"] if event.finish_reason else []
    if event.latency:
        parts.append(f"{event.latency:.2f}s")
    tokens = usage_summary(event.usage)
    if tokens:
        parts.append(tokens)
    return ", ".join(parts)


def message_preview(message: dict[str, Any], max_chars: int = 100) -> str:
    """One wire-format message as `role: preview`, e.g. `tool get_weather [call_1]: {...}`."""
    role = str(message.get("role", "?"))
    label = role
    if role == "tool":
        name, call_id = message.get("name"), message.get("tool_call_id")
        label = " ".join(str(p) for p in ("tool", name, f"[{call_id}]" if call_id else None) if p)
    parts = [preview(_content_text(message.get("content")), max_chars)]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        parts.append("calls " + ", ".join(_call_preview(c) for c in calls))
    body = " | ".join(p for p in parts if p) or "(empty)"
    return visible(f"{label}: {body}")


RESULT_END = "\n</tool_result>"
"""Where a text protocol's result block ends: a closing tag inside a result is escaped when the
block is written, so each of these ends one block."""
RESULT_HEAD = re.compile(r'<tool_result id="[^"\n]*"[^>\n]*>')
"""A result block's opening tag: its call id first, so the id is the first thing shown."""


def fed_back_lines(message: dict[str, Any], max_chars: int = 100) -> list[str]:
    """One wire-format message as the view shows what was fed back: a user message of result
    blocks (the text protocols) is one line per block, each block's text cut on its own, so
    every call id in it is seen; any other message is its one-line preview."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return [message_preview(message, max_chars)]
    blocks = result_blocks(content)
    if not blocks:
        return [message_preview(message, max_chars)]
    lines = [f"user: {plural(len(blocks), 'result block')}"]
    for head, body in blocks:
        lines.append(visible(f"  {preview(head, NAME_CHARS * 2)} {preview(body, max_chars)}"))
    return lines


def result_blocks(content: str) -> list[tuple[str, str]]:
    """A text protocol's results message as (opening tag, result text) pairs; none when the
    message is not made of result blocks alone."""
    pieces = content.split(RESULT_END)
    if len(pieces) < 2 or pieces[-1].strip():
        return []
    blocks: list[tuple[str, str]] = []
    for piece in pieces[:-1]:
        piece = piece.lstrip("\n")
        head = RESULT_HEAD.match(piece)
        if head is None:
            return []
        blocks.append((head.group(), piece[head.end() :]))
    return blocks


def _content_text(content: Any) -> str:
    # OpenAI content is a string, null, or a list of typed parts.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return compact_json(content)


def _call_preview(call: Any) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return preview(compact_json(call), 60)
    return f"{function.get('name')}({preview(str(function.get('arguments', '')), 60)})"


@dataclass
class RunStats:
    """What the footer needs that RunFinished does not carry: per-iteration latencies, and how
    many calls failed (an error result: an unknown tool, bad arguments, a tool that raised)."""

    latencies: list[float] = field(default_factory=list)
    tools_offered: int = 0
    failed_calls: int = 0
    tagged: bool = False
    """The run asks for calls as tagged text (regex, stream tags), so a call without its tags
    was read leniently."""

    def update(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.latencies.clear()
            self.tools_offered = len(event.tools)
            self.failed_calls = 0
            self.tagged = event.strategy == "regex" or event.strategy_label == "stream tags"
        elif isinstance(event, ModelReplied) and event.latency:
            self.latencies.append(event.latency)
        elif isinstance(event, ToolFinished) and not event.result.ok:
            self.failed_calls += 1

    def latency_summary(self) -> str:
        """`latency 0.41s, 0.38s` (one per iteration), or `` when unknown."""
        if not self.latencies:
            return ""
        return "latency " + ", ".join(f"{t:.2f}s" for t in self.latencies)


def footer_parts(event: RunFinished, stats: RunStats) -> list[str]:
    """`2 iterations`, `3 tool calls`, `1.23s`, tokens, latencies, and last how the run
    stopped, `stopped: answered` too: every run's last line says why it ended."""
    calls = plural(event.tool_calls, "tool call")
    failed = min(stats.failed_calls, event.tool_calls)
    if failed:
        calls += " (all failed)" if failed == event.tool_calls else f" ({failed} failed)"
    parts = [plural(event.iterations, "iteration"), calls, f"{event.elapsed:.2f}s"]
    parts += [p for p in (usage_summary(event.usage), stats.latency_summary()) if p]
    stop = f"stopped: {event.stop_reason}"
    if event.stop_reason == "answered" and event.tool_calls == 0 and stats.tools_offered:
        # Worth saying: an answer that needed live data but called nothing is made up (硬答).
        stop += " without calling any tool"
    elif event.stop_reason == "answered" and failed and failed == event.tool_calls:
        # As much worth saying: every call failed, so no tool result stands behind the answer
        # ("Email sent." after send_email was an unknown tool three times).
        stop += " without any tool result"
    return [*parts, stop]


def partial_arguments(text: str) -> str:
    """Arguments still arriving, shown as the JSON they are becoming: `{"city": "北` reads as
    {"city": "北"}. jiter's partial mode closes what is still open; text it cannot read (single
    quotes, junk) is shown as it is."""
    if not text.strip():
        return ""
    try:
        value = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return text
    return json.dumps(value, ensure_ascii=False)


TIMELINE_WIDTH = 32
MIN_TIMELINE_WIDTH = 6


def filled_line(event: PlaceholdersFilled) -> str:
    """`filled convert_units {"value": 13, ...} from {{weather.high_c}}`: what the tool gets."""
    call = event.call
    written = ", ".join(visible(preview(p, 80)) for p in event.placeholders)
    return f"filled {shown_name(call.name)} {shown_arguments(call.arguments)} from {written}"


def from_result_line(event: CallFromResult) -> str:
    """`⚠ this call appears in the result of get_page #1.0: not run without your approval`."""
    where = f"{shown_name(event.result_name)} {shown_name(event.result_id)}"
    return (
        f"⚠ {shown_name(event.call.name)}: this call appears in the result of {where}: "
        "not run without your approval"
    )


def setting(value: float) -> str:
    """A sampling setting as typed: a seed of 1234567 must read back as that, not 1.23457e+06."""
    return str(value) if isinstance(value, int) else f"{value:g}"


CUT_SHORT = "cut short by max_tokens, or by a stream that broke off"
"""Under a parse error of a reply that ended inside the call: why it may have (the parser's
message already says where)."""


def lenient_note(call: ToolCall, tagged: bool) -> str:
    """How a call that broke the text protocol's format was read anyway, as `toolcall doctor`
    names it; "" for a call written as asked. `tagged`: the run asked for calls in tags (a
    native call's raw text is its own, never tagged)."""
    if unclosed(call.raw):
        return f"read leniently: no closing {CALL_CLOSE}"
    raw = call.raw.strip()
    if tagged and raw and not raw.startswith(CALL_OPEN):  # a ```json block, bare JSON, ...
        return f"read leniently: not in {CALL_OPEN} tags"
    return ""


def not_read_line(event: ReplyNotRead) -> str:
    """The line a reply its server could not read is shown as."""
    return f"{visible(event.message)}; the model is told so and asked again"


def withdrawn_title(event: AnswerWithoutTools) -> str:
    # What happened leads, why follows: a narrow terminal cuts a panel's title at its end.
    if event.failed_again:
        return "tools withdrawn: the model sent a failed call again unchanged"
    if event.repeated:
        return "tools withdrawn: the model repeated a call whose result it has"
    return f"tools withdrawn: {event.failed_rounds} tool rounds without progress"


def withdrawn_text(event: AnswerWithoutTools) -> str:
    """What the model was told when its tools went: the instruction, then the question again."""
    return "\n".join([f"told the model: {event.message}", *asked_again_lines(event)])


def asked_again_lines(event: AnswerWithoutTools) -> list[str]:
    """The question sent again after the instruction, as the view's line (none if it wasn't)."""
    return [f"then asked again: {visible(event.asked_again)}"] if event.asked_again else []


CUT_ANSWER = "cut at the token limit, so its end may be missing"


def answer_label(answer: FinalAnswer) -> str:
    """A best-effort answer was made without tools at the iteration limit: it may be a guess,
    and the view says so (the exit code, 3, says it too). An answer whose figures no result
    holds stood after one nudge: the view says which figures to check. An answer cut at the
    token limit may have lost its end: the view says so, and which limit."""
    said = ["best effort: made without tools at the iteration limit"] if answer.best_effort else []
    if answer.cut:
        said.append(CUT_ANSWER)
    if answer.ungrounded:
        figures = ", ".join(visible(preview(f, 40)) for f in answer.ungrounded[:5])
        said.append(f"unchecked: {figures} in no tool result")
    return f"answer ({'; '.join(said)})" if said else "answer"


GROUNDING_DONE = {
    "refused": "not run; sent again unchanged, it runs",
    "ran_on_repeat": "run, since it was sent again unchanged",
    "warned": "shown only (--grounding warn)",
    "nudged": "the model is told, and asked once more",
    "stands": "the second answer stands, marked",
}


def grounding_line(event: GroundingChecked) -> str:
    """`grounding: convert_units: value=25 in neither the question nor any result: not run; …`
    or `grounding: the answer's 2 in no tool result: the model is told, and asked once more`."""
    figures = ", ".join(visible(preview(f, 60)) for f in event.figures[:8])
    if event.call is not None:
        where = f"{shown_name(event.call.name)}: {figures} in neither the question nor any result"
    else:
        where = f"the answer's {figures} in no tool result"
    return f"grounding: {where}: {GROUNDING_DONE[event.action]}"


def timeline_lines(entries: Sequence[TimelineEntry], width: int = 0) -> list[str]:
    """A round's calls on one time axis, one line each, with what each waited for:

        get_weather #1.0    w      ████████····················  0.00-0.41s ok
        convert_units #1.1  c ← w  ········██··················  0.41-0.43s ok

    Drawn when there is something to see: two calls or more, or a call that waited. Given the
    `width` the lines must fit (0: any), the bar gives up cells before the times and outcomes
    do: those say how each call ended."""
    if len(entries) < 2 and not any(e.waits_for for e in entries):
        return []
    end = max((e.ended or 0.0 for e in entries), default=0.0) or 1e-9
    refs = {e.call_id: e.ref or e.name for e in entries}
    # Each call by its name and id: two calls of one tool would otherwise read the same.
    labels = [
        (
            f"{shown_name(e.name)[:24]} {shown_name(e.call_id)[:32]}",
            (e.ref or "")[:8] + _waits(e, refs),
        )
        for e in entries
    ]
    name_width = max(len(n) for n, _ in labels)
    ref_width = max(len(r) for _, r in labels)
    tail_width = max(len(_tail(e)) for e in entries)
    cells = _bar_cells(width, name_width + ref_width + tail_width + 6)
    return [
        f"{name:<{name_width}}  {ref:<{ref_width}}  {_bar(entry, end, cells)}  {_tail(entry)}"
        for entry, (name, ref) in zip(entries, labels, strict=True)
    ]


def _tail(entry: TimelineEntry) -> str:
    """`0.41-0.43s ok`, and the user's time answering its approval question apart."""
    waited = f" (after {entry.approval_wait:.2f}s waiting for approval)"
    return f"{_span(entry)} {entry.outcome}{waited if entry.approval_wait > 0 else ''}"


def _bar_cells(width: int, beside: int) -> int:
    """The bar's cells on a line `width` wide (0: any) that holds `beside` other characters."""
    if not width:
        return TIMELINE_WIDTH
    return max(MIN_TIMELINE_WIDTH, min(TIMELINE_WIDTH, width - beside))


def _span(entry: TimelineEntry) -> str:
    if entry.started is None or entry.ended is None:
        return "not run"
    return f"{entry.started:.2f}-{entry.ended:.2f}s"


def _waits(entry: TimelineEntry, refs: dict[str, str]) -> str:
    if not entry.waits_for:
        return ""
    return " ← " + ",".join(refs.get(w, w)[:8] for w in entry.waits_for)


def _bar(entry: TimelineEntry, end: float, width: int) -> str:
    """`·` idle, `░` waiting for the user's approval, `█` running."""
    cells = ["·"] * width
    started, ended = entry.started, entry.ended
    if started is not None and ended is not None:
        first = min(_cell(started, end, width), width - 1)
        if entry.approval_wait > 0:
            asked = _cell(started - entry.approval_wait, end, width)
            cells[asked:first] = ["░"] * (first - asked)
        last = max(_cell(ended, end, width), first + 1)
        cells[first:last] = ["█"] * (last - first)
    return "".join(cells)


def _cell(seconds: float, end: float, width: int) -> int:
    """Where `seconds` falls on the axis, 0 to `width`, whatever the time: one drawn from a trace
    may be negative, huge or not a number."""
    share = seconds / end
    share = min(max(share, 0.0), 1.0) if share == share else 0.0  # NaN is not equal to itself
    return int(share * width)


def chosen_line(event: ToolsChosen) -> str:
    """`sent 6 of 203 tools (lexical): get_weather 7.10, ..., search_tools`, and what the model
    found with search_tools: which tools the request carries, and why."""
    names = ", ".join(
        shown_name(tool.name)
        + ("" if tool.score is None else f" {tool.score:.2f}")
        + (" (found)" if tool.found else "")
        for tool in event.sent
    )
    line = f"sent {len(event.sent)} of {plural(event.total, 'tool')} ({event.ranker}): {names}"
    if event.added:
        line += "; added by search_tools: " + ", ".join(shown_name(n) for n in event.added)
    return line

"""What `toolcall serve` shows of each exchange, in the live view's styling: one compact block
per chat completion (the tail of the messages, the tools offered, the reply or its calls, and
which fault fired), one line for anything else."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.panel import Panel
from rich.text import Text

from toolcall_cli.offline import FAULT_KINDS
from toolcall_cli.render.base import (
    cut,
    message_preview,
    shown_name,
    usage_summary,
    visible,
)
from toolcall_cli.serve import MODEL_ID, Answer, Exchange, ServeSettings
from toolcall_cli.wire.completions import WireCall
from toolcall_cli.wording import plural

SYSTEM_ROLES = ("system", "developer")
TAIL_MESSAGES = 3
"""How many of the last messages a block shows: what is new since the model's last turn."""
PREVIEW_CHARS = 200
REPLY_CHARS, REPLY_LINES = 600, 6

_json_highlighter = JSONHighlighter()


@dataclass
class Reply:
    """An assistant reply read back from what was sent: a completion, or a stream's chunks."""

    content: str = ""
    calls: list[WireCall] = field(default_factory=list)
    finish_reason: str = ""
    usage: dict[str, int] = field(default_factory=dict)


def read_reply(answer: Answer) -> Reply:
    first = answer.objects[0]
    if first.get("object") == "chat.completion":
        return completion_reply(first)
    return streamed_reply(answer.objects)


def completion_reply(completion: dict[str, Any]) -> Reply:
    choice = completion["choices"][0]
    message = choice["message"]
    calls = [
        WireCall(call["id"], call["function"]["name"], call["function"]["arguments"])
        for call in message.get("tool_calls") or []
    ]
    return Reply(
        message.get("content") or "",
        calls,
        choice.get("finish_reason") or "",
        completion.get("usage") or {},
    )


def streamed_reply(chunks: Sequence[dict[str, Any]]) -> Reply:
    """The chunks put together as a client does: text joined, tool-call deltas by index."""
    reply, pieces = Reply(), list[str]()
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        reply.usage = chunk.get("usage") or reply.usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            pieces.append(delta.get("content") or "")
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
                function = part.get("function") or {}
                call["id"] = part.get("id") or call["id"]
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
            reply.finish_reason = choice.get("finish_reason") or reply.finish_reason
    reply.content = "".join(pieces)
    reply.calls = [WireCall(**calls[index]) for index in sorted(calls)]
    return reply


def exchange_view(exchange: Exchange) -> RenderableType:
    """The block (a chat completion answered) or line (anything else) for one exchange."""
    head = f"#{exchange.number} {exchange.method} {visible(exchange.path)}"
    if exchange.client_left:
        return Text(f"⚠ {head}: the client hung up before the answer was sent", style="yellow")
    if exchange.status in (404, 405):  # a path or method this server does not serve
        return Text(f"? {head} {exchange.status}: {visible(exchange.error)}", style="yellow")
    if exchange.error:
        line = Text.assemble((f"✗ {head} {exchange.status} ", "bold red"))
        line.append(visible(exchange.error), style="red")
        return line
    if exchange.answer is None or exchange.body is None:
        return Text(f"{head} {exchange.status}  {exchange.seconds:.2f}s", style="dim")
    return completion_panel(head, exchange, exchange.body, exchange.answer)


def completion_panel(
    head: str, exchange: Exchange, body: dict[str, Any], answer: Answer
) -> RenderableType:
    reply = read_reply(answer)
    rows: list[RenderableType] = [*message_tail(body["messages"]), offered_line(body)]
    if answer.note:
        rows.append(Text(f"ℹ {answer.note}", style="cyan"))
    if reply.content:
        shown = cut(visible(reply.content), REPLY_CHARS, REPLY_LINES)
        text = Text("← ", style="blue")
        text.append(shown.text)
        if shown.was_cut:
            text.append(" " + shown.note(), style="dim")
        rows.append(text)
    rows += [call_line(call) for call in reply.calls]
    rows += [fault_line(kind) for kind in answer.faults]
    streamed = "  streamed" if body.get("stream") else ""
    parts = [f"finish {reply.finish_reason}", f"{exchange.seconds:.2f}s"]
    parts += [usage_summary(reply.usage)] if reply.usage else []
    return Panel(
        Group(*rows),
        title=Text(f"{head} {exchange.status}{streamed}", style="bold"),
        title_align="left",
        subtitle=Text(" · ".join(parts), style="dim"),
        subtitle_align="right",
        border_style="yellow" if answer.faults else "blue",
    )


def message_tail(messages: Sequence[dict[str, Any]]) -> list[Text]:
    """The system prompt's size, then the last messages, one line each: what is new since the
    model's last turn (the prompt is the same every time, so only its size is shown)."""
    rows = []
    prompts = [m for m in messages if m.get("role") in SYSTEM_ROLES]
    if prompts:
        size = sum(len(message_text(m)) for m in prompts)
        rows.append(Text(f"system prompt, {size:,} chars", style="dim"))
    chat = [m for m in messages if m.get("role") not in SYSTEM_ROLES]
    shown = chat[-TAIL_MESSAGES:]
    if len(chat) > len(shown):
        rows.append(Text(f"… {plural(len(chat) - len(shown), 'earlier message')}", style="dim"))
    for message in shown:
        preview = message_preview(message, PREVIEW_CHARS)
        rows.append(Text(preview, style="dim", no_wrap=True, overflow="ellipsis"))
    return rows


def offered_line(body: dict[str, Any]) -> Text:
    names = [shown_name(t["function"]["name"]) for t in body.get("tools") or []]
    line = Text.assemble(("tools ", "dim"), ", ".join(names) or "(none sent)")
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        choice = choice["function"]["name"]
    if choice is not None:
        line.append_text(Text.assemble(("  ·  tool_choice ", "dim"), visible(str(choice))))
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        kind = visible(str(response_format.get("type")))
        line.append_text(Text.assemble(("  ·  response_format ", "dim"), kind))
    return line


def call_line(call: WireCall) -> Text:
    line = Text.assemble(("→ call ", "magenta"), (shown_name(call.name), "bold magenta"), " ")
    # The arguments as the model wrote them: with a fault on they may not be JSON at all.
    shown = cut(visible(call.arguments), REPLY_CHARS)
    line.append_text(_json_highlighter(Text(shown.with_note())))
    line.append(f"  {shown_name(call.id)}", style="dim")
    return line


def fault_line(kind: str) -> Text:
    return Text(f"⚠ fault {kind}: {FAULT_KINDS.get(kind, '')}", style="yellow")


def banner(url: str, settings: ServeSettings, host_note: str = "") -> RenderableType:
    body = Text.assemble((url, "bold"), ("  ·  model ", "dim"), (MODEL_ID, "bold"))
    body.append_text(Text.assemble(("  ·  seed ", "dim"), str(settings.seed)))
    faults = ", ".join(settings.faults) or "none"
    body.append_text(Text.assemble("\n", ("faults ", "dim"), faults))
    if settings.faults:
        body.append_text(Text.assemble(("  ·  rate ", "dim"), f"{settings.fault_rate:g}"))
    serves = "POST /v1/chat/completions (stream or not), GET /v1/models  ·  Ctrl-C stops"
    body.append(f"\n{serves}", style="dim")
    if host_note:
        body.append(f"\n⚠ {host_note}", style="yellow")
    return Panel(body, title="toolcall serve", title_align="left", border_style="cyan")


class ServeLog:
    """Prints exchanges as they finish, one at a time (handlers run in threads). If the reader
    of the output goes away, `on_closed` is called once, so the server can stop."""

    def __init__(self, console: Console, on_closed: Callable[[], None] = lambda: None) -> None:
        self._console = console
        self._lock = threading.Lock()
        self.on_closed = on_closed
        self.closed = False

    def show(self, renderable: RenderableType) -> None:
        with self._lock:
            if self.closed:
                return
            try:
                self._console.print(renderable)
            except BrokenPipeError:
                self.closed = True
                self.on_closed()

    def exchange(self, exchange: Exchange) -> None:
        self.show(exchange_view(exchange))


def message_text(message: dict[str, Any]) -> str:
    """A message's content as text: a string, or the text of its parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""

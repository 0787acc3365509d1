"""`toolcall prompt --all`: the first request of every strategy side by side, with what each
spends on teaching the model its tools (system prompt, tools JSON, response_format)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import typer
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from toolcall_cli import strictjson
from toolcall_cli.app.build import every_first_request
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.app.variants import Variant
from toolcall_cli.cli.entry import warn
from toolcall_cli.render.base import visible
from toolcall_cli.wire.tokens import as_json, estimate_tokens, request_tokens

PARTS = {"system_prompt": "system prompt", "tools": "tools", "response_format": "response_format"}
"""The parts of a request that carry the tools and the call format, in the order shown, with
their columns' titles."""
PANEL_WIDTH = 48
"""Narrowest panel; a terminal with room for fewer than two stacks them."""


@dataclass(frozen=True)
class Size:
    chars: int
    tokens: int
    """Estimated as the context-window check estimates them (wire/tokens.py)."""


@dataclass(frozen=True)
class FirstRequest:
    variant: Variant
    body: dict[str, Any]

    def sizes(self) -> dict[str, Size]:
        """Each part's size; a part the request does not carry is 0."""
        systems = system_prompts(self.body)
        tools, response_format = self.body.get("tools"), self.body.get("response_format")
        return {
            "system_prompt": Size(
                sum(map(len, systems)), sum(estimate_tokens(text) for text in systems)
            ),
            "tools": json_size(tools),
            "response_format": json_size(response_format),
        }

    def record(self) -> dict[str, Any]:
        return {
            **self.variant.record(),
            "sizes": {part: dataclasses.asdict(size) for part, size in self.sizes().items()},
            "request_tokens": request_tokens(self.body),
            "body": self.body,
        }


def system_prompts(body: dict[str, Any]) -> list[str]:
    """The text of every system message (the JSON mode may send a hint beside its prompt)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [
        m["content"]
        for m in messages
        if isinstance(m, dict) and m.get("role") == "system" and isinstance(m.get("content"), str)
    ]


def json_size(value: Any) -> Size:
    if not value:
        return Size(0, 0)
    text = as_json(value)
    return Size(len(text), estimate_tokens(text))


def print_first_requests(question: str, options: SessionOptions, as_json: bool) -> None:
    """`toolcall prompt --all`: the sizes and the requests side by side (or as JSON)."""
    from toolcall_cli.cli._running import pipe_console

    model_name, bodies = every_first_request(options, question, warn)
    requests = [FirstRequest(variant, body) for variant, body in bodies]
    if as_json:
        shown = {
            "question": question,
            "model": model_name,
            "requests": [r.record() for r in requests],
        }
        typer.echo(strictjson.dumps(shown, indent=2))
        return
    print_side_by_side(requests, pipe_console())


def print_side_by_side(requests: Sequence[FirstRequest], console: Console) -> None:
    """A table of the sizes, then one panel per request: side by side where the terminal is wide
    enough, stacked where it is not."""
    console.print(size_table(requests))
    per_row = min(len(requests), console.width // PANEL_WIDTH)
    if per_row < 2:
        for request in requests:
            console.print(request_panel(request))
        return
    grid = Table.grid(expand=True)
    for _ in range(per_row):
        grid.add_column(ratio=1, overflow="fold")
    for start in range(0, len(requests), per_row):
        grid.add_row(*(request_panel(r) for r in requests[start : start + per_row]))
    console.print(grid)


def size_table(requests: Sequence[FirstRequest]) -> Table:
    table = Table(
        title="first request: characters / estimated tokens", title_justify="left", expand=False
    )
    table.add_column("strategy", style="bold cyan", no_wrap=True)
    for title in PARTS.values():
        table.add_column(title, justify="right", no_wrap=True)
    table.add_column("request\ntokens", justify="right", no_wrap=True)
    for request in requests:
        sizes = request.sizes()
        table.add_row(
            request.variant.label,
            *(size_cell(sizes[part]) for part in PARTS),
            f"{request_tokens(request.body):,}",
        )
    return table


def size_cell(size: Size) -> str:
    return f"{size.chars:,} / {size.tokens:,}" if size.chars else "-"


def request_panel(request: FirstRequest) -> Panel:
    """The body key by key: messages as their text (the system prompt reads as the model reads
    it, not as one escaped JSON string), everything else as JSON."""
    parts: list[RenderableType] = []
    for key, value in request.body.items():
        if key == "messages" and isinstance(value, list):
            for message in value:
                parts += message_lines(message)
        elif isinstance(value, (dict, list)):
            parts += [Text(f"{key}:", style="bold"), Text(visible(as_json_block(value)))]
        else:
            parts.append(Text.assemble((f"{key}: ", "bold"), visible(as_json(value))))
    return Panel(Group(*parts), title=request.variant.label, title_align="left")


def message_lines(message: Any) -> list[RenderableType]:
    if not isinstance(message, dict):
        return [Text(visible(as_json(message)))]
    content = message.get("content")
    text = content if isinstance(content, str) else as_json_block(content)
    return [Text(f"{message.get('role', '?')}:", style="bold"), Text(visible(text))]


def as_json_block(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=repr)

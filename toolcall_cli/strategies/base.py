"""The strategy boundary: how tools and results are put on the wire, and how replies are parsed."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolcall_cli.events import ParseError, ParserEvent
from toolcall_cli.messages import Message, ToolCall, ToolSpec
from toolcall_cli.wire import ModelRequest, Sampling


@dataclass(frozen=True)
class Reply:
    """A whole model reply after parsing."""

    raw: str
    """The model's output verbatim (content text, or the message JSON for native calls)."""
    text: str
    """Display text: everything outside calls."""
    calls: tuple[ToolCall, ...] = ()
    errors: tuple[ParseError, ...] = ()
    reasoning: str = ""
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    native: dict[str, Any] | None = None
    """For native function calling: the assistant message's `content` and `tool_calls` exactly as
    they must be echoed back (broken calls included, so every tool message answers a known id)."""
    from_answer_tool: bool = False
    """`text` is the argument of the answer tool (`--schema-mode required`): the model's answer,
    never read again for calls, whatever it looks like."""
    calls_from_content: bool = False
    """The calls were written as JSON text in the content of a native reply, and read from it
    (as vLLM and Ollama do for several model families)."""
    unreadable: str | None = None
    """Why content shaped like a call could not be read as one (then it is no answer either)."""


class ReplyParser(Protocol):
    """Consumes one reply's chunks (OpenAI dicts) and yields parser events as they resolve.

    The events come as a read-only Sequence: a parser may hand out one shared empty tuple for
    the many chunks that resolve nothing, so a caller copies before changing them."""

    def feed(self, chunk: dict[str, Any]) -> Sequence[ParserEvent]: ...

    def close(self) -> Sequence[ParserEvent]: ...

    def reply(self) -> Reply:
        """The whole reply; valid after close()."""
        ...


class Strategy(Protocol):
    name: str

    @property
    def mode(self) -> str:
        """How it puts calls on the wire within its kind (schema: tools, json or required;
        stream: tags or native); empty where it has one way (regex)."""
        ...

    streaming: bool
    """True when tools start while the reply is still arriving."""
    sampling: Sampling
    """What every request it builds carries of temperature, top_p and seed (recorded by the
    loop in RunStarted)."""

    def build_request(
        self, history: Sequence[Message], tools: Sequence[ToolSpec], model: str
    ) -> ModelRequest: ...

    def parser(self, call_id_prefix: str, tools: Collection[str] = ()) -> ReplyParser:
        """A parser for one reply; its calls get ids starting with `call_id_prefix`. `tools`
        are the names the request offered (a bare `{"name": ...}` in content is read as a call
        only when it names one)."""
        ...

    def to_wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Messages in this strategy's wire format (what the model will actually see)."""
        ...

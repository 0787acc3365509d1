"""What the offline model reads from a request and what it decides: calls made and their
results, the question and the chat before it, and the next step (calls or an answer)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec


@dataclass(frozen=True)
class PlannedCall:
    """One call the model means to make."""

    name: str
    arguments: dict[str, Any]
    key: tuple[str, Any] | None = field(default=None, compare=False)
    """The parameter and value that tells this call apart from its siblings (city 北京 vs 上海)."""
    garbled: bool = field(default=False, compare=False)
    """Read back from call text that was not valid JSON (cut off or broken): the arguments are
    a repair's guess, not necessarily what was meant."""


_UNPARSED_RE = re.compile(
    r"not valid JSON|never closed|ended inside a tool call|is not a JSON object|"
    r"not the JSON object|matches neither a call|without a function name|could not be read|"
    r"holds no tool call|block is empty",
    re.I,
)


@dataclass(frozen=True)
class Exchange:
    """A call made in an earlier turn and the result that came back for it (None if none did)."""

    call: PlannedCall
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.lstrip().lower().startswith("error")

    @property
    def unparsed(self) -> bool:
        """The call never ran because its text could not be parsed (cut off, broken JSON):
        what was read back of it is not what the model meant, so it is made again in full."""
        return self.failed and (
            self.call.garbled or _UNPARSED_RE.search(self.result or "") is not None
        )


@dataclass(frozen=True)
class EarlierQuestion:
    """A question asked before the current one in the same conversation, with its calls."""

    question: str
    turns: tuple[tuple[Exchange, ...], ...] = ()

    @property
    def exchanges(self) -> list[Exchange]:
        return [e for turn in self.turns for e in turn]


Shape = Literal["text", "native", "json"]
"""text: tools in the system prompt, calls as tagged text; native: `tools` / `tool_calls`;
json: `response_format` json_schema, one JSON object per reply."""


@dataclass(frozen=True)
class CallFormat:
    """How the request wants calls written: its wire shape and, for text, the tags that the
    system prompt's example call is written in."""

    shape: Shape = "text"
    open_tag: str = "<tool_call>"
    close_tag: str = "</tool_call>"

    def tagged(self, call_json: str) -> str:
        return f"{self.open_tag}{call_json}{self.close_tag}"


@dataclass(frozen=True)
class Conversation:
    """Everything the brain reads from one request."""

    question: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[tuple[Exchange, ...], ...] = ()
    """The model's earlier turns since the question, each with its calls and their results."""
    earlier: tuple[EarlierQuestion, ...] = ()
    """The questions before this one, oldest first (a chat's history)."""
    format: CallFormat = CallFormat()


@dataclass(frozen=True)
class Decision:
    """What to say: calls (with an optional lead-in sentence), or a final answer."""

    calls: tuple[PlannedCall, ...] = ()
    text: str = ""
    """The lead-in sentence when there are calls; the whole answer when there are none."""
    style: frozenset[str] = frozenset()
    """How carelessly the calls' JSON is written: `single_quotes`, `trailing_comma`,
    `unquoted_keys` (faults)."""

    @property
    def is_answer(self) -> bool:
        return not self.calls


def same_call(a: PlannedCall, b: PlannedCall) -> bool:
    return a.name == b.name and a.arguments == b.arguments


def decode(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content

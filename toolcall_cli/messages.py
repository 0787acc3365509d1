"""The values that flow through a run: tool specs, calls, results and chat messages."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.feedback import Problem

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """What the model is shown of a tool: its name, description and JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI `tools` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for, after parsing.

    `arguments` is whatever the model sent once decoded: usually a dict, but a model can send a
    string, a number or nothing, and the executor is the one that rejects those.
    """

    id: str
    name: str
    arguments: Any
    raw: str = ""
    """The exact text (or JSON string) the call was parsed from."""
    repaired: bool = False
    """True when strict JSON parsing failed and json-repair produced the arguments."""
    ref: str | None = None
    """The id the model gave the call (with --dag), for other calls of the reply to refer to."""
    depends_on: tuple[str, ...] = ()
    """The `ref`s of calls in the same reply that must finish first (with --dag)."""

    def arguments_json(self) -> str:
        """The arguments as a compact JSON string, the way OpenAI's wire format carries them."""
        return json.dumps(self.arguments if self.arguments is not None else {}, ensure_ascii=False)


@dataclass(frozen=True)
class ToolResult:
    """What came back from running (or refusing to run) one call."""

    call_id: str
    name: str
    content: str
    """The text fed back to the model."""
    ok: bool = True
    error_kind: str | None = None
    """None on success; otherwise e.g. "unknown_tool", "invalid_arguments", "tool_error",
    "timeout", "parse_error"."""
    duration: float = 0.0
    full_length: int | None = None
    """Length of the result before it was cut for the model, when it was cut."""
    cached: bool = False
    """True when an identical earlier call's result was reused instead of running the tool."""
    coerced: tuple[str, ...] = ()
    """Arguments converted before validation, one note each (e.g. `n`: "5" → 5)."""
    output: str = ""
    """What the tool printed (stdout and stderr) while it ran: shown to the user, never fed
    back to the model, which reads `content` only."""
    problems: tuple[Problem, ...] = ()
    """What was wrong, as data (feedback.py): `content` is what they say to the model."""


@dataclass(frozen=True)
class Message:
    """One chat message in the run's history, independent of any wire format."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    """For role "tool": the tool's name."""
    reasoning: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def call_key(call: ToolCall) -> tuple[str, str]:
    """Same tool and canonically equal arguments (key order and spacing do not matter)."""
    return call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)


def system(content: str) -> Message:
    return Message(role="system", content=content)


def user(content: str) -> Message:
    return Message(role="user", content=content)


def tool_message(result: ToolResult) -> Message:
    return Message(
        role="tool", content=result.content, tool_call_id=result.call_id, name=result.name
    )

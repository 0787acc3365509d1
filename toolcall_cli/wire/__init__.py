"""The wire types every layer shares: a chat-completions request as it goes out, a model that
could not answer, and the key that marks a client's note in a stream of chunks.

They sit below strategies, models and the offline model, so those never import each other for
them. Public here: these types, and the modules `completions` (the chat-completions wire
writer), `sse` (server-sent events) and `tokens` (a token estimate)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class ModelRequest:
    """One request, exactly as it goes on the wire.

    `body` is an OpenAI chat-completions request body: `model`, `messages`, and where the
    strategy uses them `tools`, `tool_choice`, `response_format` and `stream`.
    """

    body: dict[str, Any]

    @property
    def streaming(self) -> bool:
        return bool(self.body.get("stream"))


@dataclass(frozen=True)
class Sampling:
    """The sampling settings a request carries (`--temperature`, `--top-p`, `--seed`, and the
    reply's length, `--max-tokens`); None leaves the server's own default, and is not sent.

    No default is chosen here on purpose: llama-server samples at 0.8 when told nothing, and the
    tool-use defaults are set where the bench measured them, for the kind of server a small
    model runs on (app/_measured.py: temperature 0 and a max_tokens sized to the context window,
    on a llama.cpp or Ollama server), not guessed for all."""

    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    """The most tokens one reply may hold: a small model that never stops writing is cut off by
    the server instead of running into the read timeout (or the context window)."""

    def fields(self) -> dict[str, float | int]:
        """The settings that are set, by their request-body names (the fields' own names)."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    def on(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` with the settings that are set added."""
        return {**body, **self.fields()}


NO_SAMPLING = Sampling()
"""Nothing set: every request leaves sampling to the server."""

NOTICE_KEY = "x_toolcall_notice"
"""A chunk holding this key is a note for the user from the client (a retry after HTTP 429, say),
not model output: the loop shows it and the parsers never see it."""


UNREADABLE_REPLY = "unreadable_reply"
"""The kind of a ModelError for a tool call the model wrote and its server could not read."""


class ModelError(Exception):
    """The model could not answer: unreachable, refused the request, or sent garbage.

    `kind` is one of "connection", "timeout", "auth", "not_found", "bad_request",
    "rate_limit", "server", "protocol", "unsupported", "redirect", "too_large",
    "context_length", "unreadable_reply". A "context_length" error may carry what the server
    said of it: its window (`window`) and how many tokens it counted in the request
    (`prompt_tokens`). An "unreadable_reply" is the model's own fault, not the server's: the
    server reads the model's tool calls itself and could not read the one it wrote; `said` is
    the server's reason, in its words, for the model to read.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        window: int | None = None,
        prompt_tokens: int | None = None,
        said: str = "",
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.window = window
        self.prompt_tokens = prompt_tokens
        self.said = said


@dataclass(frozen=True)
class ContextWindow:
    """How many tokens a request and its reply may take together, and who said so."""

    tokens: int
    source: str
    """Where it was learned, in words that complete "from ...": "--context-window",
    "the server's /props"."""


@dataclass(frozen=True)
class WireFormat:
    """How a request asks the model to reply, read off its body: tool calls as native
    `tool_calls` (the request offers `tools`), as JSON text shaped by a `response_format`, or as
    text; and whether the reply is streamed. A recorded reply can only be played back to a
    request that asks for it in the same format."""

    calls: Literal["native", "json", "text"]
    streamed: bool

    @classmethod
    def of(cls, body: dict[str, Any]) -> WireFormat:
        calls: Literal["native", "json", "text"] = "text"
        if body.get("tools"):
            calls = "native"
        elif body.get("response_format"):
            calls = "json"
        return cls(calls, bool(body.get("stream")))

    def describe(self) -> str:
        """`native tool_calls, streamed`, `JSON output, not streamed`, ..."""
        calls = {"native": "native tool_calls", "json": "JSON output", "text": "tagged text"}
        return f"{calls[self.calls]}, {'streamed' if self.streamed else 'not streamed'}"

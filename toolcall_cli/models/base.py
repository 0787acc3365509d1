"""The model boundary: a request body in, OpenAI chat-completions shaped dicts out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol


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


NOTICE_KEY = "x_toolcall_notice"
"""A chunk holding this key is a note for the user from the client (a retry after HTTP 429, say),
not model output: the loop shows it and the parsers never see it."""


class ModelError(Exception):
    """The model could not answer: unreachable, refused the request, or sent garbage.

    `kind` is one of "connection", "timeout", "auth", "not_found", "bad_request",
    "rate_limit", "server", "protocol", "unsupported".
    """

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class Model(Protocol):
    """Anything that answers a chat-completions request.

    A non-streaming request yields exactly one `chat.completion` object; a streaming request
    (`body["stream"]` true) yields `chat.completion.chunk` objects as they arrive.
    Failures raise ModelError.
    """

    name: str

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]: ...

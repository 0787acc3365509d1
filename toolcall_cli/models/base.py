"""The model boundary: a request body in, OpenAI chat-completions shaped dicts out, and the bounds
on what one request may cost."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from toolcall_cli.wire import ContextWindow, ModelRequest

MiB = 1 << 20

# Bounds on what one model request may cost. Each is far above what a real reply needs, so only
# a broken or hostile server meets them; they exist so that such a server costs seconds and a
# few MiB, not the machine's memory or a hang forever.
MAX_RESPONSE_BYTES = 32 * MiB
"""One answer's body after decompression. A long reply of a large-context model is a few hundred
KiB of SSE; a 1 MB gzip body that inflates to 1 GB must stop here."""
MAX_LINE_BYTES = 4 * MiB
"""One line of a server-sent-event stream: one chunk, normally under a KiB."""
MAX_REPLY_CHARS = 2_000_000
"""One reply's text (content, reasoning and tool-call arguments): about 500k tokens, beyond any
model's output limit."""
REQUEST_TIMEOUT = 300.0
"""Seconds one model request may take in all, first byte to last: a server that trickles a
byte a second never trips a read timeout, so the whole answer needs a bound of its own. Long
reasoning replies take a minute or two."""


class Model(Protocol):
    """Anything that answers a chat-completions request.

    A non-streaming request yields exactly one `chat.completion` object; a streaming request
    (`body["stream"]` true) yields `chat.completion.chunk` objects as they arrive.
    Failures raise ModelError.
    """

    name: str

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]: ...


def context_window_of(model: Model) -> ContextWindow | None:
    """The context window a model knows of (an HTTP model asks its server once), or None."""
    window = _learnt(model, "context_window")
    return window if isinstance(window, ContextWindow) else None


def server_kind_of(model: Model) -> str | None:
    """What kind of server stands behind a model ("llama.cpp", "Ollama"), when it can tell (an
    HTTP model learns it by the same probe as its window), else None."""
    kind = _learnt(model, "server_kind")
    return kind if isinstance(kind, str) else None


def _learnt(model: Model, method: str) -> Any:
    """What `model.<method>()` answers, or None. Only models that can learn it have the method
    (the offline and scripted models have none), and one whose method breaks does not know."""
    learn = getattr(model, method, None)
    if not callable(learn):
        return None
    try:
        return learn()
    except Exception:  # an unknown window or kind is never a failure of the run
        return None

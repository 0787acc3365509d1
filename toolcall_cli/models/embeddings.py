"""A client for an OpenAI-compatible `POST {url}/embeddings` (llama-server, Ollama, OpenAI):
texts in, one vector each out. The key is sent as a bearer token and never shown. The answer is
read as the chat answers are (models/_body.py): within --max-response-bytes after decompression
and --request-timeout, however the server sends it; the URL may be the model server's, and that
server may be hostile."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any

import httpx

from toolcall_cli.keys import display_url, redact
from toolcall_cli.models._body import Deadline, error_body, read_body, send_streamed
from toolcall_cli.models.base import MAX_RESPONSE_BYTES, REQUEST_TIMEOUT
from toolcall_cli.models.openai_compat import error_text, loads, one_line
from toolcall_cli.wire import ModelError

BATCH = 64
"""Texts per request: servers cap a request's inputs (llama-server by its batch size)."""


class EmbeddingError(Exception):
    """The endpoint could not give vectors; the message is one line, without the key."""


@dataclass(frozen=True)
class EmbeddingClient:
    url: str
    """The API root, e.g. http://localhost:8080/v1; `/embeddings` is added."""
    model: str
    api_key: str | None = None
    timeout: float = 30.0
    """Seconds to wait for a connection and for each read."""
    transport: httpx.BaseTransport | None = None
    """Tests give an httpx.MockTransport."""
    max_response_bytes: int = MAX_RESPONSE_BYTES
    """One answer's body after decompression (--max-response-bytes)."""
    request_timeout: float = REQUEST_TIMEOUT
    """Seconds one request may take in all, however the server trickles (--request-timeout)."""

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order, BATCH texts a request."""
        vectors: list[list[float]] = []
        with httpx.Client(
            transport=self.transport, timeout=self.timeout, follow_redirects=False
        ) as client:
            for start in range(0, len(texts), BATCH):
                vectors.extend(self._batch(client, texts[start : start + BATCH]))
        return vectors

    def _batch(self, client: httpx.Client, texts: list[str]) -> list[list[float]]:
        endpoint = self.url.rstrip("/") + "/embeddings"
        shown = display_url(endpoint)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        request = client.build_request(
            "POST", endpoint, json={"model": self.model, "input": texts}, headers=headers
        )
        deadline = Deadline.after(self.request_timeout)
        try:
            response = send_streamed(client, request, deadline.remaining())
            if response is None:
                raise deadline.error()
            with contextlib.closing(response):
                if response.status_code != 200:
                    said = self._shown(_error_text(response, deadline, self.timeout))
                    raise EmbeddingError(f"{shown} answered HTTP {response.status_code}: {said}")
                body = read_body(
                    response,
                    max_bytes=self.max_response_bytes,
                    deadline=deadline,
                    read_timeout=self.timeout,
                )
        except httpx.HTTPError as error:
            said = self._shown(f"{type(error).__name__}: {error}")
            raise EmbeddingError(f"{shown}: {said}") from None
        except ModelError as error:
            raise EmbeddingError(f"{shown}: {self._shown(str(error))}") from None
        return vectors_of(body, len(texts))

    def _shown(self, text: str) -> str:
        """What a server said, as one line without the key: a server may quote the key it
        refused, and send control characters a terminal would obey."""
        return one_line(redact(text, [self.api_key or ""]))


def vectors_of(body: bytes, count: int) -> list[list[float]]:
    """`data[i].embedding` for each input, in input order (by `index` when it is given)."""
    try:
        answer: Any = loads(body)
    except ValueError:
        raise EmbeddingError("the embeddings answer is not JSON") from None
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise EmbeddingError(f"the embeddings answer has no `data` list of {count} vectors")
    if all(isinstance(item, dict) and isinstance(item.get("index"), int) for item in data):
        data = sorted(data, key=lambda item: item["index"])
    vectors = []
    for item in data:
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(vector, list) or not vector or not all(_number(x) for x in vector):
            raise EmbeddingError("an embedding in the answer is not a list of numbers")
        vectors.append([float(x) for x in vector])
    return vectors


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _error_text(response: httpx.Response, deadline: Deadline, read_timeout: float) -> str:
    """The server's own error message when it sent one, cut to one short line."""
    body = error_body(response, deadline, read_timeout)
    try:
        message = error_text(loads(body))
    except ValueError:
        message = ""
    text = message or body.decode("utf-8", errors="replace")
    return one_line(text)[:200] or response.reason_phrase

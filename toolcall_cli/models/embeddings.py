"""A client for an OpenAI-compatible `POST {url}/embeddings` (llama-server, Ollama, OpenAI):
texts in, one vector each out. The key is sent as a bearer token and never shown."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import httpx

BATCH = 64
"""Texts per request: servers cap a request's inputs (llama-server by its batch size)."""
MAX_EMBED_BYTES = 64 * 1024 * 1024
"""An answer larger than this is refused: 64 vectors of 4,096 floats is about 5 MB of JSON."""


class EmbeddingError(Exception):
    """The endpoint could not give vectors; the message is one line, without the key."""


@dataclass(frozen=True)
class EmbeddingClient:
    url: str
    """The API root, e.g. http://localhost:8080/v1; `/embeddings` is added."""
    model: str
    api_key: str | None = None
    timeout: float = 30.0
    transport: httpx.BaseTransport | None = None
    """Tests give an httpx.MockTransport."""

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts)

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        with httpx.Client(transport=self.transport, timeout=self.timeout) as client:
            for start in range(0, len(texts), BATCH):
                vectors.extend(self._batch(client, texts[start : start + BATCH]))
        return vectors

    def _batch(self, client: httpx.Client, texts: list[str]) -> list[list[float]]:
        from toolcall_cli.keys import display_url

        endpoint = self.url.rstrip("/") + "/embeddings"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = client.post(
                endpoint, json={"model": self.model, "input": texts}, headers=headers
            )
        except httpx.HTTPError as error:
            raise EmbeddingError(
                f"{display_url(endpoint)}: {type(error).__name__}: {error}"
            ) from None
        if response.status_code != 200:
            said = _error_text(response)
            if self.api_key:  # a server may quote the key it refused
                said = said.replace(self.api_key, "****")
            raise EmbeddingError(
                f"{display_url(endpoint)} answered HTTP {response.status_code}: {said}"
            )
        if len(response.content) > MAX_EMBED_BYTES:
            raise EmbeddingError(f"{display_url(endpoint)} answered more than 64 MB")
        return vectors_of(response, len(texts))


def vectors_of(response: httpx.Response, count: int) -> list[list[float]]:
    """`data[i].embedding` for each input, in input order (by `index` when it is given)."""
    try:
        body: Any = response.json()
    except ValueError:
        raise EmbeddingError("the embeddings answer is not JSON") from None
    data = body.get("data") if isinstance(body, dict) else None
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


def _error_text(response: httpx.Response) -> str:
    """The server's own error message when it sent one, cut to one short line."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    text = message if isinstance(message, str) else response.text
    flat = " ".join(text.split())
    return flat[:200] or response.reason_phrase

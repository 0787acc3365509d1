"""Any OpenAI-compatible chat-completions endpoint over httpx, streaming or not.

Every failure becomes a ModelError with a kind and one clear sentence. The API key is sent in
a header and never appears in a message, a log or a trace.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from toolcall_cli.models.base import NOTICE_KEY, ModelError, ModelRequest

RETRY_STATUSES = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 2
    """Retries for 429 and 5xx answers, on top of the first attempt."""
    max_retry_wait: float = 20.0
    """Longest Retry-After (or backoff) this client will sleep before a retry."""

    def __repr__(self) -> str:  # the key must never leak through a repr
        key = "set" if self.api_key else "none"
        return f"Endpoint(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"


class OpenAICompatModel:
    """A model behind `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.endpoint = endpoint
        self.name = endpoint.model
        self._sleep = sleep
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(endpoint.read_timeout, connect=endpoint.connect_timeout),
            headers=self._headers(),
        )

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        return headers

    @property
    def url(self) -> str:
        return self.endpoint.base_url.rstrip("/") + "/chat/completions"

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        try:
            yield from self._stream(request)
        except httpx.TimeoutException:
            # Reading a body after the headers arrived: what _send and _events do not cover.
            waited = self.endpoint.read_timeout
            message = f"{self.endpoint.base_url} stopped answering for {waited:g} s"
            raise ModelError(redact(message, self.endpoint.api_key), kind="timeout") from None
        except httpx.HTTPError as error:
            message = f"the connection to {self.endpoint.base_url} failed mid-answer ({error})"
            raise ModelError(redact(message, self.endpoint.api_key), kind="protocol") from None
        except ModelError as error:
            # Providers echo keys back in error messages; nothing that leaves here may hold one.
            raise ModelError(redact(str(error), self.endpoint.api_key), kind=error.kind) from None

    def _stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = {**request.body, "model": self.endpoint.model}
        for attempt in range(self.endpoint.max_retries + 1):
            last = attempt == self.endpoint.max_retries
            with self._send(body) as response:
                if response.status_code in RETRY_STATUSES and not last:
                    wait = retry_wait(response, attempt, self.endpoint.max_retry_wait)
                    response.close()
                    note = retry_note(response.status_code, wait, attempt, self.endpoint)
                    yield {NOTICE_KEY: note}
                    self._sleep(wait)
                    continue
                if response.status_code >= 400:
                    response.read()
                    raise http_error(response, self.endpoint)
                if request.streaming:
                    yield from self._events(response)
                else:
                    yield completion_json(response)
                return

    def _send(self, body: dict[str, Any]) -> Any:
        try:
            request = self._client.build_request("POST", self.url, json=body)
            response = self._client.send(request, stream=True)
        except httpx.ConnectTimeout:
            raise ModelError(
                f"connecting to {self.endpoint.base_url} timed out after "
                f"{self.endpoint.connect_timeout:g} s",
                kind="timeout",
            ) from None
        except httpx.ReadTimeout:
            raise ModelError(
                f"{self.endpoint.base_url} did not answer within {self.endpoint.read_timeout:g} s",
                kind="timeout",
            ) from None
        except httpx.ConnectError as error:
            raise ModelError(
                connect_message(self.endpoint.base_url, error), kind="connection"
            ) from None
        except httpx.HTTPError as error:
            raise ModelError(
                f"request to {self.endpoint.base_url} failed: {error}", kind="connection"
            ) from None
        return _Closing(response)

    def _events(self, response: httpx.Response) -> Iterator[dict[str, Any]]:
        try:
            for data in sse_data(response.iter_lines()):
                if data == "[DONE]":
                    return
                try:
                    event = json.loads(data)
                except json.JSONDecodeError:
                    raise ModelError(
                        f"the stream sent a malformed event: {data[:80]!r}", kind="protocol"
                    ) from None
                if not isinstance(event, dict):
                    raise ModelError(
                        f"the stream sent an event that is not a JSON object: {data[:80]!r}",
                        kind="protocol",
                    )
                if "error" in event and not event.get("choices"):
                    raise ModelError(
                        f"the stream reported an error: {error_text(event)}", kind="server"
                    )
                yield event
        except httpx.ReadTimeout:
            raise ModelError(
                f"the stream stalled: nothing for {self.endpoint.read_timeout:g} s", kind="timeout"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            raise ModelError(f"the stream was cut mid-reply ({error})", kind="protocol") from None

    def close(self) -> None:
        self._client.close()


class _Closing:
    """Closes a streamed response however the `with` block is left (including Ctrl-C)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    def __enter__(self) -> httpx.Response:
        return self.response

    def __exit__(self, *exc: object) -> None:
        self.response.close()


def sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The `data:` payloads of a server-sent-event stream; multi-line data is joined with \\n.

    Comments (`:`), `event:`/`id:`/`retry:` fields and blank keep-alives are skipped.
    """
    buffered: list[str] = []
    for line in lines:
        if not line.strip():
            if buffered:
                yield "\n".join(buffered)
                buffered = []
            continue
        if line.startswith("data:"):
            payload = line[5:].removeprefix(" ")
            # Some servers omit the blank line between events; a complete JSON line stands alone.
            if buffered and _looks_whole(payload):
                yield "\n".join(buffered)
                buffered = []
            buffered.append(payload)
    if buffered:
        yield "\n".join(buffered)


def _looks_whole(payload: str) -> bool:
    return payload == "[DONE]" or (payload.startswith("{") and payload.rstrip().endswith("}"))


def completion_json(response: httpx.Response) -> dict[str, Any]:
    response.read()
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        snippet = response.text[:80].replace("\n", " ")
        raise ModelError(
            f"the endpoint answered with something that is not JSON: {snippet!r}", kind="protocol"
        ) from None
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ModelError(
            "the endpoint's answer has no `choices`: not a chat completion", kind="protocol"
        )
    completion: dict[str, Any] = body
    return completion


def retry_note(status: int, wait: float, attempt: int, endpoint: Endpoint) -> str:
    why = "rate limited" if status == 429 else "server error"
    return f"HTTP {status} ({why}): retry {attempt + 1} of {endpoint.max_retries} in {wait:g} s"


def retry_wait(response: httpx.Response, attempt: int, cap: float) -> float:
    """Retry-After when the server gives it (seconds or an HTTP date), else exponential backoff."""
    header = response.headers.get("retry-after")
    if header:
        try:
            return min(max(float(header), 0.0), cap)
        except ValueError:
            from email.utils import parsedate_to_datetime

            try:
                delay = float(parsedate_to_datetime(header).timestamp() - time.time())
                return min(max(delay, 0.0), cap)
            except (TypeError, ValueError):
                pass
    return min(0.5 * 2.0**attempt, cap)


def error_text(body: Any) -> str:
    """The provider's own error message, wherever it put it."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("msg") or error.get("detail")
            if message:
                return str(message)
        if isinstance(error, str):
            return error
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    return ""


def http_error(response: httpx.Response, endpoint: Endpoint) -> ModelError:
    status = response.status_code
    try:
        detail = error_text(response.json())
    except (json.JSONDecodeError, UnicodeDecodeError):
        detail = response.text[:160].strip()
    said = f": {detail}" if detail else ""
    if status in (401, 403):
        return ModelError(
            f"the endpoint rejected the API key (HTTP {status}); "
            "check --api-key or the key variable",
            kind="auth",
        )
    if status == 404:
        return ModelError(
            f"HTTP 404 from {endpoint.base_url}: unknown model {endpoint.model!r} "
            f"or wrong base URL{said}",
            kind="not_found",
        )
    if status == 429:
        return ModelError(f"rate limited (HTTP 429) after retries{said}", kind="rate_limit")
    if status >= 500:
        return ModelError(f"the server failed (HTTP {status}) after retries{said}", kind="server")
    if mentions_tools(detail):
        return ModelError(
            f"the model rejected the tools request (HTTP {status}){said}. "
            "It may not support native function calling: try --strategy regex",
            kind="unsupported",
        )
    return ModelError(f"the endpoint refused the request (HTTP {status}){said}", kind="bad_request")


def mentions_tools(detail: str) -> bool:
    lowered = detail.lower()
    return any(
        word in lowered for word in ("tool", "function call", "function_call", "response_format")
    )


_SECRET_SHAPES = re.compile(
    r"(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+[A-Za-z0-9._\-]{6,}|(?<=://)[^/@\s]+:[^/@\s]+(?=@))"
)


def redact(text: str, api_key: str | None) -> str:
    """The text with the key, and anything shaped like a key or URL credentials, masked."""
    if api_key:
        text = text.replace(api_key, "****")
    return _SECRET_SHAPES.sub("****", text)


def display_url(url: str) -> str:
    """A base URL as it may be shown: without user:password credentials."""
    return _SECRET_SHAPES.sub("****", url)


def connect_message(base_url: str, error: httpx.ConnectError) -> str:
    text = str(error).lower()
    if (
        "name or service not known" in text
        or "nodename" in text
        or "getaddrinfo" in text
        or "resolve" in text
    ):
        return f"cannot resolve the host of {base_url}; check --base-url"
    return f"cannot connect to {base_url} (connection refused?); is the server running?"

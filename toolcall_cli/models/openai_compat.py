"""Any OpenAI-compatible chat-completions endpoint over httpx, streaming or not.

Every failure becomes a ModelError with a kind and one clear sentence. The API key is sent in
a header and never appears in a message, a log or a trace: whatever the server sends back is
masked of it (and of the URL's credentials) before it leaves this model. What the server sends
is read within bounds (size, line length, time), whatever it claims to be.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from toolcall_cli import strictjson
from toolcall_cli.keys import SecretMask, display_url, key_problem, redact, url_origin, url_secrets
from toolcall_cli.models._body import (
    ACCEPT_ENCODING,
    Deadline,
    body_pieces,
    error_body,
    lines_of,
    read_body,
    send_streamed,
)
from toolcall_cli.models._redact import ReplyRedactor
from toolcall_cli.models._window import (
    default_num_ctx,
    endpoint_url,
    is_llama_server,
    is_ollama,
    loaded_window,
    num_ctx_from_show,
    overflow_error,
    server_root,
    trained_window,
    window_from_props,
)
from toolcall_cli.models.base import MAX_LINE_BYTES, MAX_RESPONSE_BYTES, REQUEST_TIMEOUT, MiB
from toolcall_cli.wire import (
    NOTICE_KEY,
    UNREADABLE_REPLY,
    ContextWindow,
    ModelError,
    ModelRequest,
)
from toolcall_cli.wire.sse import sse_data

RETRY_STATUSES = {429, 500, 502, 503, 504}
PROBE_TIMEOUT = 3.0
"""Seconds the question about the context window may take: a server that does not answer it
quickly has no answer worth waiting for."""
PROBE_BYTES = 4 * MiB
"""Most of a /props or /api/show answer read (Ollama's holds the model's licence and template)."""
SHORTEST_ECHOED_TOKEN = 16
"""A URL's user name or query value this long is a token, and masked where a server echoes it."""


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
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_line_bytes: int = MAX_LINE_BYTES
    request_timeout: float = REQUEST_TIMEOUT
    """Seconds one request may take in all, retries included."""
    key_note: str | None = None
    """Why no key is sent although a key variable is set; told if the server asks for a key."""

    def __repr__(self) -> str:  # the key must never leak through a repr
        key = "set" if self.api_key else "none"
        return f"Endpoint(base_url={self.shown_url!r}, model={self.model!r}, api_key={key})"

    @property
    def shown_url(self) -> str:
        return display_url(self.base_url)

    def secrets(self) -> list[str]:
        """Everything of this endpoint that must never be shown: the key, and the password,
        user name and query values of its URL (short ones are left: masking every "1" in a
        message would hide more than it protects)."""
        found = [self.api_key or "", *url_secrets(self.base_url)]
        return [secret for secret in found if len(secret) >= 4]

    def echoed_secrets(self) -> list[str]:
        """What is masked in everything the server sends back: the key and the URL's password,
        and its user name and query values when they are long enough to be tokens. A short one
        (`json`, `true`, `2024-02-01`) is a word replies use: masking it would break calls."""
        user, password, *values = url_secrets(self.base_url) or ["", ""]
        tokens = [value for value in [user, *values] if len(value) >= SHORTEST_ECHOED_TOKEN]
        credentials = [self.api_key or "", password]
        return [secret for secret in credentials if len(secret) >= 4] + tokens


class OpenAICompatModel:
    """A model behind `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        probe_timeout: float = PROBE_TIMEOUT,
    ) -> None:
        problem = key_problem(endpoint.api_key) if endpoint.api_key else None
        if problem:
            raise ValueError(f"the API key {problem}")
        self.endpoint = endpoint
        self.name = endpoint.model
        self.url = completions_url(endpoint.base_url)
        self._sleep = sleep
        self._clock = clock
        self._probe_timeout = probe_timeout
        self._window: ContextWindow | None = None
        self._server: str | None = None
        self._window_asked = False
        self._mask = SecretMask(endpoint.echoed_secrets())
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(endpoint.read_timeout, connect=endpoint.connect_timeout),
            headers=self._headers(),
            follow_redirects=False,
        )

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        return headers

    def context_window(self) -> ContextWindow | None:
        """The server's context window, asked once (llama.cpp's /props, then Ollama's
        /api/show, /api/ps and /api/version); None when the server does not say. Never
        raises: a server that cannot tell only leaves the window unknown."""
        if not self._window_asked:
            self._window_asked = True
            try:
                self._window = self._ask_window()
            except Exception:  # not knowing the window is never a failure
                self._window = None
        return self._window

    def server_kind(self) -> str | None:
        """The kind of server: "llama.cpp" when it answered /props as llama-server does,
        "Ollama" when it answered /api/show as Ollama does, else None. Learnt by the same one
        probe as the context window."""
        self.context_window()
        return self._server

    def _ask_window(self) -> ContextWindow | None:
        root = server_root(self.endpoint.base_url)
        answer = self._probe("GET", endpoint_url(root, "props"), None)
        if is_llama_server(answer):
            self._server = "llama.cpp"
        props = window_from_props(answer)
        if props is not None:
            return ContextWindow(props, "the server's /props")
        body = {"model": self.endpoint.model}
        show = self._probe("POST", endpoint_url(root, "api/show"), body)
        if not is_ollama(show):
            return None
        self._server = "Ollama"
        return self._ollama_window(root, show)

    def _ollama_window(self, root: httpx.URL, show: Any) -> ContextWindow | None:
        """The window Ollama runs the model with, which is not the model's own: num_ctx as its
        model file sets it, else as the model is loaded now, else Ollama's default; never more
        than the model takes. A request through /v1 cannot set num_ctx."""
        num_ctx = num_ctx_from_show(show)
        if num_ctx is not None:
            return ContextWindow(num_ctx, "num_ctx in Ollama's /api/show")
        ps = self._probe("GET", endpoint_url(root, "api/ps"), None)
        loaded = loaded_window(ps, self.endpoint.model)
        if loaded is not None:
            return ContextWindow(loaded, "Ollama's /api/ps: the model as it is loaded")
        version = self._probe("GET", endpoint_url(root, "api/version"), None)
        tokens, source = default_num_ctx(version)
        trained = trained_window(show)
        if trained is None:
            return ContextWindow(tokens, source)
        if trained <= tokens:
            return ContextWindow(trained, "Ollama's /api/show")
        more = "set num_ctx in its model file, or OLLAMA_CONTEXT_LENGTH on the server, for more"
        return ContextWindow(tokens, f"{source}; the model takes {trained:,}: {more}")

    def _probe(self, method: str, url: httpx.URL, body: dict[str, Any] | None) -> Any:
        """The JSON a short side request answers with, or None for anything else."""
        request = self._client.build_request(
            method, url, json=body, timeout=httpx.Timeout(self._probe_timeout)
        )
        here = url_origin(self.endpoint.base_url)
        if here is None or url_origin(str(url)) != here:
            request.headers.pop("Authorization", None)  # the key goes to its own origin only
        deadline = Deadline.after(self._probe_timeout, self._clock)
        try:
            response = send_streamed(self._client, request, self._probe_timeout)
            if response is None:
                return None
            with closing(response):
                if response.status_code != 200:
                    return None
                data = read_body(
                    response,
                    max_bytes=PROBE_BYTES,
                    deadline=deadline,
                    read_timeout=self._probe_timeout,
                )
            return loads(data)
        except (httpx.HTTPError, ModelError, ValueError):
            return None

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        try:
            yield from self._stream(request)
        except httpx.HTTPError as error:  # anything the narrower handlers did not name
            message = f"the connection to {self.endpoint.shown_url} failed mid-answer ({error})"
            raise ModelError(self._redact(message), kind="protocol") from None
        except ModelError as error:
            # Providers echo keys back in error messages; nothing that leaves here may hold one.
            raise ModelError(
                self._redact(str(error)),
                kind=error.kind,
                window=error.window,
                prompt_tokens=error.prompt_tokens,
                said=self._redact(error.said),
            ) from None

    def _redact(self, text: str) -> str:
        return one_line(redact(text, self.endpoint.secrets()))

    def _stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = {**request.body, "model": self.endpoint.model}
        deadline = Deadline.after(self.endpoint.request_timeout, self._clock)
        for attempt in range(self.endpoint.max_retries + 1):
            last = attempt == self.endpoint.max_retries
            with self._send(body, deadline) as response:
                status = response.status_code
                if status in RETRY_STATUSES and not last:
                    wait = retry_wait(response, attempt, self.endpoint.max_retry_wait)
                    wait = min(wait, max(deadline.remaining(), 0.0))
                    why = self._retry_reason(response, status, deadline)
                    response.close()
                    body = reseeded(body, status)
                    note = retry_note(status, why, wait, attempt, self.endpoint)
                    note += retry_changes(body, request.body)
                    yield {NOTICE_KEY: note}
                    self._sleep(wait)
                    deadline.check()
                    continue
                if 300 <= status < 400:
                    raise redirect_error(response)
                if status >= 400:
                    said = error_body(response, deadline, self.endpoint.read_timeout)
                    raise http_error(status, said, self.endpoint)
                yield from self._answer(response, deadline)
                return

    def _retry_reason(self, response: httpx.Response, status: int, deadline: Deadline) -> str:
        """Why a request is retried, in the notice's words. A 5xx's body is read for it: a
        server that could not read its model's tool call says so, and the user should not be
        told the server broke when the model wrote something unreadable."""
        if status == 429:
            return "rate limited"
        said = error_body(response, deadline, self.endpoint.read_timeout)
        if http_error(status, said, self.endpoint).kind == UNREADABLE_REPLY:
            return "the server could not read the model's reply as a tool call"
        return "server error"

    def _send(self, body: dict[str, Any], deadline: Deadline) -> closing[httpx.Response]:
        """The answer, its body not read yet; it is closed however the `with` block is left
        (Ctrl-C included)."""
        deadline.check()
        remaining = deadline.remaining()
        endpoint = self.endpoint
        timeout = httpx.Timeout(
            min(endpoint.read_timeout, remaining), connect=min(endpoint.connect_timeout, remaining)
        )
        request = self._client.build_request(
            "POST", self.url, content=request_json(body), headers=JSON_BODY, timeout=timeout
        )
        try:
            response = send_streamed(self._client, request, remaining)
        except httpx.ConnectTimeout:
            if remaining < endpoint.connect_timeout:
                raise deadline.error() from None
            raise ModelError(
                f"connecting to {endpoint.shown_url} timed out after "
                f"{endpoint.connect_timeout:g} s",
                kind="timeout",
            ) from None
        except httpx.ReadTimeout:
            if remaining < endpoint.read_timeout:
                raise deadline.error() from None
            raise ModelError(
                # A busy server (one slot, queued requests) is often just slow: say what waits.
                f"{endpoint.shown_url} did not answer within {endpoint.read_timeout:g} s; "
                "--read-timeout waits longer",
                kind="timeout",
            ) from None
        except httpx.ConnectError as error:
            message = connect_message(endpoint.shown_url, error)
            raise ModelError(message, kind="connection") from None
        except httpx.HTTPError as error:
            raise ModelError(
                f"request to {endpoint.shown_url} failed: {error}", kind="connection"
            ) from None
        if response is None:
            raise deadline.error()
        return closing(response)

    def _answer(self, response: httpx.Response, deadline: Deadline) -> Iterator[dict[str, Any]]:
        """The answer read by its shape, not by what was asked or what its headers claim: a
        server that ignores `stream` still answers, and one that sends nothing useful fails."""
        pieces = body_pieces(
            response,
            max_bytes=self.endpoint.max_response_bytes,
            deadline=deadline,
            read_timeout=self.endpoint.read_timeout,
        )
        redactor = ReplyRedactor(self._mask)
        first = next((piece for piece in pieces if piece.strip()), None)
        if first is None:
            raise ModelError(
                f"the endpoint answered HTTP {response.status_code} with an empty body",
                kind="protocol",
            )
        if first.lstrip().removeprefix(b"\xef\xbb\xbf")[:1] in (b"{", b"["):
            # JSON (after any byte-order mark); an SSE stream starts with a field name
            body = first + b"".join(pieces)
            yield redactor.chunk(completion_from(body), last=True)
        else:
            for event in self._events(itertools.chain([first], pieces)):
                yield redactor.chunk(event)
            rest = redactor.rest()
            if rest is not None:
                yield rest

    def _events(self, pieces: Iterator[bytes]) -> Iterator[dict[str, Any]]:
        opening: list[str] = []

        def noted(lines: Iterator[str]) -> Iterator[str]:
            for line in lines:
                if not opening and line.strip():
                    opening.append(line[:80])
                yield line

        count = 0
        ended = False
        lines = lines_of(pieces, max_line_bytes=self.endpoint.max_line_bytes)
        for data in sse_data(noted(lines)):
            if data == "[DONE]":
                ended = True
                break
            count += 1
            event = event_from(data)
            ended = ended or has_finish_reason(event)
            yield event
        if count == 0:
            began = opening[0] if opening else ""
            raise ModelError(
                "the endpoint's answer holds no chat completion: neither JSON nor server-sent "
                f"events with data (it began {began!r})",
                kind="protocol",
            )
        if not ended:
            # The connection closed between two events: what came is only the start of the
            # reply, and taking it as the whole would pass half an answer off as the answer.
            raise ModelError(
                "the stream was cut: it ended without a finish_reason or [DONE]", kind="protocol"
            )

    def close(self) -> None:
        self._client.close()


JSON_BODY = {"Content-Type": "application/json"}


def request_json(body: dict[str, Any]) -> bytes:
    """The request body as httpx's `json=` writes it, except that a lone surrogate is sent as
    its JSON escape: a model's own `"\\ud800"`, in its reply fed back, would otherwise fail
    to encode and end the run."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return strictjson.escape_surrogates(text).encode("utf-8")


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
MAX_JSON_CONTAINERS = 100_000
"""Objects and arrays one answer (or one streamed event) may hold. A real completion holds a few
dozen; 32 MiB of `{},{},...` would become millions of dicts, a gigabyte of memory."""


class TooLarge(ValueError):
    """JSON holding more objects and arrays than any answer does."""


class TooDeep(ValueError):
    """JSON nested too deeply for Python's recursion limit."""


def loads(text: str | bytes | bytearray) -> Any:
    """json.loads, with JSON nested too deeply as a TooDeep, and JSON holding more objects than
    any answer does refused (TooLarge) before it is built; both are ValueErrors."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if data.count(b"{") + data.count(b"[") > MAX_JSON_CONTAINERS:
        # The quick count also sees brackets inside strings (a model may write thousands of
        # them in its text); only the ones outside strings become objects.
        outside = _JSON_STRING.sub(b"", data)
        if outside.count(b"{") + outside.count(b"[") > MAX_JSON_CONTAINERS:
            raise TooLarge(f"JSON with over {MAX_JSON_CONTAINERS:,} objects and arrays")
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None


def event_from(data: str) -> dict[str, Any]:
    try:
        event = loads(data)
    except TooLarge as error:
        raise ModelError(f"the stream sent an event of {error}", kind="too_large") from None
    except ValueError as error:
        why = " (nested too deeply)" if isinstance(error, TooDeep) else ""
        raise ModelError(
            f"the stream sent a malformed event{why}: {data[:80]!r}", kind="protocol"
        ) from None
    if not isinstance(event, dict):
        raise ModelError(
            f"the stream sent an event that is not a JSON object: {data[:80]!r}", kind="protocol"
        )
    raise_reported(event, "the stream")
    return event


def has_finish_reason(event: dict[str, Any]) -> bool:
    choices = event.get("choices")
    return isinstance(choices, list) and any(
        isinstance(choice, dict) and choice.get("finish_reason") for choice in choices
    )


def completion_from(body: bytes) -> dict[str, Any]:
    """A whole chat completion, or the ModelError that says why the body is not one."""
    try:
        value = loads(body)
    except TooLarge as error:
        raise ModelError(f"the endpoint answered with {error}", kind="too_large") from None
    except TooDeep:
        raise ModelError(
            "the endpoint answered with JSON nested too deeply to read", kind="protocol"
        ) from None
    except ValueError:
        snippet = body[:80].decode("utf-8", errors="replace").replace("\n", " ")
        raise ModelError(
            f"the endpoint answered with something that is not JSON: {snippet!r}", kind="protocol"
        ) from None
    raise_reported(value, "the endpoint")
    choices = value.get("choices") if isinstance(value, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ModelError(
            "the endpoint's answer has no `choices`: not a chat completion", kind="protocol"
        )
    completion: dict[str, Any] = value
    return completion


def raise_reported(value: Any, who: str) -> None:
    """Raises the error an answer reports in place of a completion (`error`, no `choices`)."""
    if isinstance(value, dict) and "error" in value and not value.get("choices"):
        detail = error_text(value)
        if reply_unreadable(detail):  # a stream already under way reports it so
            raise unreadable_reply_error(f"{who} reported", detail)
        raise overflow_error(200, value, detail) or ModelError(
            f"{who} reported an error: {detail}", kind="server"
        )


RETRY_TEMPERATURE = 0.5
"""The temperature a retry after a server error gets when the request asked for 0. Measured on
the tuning half's two requests that llama-server refused with 500 (Qwen2.5-0.5B, native
calls, at temperature 0): at 0.3, 1 of 4 retries was answered; at 0.5 and 0.8, 2 of 4."""


def reseeded(body: dict[str, Any], status: int) -> dict[str, Any]:
    """The body for a retry after HTTP `status`. After a server error a seeded request goes
    with the next seed: a server that samples with a fixed seed writes the same reply again,
    and the error may be that reply's (llama-server answers 500 "The model produced output
    that does not match the expected … format" when its tool-call parser rejects what the
    model wrote, and retried the same seed three times over; once the retries are spent, such
    an error goes to the loop, which tells the model why: see UNREADABLE_REPLY). At temperature
    0 a new seed changes nothing (the most likely token is taken whatever the seed), so such a
    retry also samples at RETRY_TEMPERATURE. The run stays reproducible."""
    if status < 500:
        return body
    seed = body.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        body = {**body, "seed": seed + 1}
    if body.get("temperature") == 0:
        body = {**body, "temperature": RETRY_TEMPERATURE}
    return body


def retry_changes(body: dict[str, Any], first: dict[str, Any]) -> str:
    """What a retry sends differently from the first request, in the notice's words."""
    changed = [
        f"{key} {body[key]:g}" for key in ("seed", "temperature") if body.get(key) != first.get(key)
    ]
    if not changed:
        return ""
    warmer = body.get("temperature") != first.get("temperature")
    why = " (at temperature 0 the same request gets the same reply)" if warmer else ""
    return ", with " + " and ".join(changed) + why


def retry_note(status: int, why: str, wait: float, attempt: int, endpoint: Endpoint) -> str:
    return f"HTTP {status} ({why}): retry {attempt + 1} of {endpoint.max_retries} in {wait:g} s"


def retry_wait(
    response: httpx.Response, attempt: int, cap: float, now: Callable[[], float] = time.time
) -> float:
    """Retry-After when the server gives a usable one (seconds or an HTTP date), else
    exponential backoff; always a finite number in [0, cap]."""
    backoff = min(0.5 * 2.0**attempt, cap)
    header = response.headers.get("retry-after", "").strip()
    if not header:
        return backoff
    delay: float | None
    try:
        delay = float(header)
    except ValueError:
        delay = _seconds_until(header, now)
    if delay is None or math.isnan(delay):
        return backoff
    return min(max(delay, 0.0), cap)  # inf (1e999 too) waits the cap, -inf not at all


def _seconds_until(date: str, now: Callable[[], float]) -> float | None:
    try:
        moment = parsedate_to_datetime(date)
        if moment.tzinfo is None:  # "-0000" means UTC as well
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp() - now()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def error_text(body: Any) -> str:
    """The provider's own error message, wherever it put it."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("msg") or error.get("detail")
            if message:
                return str(message)[:500]
        if isinstance(error, str):
            return error[:500]
        if isinstance(body.get("detail"), str):
            return str(body["detail"])[:500]
    return ""


def redirect_error(response: httpx.Response) -> ModelError:
    """A redirect is named, not followed: a POST would turn into a GET, and the key would go
    on to a host nobody vouched for."""
    status = response.status_code
    location = response.headers.get("location", "").strip()
    if not location:
        return ModelError(
            f"the endpoint redirected (HTTP {status}) without saying where to; check --base-url",
            kind="redirect",
        )
    try:
        target = response.request.url.join(location)
    except (httpx.InvalidURL, ValueError):  # idna raises ValueErrors
        return ModelError(
            f"the endpoint redirected (HTTP {status}) to an invalid URL; check --base-url",
            kind="redirect",
        )
    advice = "check --base-url"
    suffix = "/chat/completions"
    if target.path.endswith(suffix):
        base = target.copy_with(path=target.path[: -len(suffix)] or "/")
        advice = f"use {display_url(base)} as --base-url"
    return ModelError(
        f"the endpoint redirected (HTTP {status}) to {display_url(target)}; "
        f"toolcall does not follow redirects: {advice}",
        kind="redirect",
    )


def http_error(status: int, body: bytes, endpoint: Endpoint) -> ModelError:
    value: Any = None
    try:
        value = loads(body)
        detail = error_text(value)
    except ValueError:
        detail = body[:160].decode("utf-8", errors="replace").strip()
    said = f": {detail}" if detail else ""
    if status in (401, 403) and not endpoint.api_key:
        why = endpoint.key_note or "give --api-key, or a profile whose key variable is set"
        return ModelError(
            f"the endpoint wants an API key (HTTP {status}) and none was sent: {why}", kind="auth"
        )
    if status in (401, 403):
        return ModelError(
            f"the endpoint rejected the API key (HTTP {status}); "
            "check --api-key or the key variable",
            kind="auth",
        )
    if status == 404:
        return ModelError(
            f"HTTP 404 from {endpoint.shown_url}: unknown model {endpoint.model!r} "
            f"or wrong base URL{said}",
            kind="not_found",
        )
    if status == 429:
        return ModelError(f"rate limited (HTTP 429) after retries{said}", kind="rate_limit")
    overflow = overflow_error(status, value, detail)
    if overflow is not None and status in (400, 413, 422):
        return overflow
    if status >= 500 and reply_unreadable(detail):
        return unreadable_reply_error(f"HTTP {status}", detail)
    if status >= 500:
        return ModelError(f"the server failed (HTTP {status}) after retries{said}", kind="server")
    if mentions_tools(detail):
        return ModelError(
            f"the model rejected the tools request (HTTP {status}){said}. "
            "It may not support native function calling: try --strategy regex",
            kind="unsupported",
        )
    return ModelError(f"the endpoint refused the request (HTTP {status}){said}", kind="bad_request")


# A server that reads its model's tool calls itself (llama-server --jinja, Ollama) answers with an
# error, most often HTTP 500, when the model wrote a call it cannot read: the model's fault, said
# by the server. What they say, seen in their issue trackers:
#   llama.cpp  "The model produced output that does not match the expected peg-native format"
#              "Failed to parse input at pos 395: <|tool_call_start|>[web_search(...)]..."
#   Ollama     "error parsing tool call: raw='{\"input\": ...}]', err=invalid character ']' ..."
# Each names the model's output (or the parser's input, which is that output) or a tool call,
# and a failure to read it. llama.cpp's "Failed to parse tool call arguments as JSON" is left
# out: it says so of the arguments in the request's history too (llama.cpp issue 25510), and
# what the client sent is no fault the model can correct. vLLM and SGLang pass a call they
# cannot parse on as content (read by strategies/content_calls.py), so they have no such error.
_MODEL_OUTPUT_UNREAD = re.compile(
    r"\bmodel(?:'s)?\s+(?:produced\s+|generated\s+)?output\b.*"
    r"\b(?:does\s+not\s+match|pars(?:e|ed|ing)|unparsed)\b"
    r"|\bfailed\s+to\s+parse\s+input\s+at\s+pos(?:ition)?\b",
    re.IGNORECASE | re.DOTALL,
)
_TOOL_CALL_UNREAD = re.compile(
    r"\b(?:error|fail(?:ed|ure)?)\s+(?:to\s+)?pars(?:e|ing)\s+(?:the\s+)?"
    r"(?:tool|function)[\s_-]?calls?\b(?!\s+arguments)",
    re.IGNORECASE,
)


def reply_unreadable(detail: str) -> bool:
    """Whether a server's error says it could not read its own model's output as a tool call,
    rather than that the request was bad or the server broke (see _MODEL_OUTPUT_UNREAD)."""
    return bool(_MODEL_OUTPUT_UNREAD.search(detail) or _TOOL_CALL_UNREAD.search(detail))


def unreadable_reply_error(how: str, detail: str) -> ModelError:
    """The model wrote a call its server could not read: for the model to be told, not the end
    of the run."""
    return ModelError(
        f"the server could not read the model's reply as a tool call ({how}): {detail}",
        kind=UNREADABLE_REPLY,
        said=detail,
    )


def mentions_tools(detail: str) -> bool:
    lowered = detail.lower()
    return any(
        word in lowered for word in ("tool", "function call", "function_call", "response_format")
    )


def connect_message(shown_url: str, error: httpx.ConnectError) -> str:
    text = str(error).lower()
    unresolved = ("name or service not known", "nodename", "getaddrinfo", "resolve")
    if any(word in text for word in unresolved):
        # Not "check --base-url": the URL may be a profile's (--profile deepseek, offline).
        return f"cannot resolve the host of {shown_url}; is the name right, and the network up?"
    return f"cannot connect to {shown_url} (connection refused?); is the server running?"


# --- keys and URLs ----------------------------------------------------------------------------

_UNPRINTABLE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]+")


def one_line(text: str) -> str:
    """A message holding what a server said, made fit for one terminal line: line breaks,
    control characters (escape sequences that recolour or clear a screen) and bidi overrides
    become single spaces."""
    return _UNPRINTABLE.sub(" ", text).strip()


def completions_url(base_url: str) -> httpx.URL:
    """`{base_url}/chat/completions`, appended to the URL's path: a query string (Azure's
    `?api-version=...`) stays a query string."""
    base = httpx.URL(base_url)
    path = base.copy_with(query=None).raw_path.rstrip(b"/") + b"/chat/completions"
    return base.copy_with(raw_path=path + (b"?" + base.query if base.query else b""))

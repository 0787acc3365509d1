"""The HTTP side of `toolcall serve`: routes, OpenAI-shaped errors, JSON and SSE answers.

The standard library's ThreadingHTTPServer, not a server library (uvicorn, aiohttp, ...), because:
- it adds no dependency, for a practice server that answers one person's loop on 127.0.0.1;
- the model is in-process, synchronous and answers in milliseconds, so a thread per connection
  is plenty, and there is no event loop to wrap it in;
- server-sent events are `data:` lines written and flushed, which needs nothing a framework adds.
What it lacks (TLS, HTTP/2, hardening against a hostile internet) a loopback practice server does
not need; `--host` says so when asked to listen further.
"""

from __future__ import annotations

import itertools
import json
import re
import select
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from toolcall_cli.serve._answering import MODEL_ID, Answer, Answerer
from toolcall_cli.serve._body import read_body
from toolcall_cli.serve._checks import Refused, check_request
from toolcall_cli.wire.completions import CREATED

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body read: a request that fills the model's context window (CONTEXT_TOKENS)
is a few hundred KB even written with every character escaped; a runaway loop is more."""
BACKLOG = 1024
"""Connections the kernel holds while the server is busy accepting: 200 clients at once must
not find it full (with 5, the socketserver default, the kernel dropped their connections and
each tried again after 1, 3, 7, 15 s ...). The kernel may cap it (net.core.somaxconn)."""
WORK_SLOTS = 4
"""Requests read, parsed and answered at once. The model holds the interpreter while it works,
so more at once would only share the same time; it bounds the memory that parsed bodies take
when many clients come together. Writing the answer out is not counted: a slow reader holds
no slot."""
IDLE_SECONDS = 120
"""An idle keep-alive connection is closed after this long."""
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
"""Both with and without /v1, as llama-server and vLLM accept: a base URL given without it still
works."""


def logged_path(raw: str) -> str:
    """The request's path as the log shows it, each query value as `****`: a client may send
    its key there (`?api-key=...`, as Azure's clients do, or bare: `?sk-...`), and no key is ever
    printed. An absolute target's credentials are masked, and so is anything shaped like a key."""
    from toolcall_cli.keys import redact

    path, asked, query = raw.partition("?")
    path = redact(re.sub(r"^([A-Za-z][\w+.-]*://)[^/@]*@", r"\1****@", path), ())
    if not asked:
        return path
    items = (item.partition("=") for item in query.split("&"))
    return f"{path}?{'&'.join(f'{name}=****' if sep else '****' for name, sep, _ in items)}"


@dataclass
class Exchange:
    """One request and what became of it, for the log."""

    number: int
    method: str
    path: str
    status: int = 0
    seconds: float = 0.0
    body: dict[str, Any] | None = None
    answer: Answer | None = None
    error: str = ""
    """Why the request was refused or failed (empty when answered)."""
    client_left: bool = False
    """The client hung up before the answer was written out."""


ExchangeLog = Callable[[Exchange], None]


class ServeServer(ThreadingHTTPServer):
    """Answers with the offline model; hands each finished exchange to `log`."""

    daemon_threads = True
    block_on_close = False
    """Ctrl-C must not wait for a client's idle keep-alive connection to end."""
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], answerer: Answerer, log: ExchangeLog) -> None:
        super().__init__(address, _Handler)
        self.answerer = answerer
        self.log = log
        self.numbers = itertools.count(1)
        self.work = threading.BoundedSemaphore(WORK_SLOTS)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{f'[{name}]' if ':' in name else name}:{port}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Handlers answer every failure of their own (a 500 at worst); what reaches here is the
        # connection itself failing, a client that hung up mid-request. One line, no traceback.
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            print(f"toolcall serve: {type(error).__name__}: {error}", file=sys.stderr)


class _Handler(BaseHTTPRequestHandler):
    server: ServeServer
    protocol_version = "HTTP/1.1"  # keep-alive: an SDK's connection pool reuses connections
    server_version = "toolcall-serve"
    timeout = IDLE_SECONDS
    _body_taken = False
    """This request's body has been read (or the connection ends after it)."""

    def do_GET(self) -> None:
        self._handle()

    # One route table for every method: a wrong one is refused there, with a 405 naming the right.
    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the exchange log shows each request instead of http.server's access line."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line, headers too long, a method no
        `do_*` serves) in the same JSON shape as every other error, and logged the same way."""
        reason = message or HTTPStatus(code).phrase
        # A request line too broken to read leaves the method and the path unset.
        method, path = getattr(self, "command", None), getattr(self, "path", None)
        exchange = Exchange(next(self.server.numbers), method or "?", logged_path(path or "?"))
        exchange.status, exchange.error = code, reason
        self.close_connection = True
        try:
            self._send_json(code, Refused(code, reason, code=None).payload())
        except (ConnectionError, TimeoutError):
            exchange.client_left = True
        self.server.log(exchange)

    def _handle(self) -> None:
        started = time.monotonic()
        exchange = Exchange(next(self.server.numbers), self.command, logged_path(self.path))
        self._body_taken = False
        try:
            self._route(exchange, urlsplit(self.path).path.rstrip("/") or "/")
        except Refused as refused:
            exchange.status, exchange.error = refused.status, refused.message
            self._refuse(refused)
        except (ConnectionError, TimeoutError):
            exchange.client_left = True
            self.close_connection = True
        except Exception as error:  # a bug, the model's or ours: a 500 and one line, no traceback
            exchange.status, exchange.error = 500, f"{type(error).__name__}: {error}"
            message = f"the offline model failed on this request: {exchange.error}"
            self._refuse(Refused(500, message, error_type="server_error"))
        exchange.seconds = time.monotonic() - started
        self.server.log(exchange)

    def _route(self, exchange: Exchange, path: str) -> None:
        if path in MODELS_PATHS or path.startswith(tuple(p + "/" for p in MODELS_PATHS)):
            self._allow("GET")
            exchange.status = self._send_json(200, models_answer(path))
        elif path in CHAT_PATHS:
            self._allow("POST")
            raw = self._read_body()
            with self.server.work:
                # A client that gave up while its request waited for a slot gets no work done.
                if client_gone(self.connection):
                    raise ConnectionResetError("the client hung up")
                exchange.body = body = read_body(raw)
                check_request(body)
                exchange.answer = answer = self.server.answerer.answer(body)
            exchange.status = self._send_answer(answer, streaming=bool(body.get("stream")))
        else:
            message = f"Invalid URL ({self.command} {path}): there is no such path here"
            raise Refused(404, message, code="unknown_url")

    def _refuse(self, refused: Refused) -> None:
        try:
            self._discard_body()
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the refusal is still sent, if the client is there
        self._send_json(refused.status, refused.payload(), refused.headers)

    def _discard_body(self) -> None:
        """Reads and drops the body of a request refused before it was read (an unknown path,
        a wrong method), so that the next request on this keep-alive connection starts where it
        should: left unread, the body was taken for the next request line, and the OpenAI SDK's
        next call got `501 Unsupported method ('{"model":...}POST')`. A body whose length is
        not given, or too long to read, ends the connection instead."""
        if self._body_taken or self.close_connection:
            return
        self._body_taken = True
        length = self.headers.get("Content-Length")
        if length is None:
            # No length and no transfer coding is a request without a body (RFC 9112 6.3).
            if self.headers.get("Transfer-Encoding") is not None:
                self.close_connection = True
            return
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            self.close_connection = True
            return
        self.rfile.read(int(length))

    def _allow(self, method: str) -> None:
        if self.command != method:
            message = f"{self.command} is not allowed here; use {method}"
            raise Refused(405, message, code="method_not_allowed", headers={"Allow": method})

    def _read_body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True  # a body of unknown length cannot be skipped
            raise Refused(411, "a Content-Length header is required", code="length_required")
        if int(length) > MAX_BODY_BYTES:
            self.close_connection = True
            message = f"the request body is over {MAX_BODY_BYTES:,} bytes"
            raise Refused(413, message, code="request_too_large")
        self._body_taken = True
        return self.rfile.read(int(length))

    def _send_answer(self, answer: Answer, *, streaming: bool) -> int:
        headers = {"X-Toolcall-Faults": ",".join(answer.faults)} if answer.faults else {}
        if not streaming:
            return self._send_json(200, answer.objects[0], headers)
        self._send_events(answer.objects, headers)
        return 200

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> int:
        data = json_bytes(payload)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":  # a HEAD answer is its headers alone
            self.wfile.write(data)
        return status

    def _send_events(self, chunks: Iterable[dict[str, Any]], headers: dict[str, str]) -> None:
        """Server-sent events, one `data:` line per chunk, flushed as written, then `[DONE]`.
        The stream's end is the connection's end (no length is known in advance)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        for chunk in chunks:
            # Stops as soon as the client has gone, not when a write first fails to reach it.
            if client_gone(self.connection):
                raise ConnectionResetError("the client hung up")
            self.wfile.write(b"data: " + json_bytes(chunk) + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def json_bytes(value: Any) -> bytes:
    """JSON in UTF-8, characters as they are; with \\u escapes where text holds what UTF-8
    cannot write (a lone surrogate), so that no answer fails to be written."""
    try:
        return json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(value).encode()


def client_gone(connection: socket.socket) -> bool:
    """Whether the client has closed its end of the connection: it reads as ended, found
    without waiting and without taking anything it sent. (A client that only shuts its sending
    side, as `nc -N` does, reads as gone too; HTTP clients do not do that.)"""
    try:
        if not readable_now(connection):
            return False
        return connection.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):  # reset, or closed already
        return True


def readable_now(connection: socket.socket) -> bool:
    """Whether a read would not wait: poll where there is one (select has a limit on the
    numbers of the sockets it can watch, which 200 clients can pass)."""
    if not hasattr(select, "poll"):  # Windows
        return bool(select.select([connection], [], [], 0)[0])
    poller = select.poll()
    poller.register(connection, select.POLLIN)
    return bool(poller.poll(0))


def models_answer(path: str) -> dict[str, Any]:
    """`/v1/models`, or `/v1/models/ID` for the one model there is."""
    model = {"id": MODEL_ID, "object": "model", "created": CREATED, "owned_by": "toolcall"}
    wanted = path.rsplit("/models", 1)[1].lstrip("/")
    if not wanted:
        return {"object": "list", "data": [model]}
    if wanted != MODEL_ID:
        message = f"The model {wanted!r} does not exist; this server lists {MODEL_ID!r}"
        raise Refused(404, message, param="model", code="model_not_found")
    return model

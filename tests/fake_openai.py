"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests: it replays scripted answers,
streams SSE split into arbitrary byte chunks, and produces every failure the client handles."""

from __future__ import annotations

import itertools
import json
import random
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

POLL_INTERVAL = 0.01
"""How often the server loop looks for shutdown: socketserver's default (0.5 s) made every
test that stops a server wait half a second for nothing."""


@dataclass
class Answer:
    """One scripted answer to one request."""

    status: int = 200
    json_body: Any = None
    raw: bytes | None = None
    sse: list[str] | None = None
    """`data:` payloads (without the prefix) or whole lines; sent as an event stream."""
    headers: dict[str, str] = field(default_factory=dict)
    split_seed: int | None = None
    """Split the streamed bytes at random places (seeded), to test reassembly."""
    cut_after: int | None = None
    """Close the connection after this many body bytes (a stream cut mid-reply)."""
    delay: float = 0.0
    """Seconds to wait before answering (read timeouts)."""
    trickle: float | None = None
    """Send the body one byte at a time, this many seconds apart, over and over until the client
    goes away or the server stops: a server that never finishes."""
    trickle_head: bool = False
    """With `trickle`, send header lines that way instead, so the headers never end."""
    trickle_for: float = 20.0
    """Seconds after which a trickle gives up and closes (so a client that never stops it
    fails its test instead of hanging it)."""


def completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def text_stream(text: str, piece: int = 3) -> list[str]:
    chunks = [
        json.dumps(
            {
                "object": "chat.completion.chunk",
                "choices": [
                    {"index": 0, "delta": {"content": text[i : i + piece]}, "finish_reason": None}
                ],
            }
        )
        for i in range(0, len(text), piece)
    ]
    chunks.append(
        json.dumps(
            {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
        )
    )
    return [*chunks, "[DONE]"]


class FakeOpenAI:
    """Start with `with FakeOpenAI() as server:`; queue answers with `server.answers.append`."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        """Each request's path and query, as received."""
        self.props: Any = None
        """What GET /props answers (llama.cpp's server settings); None: 404, as OpenAI does."""
        self.show: Any = None
        """What POST /api/show answers (Ollama's model info); None: 404."""
        self.ps: Any = None
        """What GET /api/ps answers (the models Ollama has loaded); None: 404."""
        self.version: Any = None
        """What GET /api/version answers (Ollama's version); None: 404."""
        self.probes: list[tuple[str, str, dict[str, str], Any]] = []
        """Each request to /props or /api/...: method, path, headers and JSON body. They are
        kept apart from the chat requests, which the other lists hold."""
        self._stopping = threading.Event()
        self._received = threading.Semaphore(0)
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_INTERVAL,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def wait_received(self, count: int, timeout: float = 30) -> bool:
        """Wait until `count` more requests have arrived (their answers may still be coming);
        False if that takes longer than `timeout` seconds."""
        return all(self._received.acquire(timeout=timeout) for _ in range(count))

    def wait_handled(self, count: int, timeout: float = 30) -> bool:
        """Wait until `count` more connections have been handled to the end (an answer sent, or
        the client gone); False if that takes longer than `timeout` seconds."""
        return all(self._server.handled.acquire(timeout=timeout) for _ in range(count))

    def _next(self) -> Answer:
        return (
            self.answers.pop(0)
            if self.answers
            else Answer(status=500, json_body={"error": {"message": "no scripted answer left"}})
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._probe(None)

            def _probe(self, body: bytes | None) -> None:
                """The server's native side doors, where a client learns its context window."""
                headers = {k.lower(): v for k, v in self.headers.items()}
                sent = json.loads(body) if body else None
                fake.probes.append((self.command, self.path, headers, sent))
                path = urlsplit(self.path).path
                data = {
                    "/props": fake.props,
                    "/api/show": fake.show,
                    "/api/ps": fake.ps,
                    "/api/version": fake.version,
                }.get(path)
                if data is None:
                    self._send(Answer(status=404, json_body={"error": {"message": "not found"}}))
                elif isinstance(data, Answer):
                    self._send(data)
                else:
                    self._send(Answer(json_body=data))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                if urlsplit(self.path).path == "/api/show":
                    self._probe(body)
                    return
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                fake.paths.append(self.path)
                try:
                    fake.requests.append(json.loads(body))
                except json.JSONDecodeError:
                    fake.requests.append({"_raw": body.decode(errors="replace")})
                fake._received.release()
                if not urlsplit(self.path).path.endswith("/chat/completions"):
                    self._send(
                        Answer(
                            status=404, json_body={"error": {"message": f"no route {self.path}"}}
                        )
                    )
                    return
                self._send(fake._next())

            def _send(self, answer: Answer) -> None:
                if fake._stopping.wait(answer.delay):
                    return  # the server is stopping: no answer is waited for any more
                payload = self._payload(answer)
                if answer.trickle is not None:
                    self._trickle(answer, payload)
                    return
                self.send_response(answer.status)
                content_type = "text/event-stream" if answer.sse is not None else "application/json"
                self.send_header("Content-Type", content_type)
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                if answer.cut_after is not None:
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload[: answer.cut_after])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                for piece in _pieces(payload, answer.split_seed):
                    self.wfile.write(piece)
                    self.wfile.flush()

            def _trickle(self, answer: Answer, payload: bytes) -> None:
                content_type = "text/event-stream" if answer.sse is not None else "application/json"
                head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n".encode()
                self.close_connection = True
                pieces: Iterator[int]
                if answer.trickle_head:  # header lines that never end
                    pieces = itertools.chain(head, itertools.cycle(b"X-Wait: 1\r\n"))
                else:
                    self.wfile.write(head + b"\r\n")
                    pieces = itertools.cycle(payload)
                ends = time.monotonic() + answer.trickle_for
                for byte in pieces:
                    if fake._stopping.wait(answer.trickle) or time.monotonic() > ends:
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:  # the client gave up, as it should
                        return

            @staticmethod
            def _payload(answer: Answer) -> bytes:
                if answer.raw is not None:
                    return answer.raw
                if answer.sse is not None:
                    lines = [
                        ln if ln.startswith(("data:", ":", "event:")) else f"data: {ln}"
                        for ln in answer.sse
                    ]
                    return "".join(f"{ln}\n\n" for ln in lines).encode()
                return json.dumps(answer.json_body if answer.json_body is not None else {}).encode()

        return Handler


class _QuietServer(ThreadingHTTPServer):
    """Says nothing when a client hangs up mid-answer (what several tests want: a cut stream, a
    client that gives up); any other error in a handler is shown as usual."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.handled = threading.Semaphore(0)
        """Released once per connection when its handler is done, whatever became of it."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        # ConnectionError: a broken pipe, a reset, an aborted connection (a client that left).
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.handled.release()


def _pieces(payload: bytes, seed: int | None) -> Iterator[bytes]:
    if seed is None:
        yield payload
        return
    rng = random.Random(seed)
    at = 0
    while at < len(payload):
        size = rng.randint(1, 17)
        yield payload[at : at + size]
        at += size

"""Reading an HTTP answer within bounds: its size after decompression, the length of one line,
and the time it takes. What a server sends is counted as it arrives, so a hostile one costs a
bounded amount of memory and time whatever it does.

Every HTTP request of the package goes out through `send_streamed` and every body is read
through `body_pieces` (tests/test_http_reads.py holds the package to that): httpx's own readers
(`.read()`, `.json()`, `.content`, a non-streamed `.post()`) take a whole body, however large it
inflates, before anyone can count it."""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import httpx

from toolcall_cli.models.base import MiB
from toolcall_cli.wire import ModelError

ACCEPT_ENCODING = "gzip, deflate"
"""The encodings asked for, and so the only ones decoded: each is inflated in bounded pieces."""

PIECE = 64 * 1024
"""Most bytes one decompression step may produce: a 64 KiB gzip chunk of zeros inflates to
64 MiB in one call unless it is told to stop."""


def size_text(count: int) -> str:
    if count >= MiB and count % MiB == 0:
        return f"{count // MiB} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count:,} bytes"


@dataclass(frozen=True)
class Deadline:
    """The moment a request must be over by, on an injectable clock."""

    seconds: float
    at: float
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(seconds, clock() + seconds, clock)

    def remaining(self) -> float:
        return self.at - self.clock()

    def check(self) -> None:
        if self.remaining() <= 0:
            raise self.error()

    def error(self) -> ModelError:
        return ModelError(
            f"the request took longer than {self.seconds:g} s; --request-timeout raises the limit",
            kind="timeout",
        )


class _Inflater:
    """gzip or deflate, inflated at most PIECE bytes at a time."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding in ("gzip", "x-gzip")
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._started = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        try:
            if not self._started and not self._gzip:
                data = self._choose_deflate(data)
            self._started = True
            while data:
                out = self._zlib.decompress(data, PIECE)
                data = self._zlib.unconsumed_tail
                if not out:
                    break
                yield out
        except zlib.error as error:
            raise corrupt(error) from None

    def _choose_deflate(self, data: bytes) -> bytes:
        # "deflate" is meant to be zlib-wrapped, but some servers send raw deflate (as httpx
        # and browsers, accept both).
        probe = zlib.decompressobj(zlib.MAX_WBITS)
        try:
            probe.decompress(data[:2])
        except zlib.error:
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
        return data

    def flush(self) -> Iterator[bytes]:
        try:
            out = self._zlib.flush(PIECE)
        except zlib.error as error:
            raise corrupt(error) from None
        if out:
            yield out


def corrupt(error: zlib.error) -> ModelError:
    return ModelError(f"the answer's compressed body is corrupt ({error})", kind="protocol")


class _Identity:
    def decode(self, data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), PIECE):
            yield data[start : start + PIECE]

    def flush(self) -> Iterator[bytes]:
        return iter(())


def decoder_for(content_encoding: str | None) -> _Inflater | _Identity:
    encodings = [e.strip().lower() for e in (content_encoding or "").split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    if not encodings:
        return _Identity()
    if len(encodings) == 1 and encodings[0] in ("gzip", "x-gzip", "deflate"):
        return _Inflater(encodings[0])
    raise ModelError(
        f"the endpoint answered in a content encoding toolcall did not ask for "
        f"({', '.join(encodings)[:60]}); it asks for {ACCEPT_ENCODING} only",
        kind="protocol",
    )


def send_streamed(
    client: httpx.Client, request: httpx.Request, within: float
) -> httpx.Response | None:
    """The answer to `request` with its body not read yet (body_pieces reads it), or None when
    its headers did not come within `within` seconds."""
    return headers_within(lambda: client.send(request, stream=True), within)


def body_pieces(
    response: httpx.Response, *, max_bytes: int, deadline: Deadline, read_timeout: float
) -> Iterator[bytes]:
    """The body of a streamed answer, decompressed, in pieces of at most PIECE bytes: the one
    reader of HTTP bodies in the package. Past `max_bytes` after decompression or past the
    deadline it stops with a ModelError, whatever the server still has to send; a read that
    waits `read_timeout` seconds for the next bytes, or a connection cut, is one too."""
    raw: Iterable[bytes]
    if response.is_stream_consumed:
        # Built in memory (a test's transport) and decoded already: counted all the same.
        raw, encoding = [response.content], None
    else:
        raw, encoding = response.iter_raw(), response.headers.get("content-encoding")
    try:
        yield from decoded_body(raw, encoding, max_bytes=max_bytes, deadline=deadline)
    except httpx.ReadTimeout:
        waited = response.request.extensions.get("timeout", {}).get("read")
        if waited is not None and waited < read_timeout:
            raise deadline.error() from None
        raise ModelError(
            f"the answer stalled: nothing for {read_timeout:g} s", kind="timeout"
        ) from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as error:
        raise ModelError(f"the stream was cut mid-reply ({error})", kind="protocol") from None


def read_body(
    response: httpx.Response, *, max_bytes: int, deadline: Deadline, read_timeout: float
) -> bytes:
    """The whole body of a streamed answer, read by body_pieces (so within the same bounds)."""
    pieces = body_pieces(
        response, max_bytes=max_bytes, deadline=deadline, read_timeout=read_timeout
    )
    return b"".join(pieces)


ERROR_BODY_BYTES = 64 * 1024
"""Most of an error answer read: only its message is shown."""


def error_body(response: httpx.Response, deadline: Deadline, read_timeout: float) -> bytes:
    """The start of an error answer; if it will not come whole, what came is enough."""
    body = bytearray()
    with contextlib.suppress(ModelError):
        for piece in body_pieces(
            response, max_bytes=ERROR_BODY_BYTES, deadline=deadline, read_timeout=read_timeout
        ):
            body += piece
    return bytes(body)


def headers_within(send: Callable[[], httpx.Response], seconds: float) -> httpx.Response | None:
    """send() run in a worker thread, or None if it has not returned within `seconds`.

    Socket timeouts bound each read, not their sum: a server that sends its headers a byte at a
    time (or `100 Continue` forever) would hold the caller for ever. The body is timed as it
    arrives, so only this wait needs a thread. A response that comes after it was given up is
    closed, so its connection goes back to the pool.
    """
    lock = threading.Lock()
    outcome: list[tuple[httpx.Response | None, BaseException | None]] = []
    arrived = threading.Event()
    abandoned = False

    def work() -> None:
        result: tuple[httpx.Response | None, BaseException | None]
        try:
            result = (send(), None)
        except BaseException as error:  # handed to the waiting thread, which raises it
            result = (None, error)
        with lock:
            if abandoned:
                if result[0] is not None:
                    result[0].close()
                return
            outcome.append(result)
        arrived.set()

    def give_up() -> None:
        nonlocal abandoned
        with lock:
            abandoned = True
            for response, _ in outcome:
                if response is not None:
                    response.close()

    threading.Thread(target=work, name="model-request-headers", daemon=True).start()
    try:
        arrived.wait(min(max(seconds, 0.0), threading.TIMEOUT_MAX))
    except BaseException:
        give_up()
        raise
    with lock:
        if not outcome:
            abandoned = True
            return None
    response, error = outcome[0]
    if error is not None:
        raise error
    return response


def decoded_body(
    raw: Iterable[bytes], content_encoding: str | None, *, max_bytes: int, deadline: Deadline
) -> Iterator[bytes]:
    """The body's bytes after decompression, in pieces of at most PIECE bytes. Past `max_bytes`
    or the deadline it stops with a ModelError, whatever is still to come."""
    decoder = decoder_for(content_encoding)
    total = 0

    def counted(pieces: Iterator[bytes]) -> Iterator[bytes]:
        nonlocal total
        for piece in pieces:
            total += len(piece)
            if total > max_bytes:
                raise ModelError(
                    f"the answer is larger than {size_text(max_bytes)} (after decompression); "
                    "--max-response-bytes raises the cap",
                    kind="too_large",
                )
            yield piece

    deadline.check()
    for chunk in raw:
        deadline.check()
        yield from counted(decoder.decode(chunk))
    yield from counted(decoder.flush())


def lines_of(pieces: Iterable[bytes], *, max_line_bytes: int) -> Iterator[str]:
    """The lines of a byte stream (ended by \\n, \\r\\n or \\r, as server-sent events allow),
    decoded as UTF-8. No more than `max_line_bytes` of an unfinished line is ever held: httpx's
    own line reader keeps a line however long it grows."""
    held = bytearray()
    after_cr = False
    for piece in pieces:
        if not piece:
            continue
        if after_cr and piece.startswith(b"\n"):
            piece = piece[1:]  # the \n of a \r\n split between two pieces
        after_cr = piece.endswith(b"\r")
        *ended, rest = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        for part in ended:
            if len(held) + len(part) > max_line_bytes:
                raise line_too_long(max_line_bytes)
            held += part
            yield held.decode("utf-8", errors="replace")
            held.clear()
        held += rest
        if len(held) > max_line_bytes:
            raise line_too_long(max_line_bytes)
    if held:
        yield held.decode("utf-8", errors="replace")


def line_too_long(max_line_bytes: int) -> ModelError:
    return ModelError(
        f"the stream sent a line longer than {size_text(max_line_bytes)}; "
        "--max-line-bytes raises the cap",
        kind="too_large",
    )

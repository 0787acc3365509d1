"""Reading an HTTP answer within bounds: its size after decompression, the length of one line,
and the time it takes. What a server sends is counted as it arrives, so a hostile one costs a
bounded amount of memory and time whatever it does."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

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

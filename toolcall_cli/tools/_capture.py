"""What a tool prints while it runs is kept with its call, never written to the program's output.

stdout belongs to the renderers: JSON lines under --json, only the answer under --quiet. Tools run
in worker threads, several at once, and a timed-out tool keeps running (and may print) in its
abandoned thread. `contextlib.redirect_stdout` cannot serve: it swaps sys.stdout for the whole
process, so it would also catch the renderers' output on the main thread, and two tools that
overlap would restore each other's stream. Instead, sys.stdout and sys.stderr are replaced once by
a router that looks at which thread writes: a thread running a tool writes into that call's
buffer, every other thread straight to the real stream, which rich and typer keep using as
before (the router hands them its isatty, fileno, encoding and the rest).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

MAX_OUTPUT_CHARS = 64 * 1024
"""What one call may print and still have it all kept; the rest is counted and dropped."""


class CapturedOutput:
    """The text one call printed, up to a limit, and how much more was dropped."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self._limit = limit
        self._parts: list[str] = []
        self._kept = 0
        self._dropped = 0
        # A timed-out tool may still write while its result is being made.
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        with self._lock:
            room = max(self._limit - self._kept, 0)
            if room:
                self._parts.append(text[:room])
                self._kept += min(len(text), room)
            self._dropped += max(len(text) - room, 0)

    def text(self) -> str:
        """What was printed, with a note at the end when some of it was dropped."""
        with self._lock:
            text, dropped = "".join(self._parts), self._dropped
        if dropped:
            text += (
                f"\n[toolcall] {dropped:,} more characters of output were dropped "
                f"(the first {self._limit:,} are kept)."
            )
        return text


_outputs: dict[int, CapturedOutput] = {}
"""The output of each thread that is running a tool, by thread id."""
_install_lock = threading.Lock()


@contextmanager
def captured(output: CapturedOutput) -> Iterator[None]:
    """While inside, whatever this thread writes to sys.stdout or sys.stderr goes to `output`.

    Used by the tool's own thread for its whole life: once timed out, it is not waited for, but
    what it prints still goes to its (by then unread) output, not to the real streams.
    """
    install()
    thread = threading.get_ident()
    _outputs[thread] = output
    try:
        yield
    finally:
        # Thread ids are reused once a thread ends, so the entry must go with the thread.
        _outputs.pop(thread, None)


def install() -> None:
    """Put the routers in place of sys.stdout and sys.stderr, unless they already are.

    Checked before each tool runs, not once at start: a test runner (CliRunner, pytest) may
    have swapped the streams in the meantime, and then the new ones are wrapped.
    """
    with _install_lock:
        if sys.stdout is not None and not isinstance(sys.stdout, StreamRouter):
            sys.stdout = StreamRouter(sys.stdout)
        if sys.stderr is not None and not isinstance(sys.stderr, StreamRouter):
            sys.stderr = StreamRouter(sys.stderr)


def _current_output() -> CapturedOutput | None:
    return _outputs.get(threading.get_ident())


class _Router:
    """What both routers share: `write` is each one's own; everything else goes to the real
    stream, flushed only from a thread that is not running a tool."""

    real: Any

    def write(self, data: Any) -> int:
        raise NotImplementedError  # each router's own: a tool's writes must never pass it by

    def writelines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _current_output() is None:
            self.real.flush()

    def __getattr__(self, name: str) -> Any:
        if name == "real":  # not set yet (a copy being made): no endless lookup
            raise AttributeError(name)
        return getattr(self.real, name)


class StreamRouter(_Router):
    """Stands in for a text stream: writes from a tool's thread go to its captured output, all
    others (and every other attribute) to the real stream."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self._buffer: BinaryRouter | None = None

    def write(self, text: str) -> int:
        output = _current_output()
        if output is None:
            return int(self.real.write(text))
        if not isinstance(text, str):  # as a real text stream would
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        output.write(text)
        return len(text)

    @property
    def buffer(self) -> BinaryRouter:
        """The binary stream under it, routed the same way (`sys.stdout.buffer.write(b"...")`)."""
        if self._buffer is None:
            self._buffer = BinaryRouter(self.real.buffer, self.real)
        return self._buffer


class BinaryRouter(_Router):
    """The binary side of a StreamRouter: a tool's bytes are decoded into its captured output."""

    def __init__(self, real: Any, text_stream: Any) -> None:
        self.real = real
        self._encoding = getattr(text_stream, "encoding", None) or "utf-8"

    def write(self, data: bytes) -> int:
        output = _current_output()
        if output is None:
            return int(self.real.write(data))
        output.write(bytes(data).decode(self._encoding, "replace"))
        return len(data)

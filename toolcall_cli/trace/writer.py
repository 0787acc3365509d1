"""Writing a trace: a header line, then one line per event with its time, flushed as it happens,
so a run cut short (Ctrl-C, a crash) still leaves a valid trace up to that point."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import socket
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from toolcall_cli import strictjson
from toolcall_cli.events import Event, event_record
from toolcall_cli.keys import SecretMask, url_secrets
from toolcall_cli.private_files import PathProblem, open_private, refuse_other_file
from toolcall_cli.tools.registry import Tool
from toolcall_cli.version import __version__

if TYPE_CHECKING:
    from toolcall_cli.models.scripted import ScriptEnd

FORMAT = "toolcall-trace"
VERSION = 1
"""The format's version, in every header: a reader told of a newer one says so instead of
guessing."""

InterruptReason = Literal["ctrl-c", "sigterm", "sighup", "crash", "broken-pipe", "stopped"]
"""Why a trace was cut short; `stopped`: an eval's run ended because another run failed."""
Command = Literal["run", "chat", "compare", "replay", "eval"]
"""The command a trace was written by, as its header says."""

MiB = 1 << 20
LINE_CAP = 64 * MiB
"""The longest line a trace holds, in bytes. A run's longest is a request holding the whole
conversation: with replies capped at 2,000,000 characters (--max-reply-chars) and results at
--max-result-chars, a few tens of MiB at the very most. A record past it (a cap raised) has its
longest texts cut, each saying so, so that every trace written can be read back."""

SHORTEST_SECRET = 4
"""Shorter credentials are not searched for in a trace's text: masking every "1" would ruin the
trace and protect nothing."""
SHORTEST_USER_NAME = 8
"""A URL's user name is masked only when it is this long (a token put there); `user` or
`admin` also spell a message's role and common words."""


class TraceWriteError(Exception):
    """The trace stopped taking writes (a full disk, a pipe whose reader died): one line naming
    the file and why."""


class TraceWriter:
    """Appends the header and each event as one line of strict JSON, flushed at once.

    Every string written is searched for the session's credentials (its API key, its base URL's
    password, user name and query values) and they are masked: request bodies never hold keys,
    and this makes sure nothing else brings one in (an error message quoting the URL). The
    model masks what its server echoes before this sees it (a key split over streamed chunks is
    only whole there); this is the second line."""

    def __init__(
        self,
        stream: IO[str],
        *,
        path: Path | None = None,
        secrets: Iterable[str] = (),
        line_cap: int = LINE_CAP,
    ) -> None:
        self._stream = stream
        self.path = path
        self._mask = SecretMask(secrets)
        self._opened = time.monotonic()
        self._line_cap = line_cap

    @classmethod
    def open(
        cls, path: Path, *, secrets: Iterable[str] = (), line_cap: int = LINE_CAP
    ) -> TraceWriter:
        """Append to `path`, owner-only; raises PathProblem (naming the path and why) when it
        cannot be written, so the run never starts."""
        # `--trace notes.md` is a slip: the file is the user's, never appended to.
        refuse_other_file(path, "trace file", A_TRACES_FIRST_LINE)
        fd = open_private(path, "trace file")
        try:
            # errors="replace": a stray surrogate in some text must not lose the rest of the trace.
            stream = os.fdopen(fd, "a", encoding="utf-8", errors="replace")
        except OSError as error:  # "a" seeks to the end, and some files cannot (/proc/version)
            os.close(fd)
            reason = error.strerror or str(error)
            raise PathProblem(f"cannot use {path} as the trace file: {reason}") from None
        return cls(stream, path=path, secrets=secrets, line_cap=line_cap)

    def header(self, header: dict[str, Any]) -> None:
        self._line(header)

    def write(self, event: Event) -> None:
        self._line({**event_record(event), "t": self.elapsed()})

    def interrupted(self, reason: InterruptReason, detail: str) -> None:
        """The last line of a trace cut short, after the run's final `run_finished`."""
        self._line({"kind": "interrupted", "reason": reason, "detail": detail, "t": self.elapsed()})

    def script_end(self, end: ScriptEnd) -> None:
        """Where the scripted model's script and the run stopped lining up."""
        record = {"kind": end.kind, "message": end.message, "replies": end.replies}
        self._line({**record, "requests": end.requests, "t": self.elapsed()})

    def elapsed(self) -> float:
        """Seconds since the trace was opened, to the millisecond."""
        return round(time.monotonic() - self._opened, 3)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a failed write was already reported
            self._stream.close()

    def _line(self, record: dict[str, Any]) -> None:
        # Every line passes here, so nothing nested past what a reader can take back reaches
        # the file, and the masking below never recurses deeper than that.
        record = strictjson.within_depth(record)
        if self._mask:
            record = masked(record, self._mask)
        line = strictjson.dumps(record)
        if len(line) * 4 > self._line_cap:  # UTF-8 takes at most 4 bytes a character
            line = fitted(record, line, self._line_cap)
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except OSError as error:
            reason = error.strerror or str(error)
            raise TraceWriteError(f"cannot write the trace file {self.path}: {reason}") from None


A_TRACES_FIRST_LINE = re.compile(rb'\A\{\s*"kind"\s*:')
"""How every line toolcall writes to a trace begins (`kind` first), a header or an event."""


NOTE_ROOM = 100
"""Bytes a cut text's note takes, at most."""


def fitted(record: dict[str, Any], line: str, cap: int) -> str:
    """`line`, the record's, within `cap` bytes: its longest texts cut, each ending in a note
    that says how much went. Gives up (and the line stays long) only on a record whose size is
    in no text, which no event makes."""
    # Read back from the line: lists and dicts of its own (the event's, a request body, stay
    # whole), and a tuple (the messages fed back) a list whose texts can be cut.
    record = json.loads(line)
    for _ in range(64):
        excess = len(line.encode("utf-8")) - cap
        holder, key, text = _longest_text(record)
        if excess <= 0 or len(text) <= NOTE_ROOM:
            break
        per_char = len(text.encode("utf-8", "surrogatepass")) / len(text)  # 3 for Chinese
        keep = max(len(text) - math.ceil((excess + NOTE_ROOM) / per_char), 0)
        cut = len(text) - keep
        holder[key] = (
            f"{text[:keep]}… [toolcall cut {cut:,} characters here: a trace line holds at most "
            f"{cap:,} bytes]"
        )
        line = strictjson.dumps(record)
    return line


def _longest_text(value: Any) -> tuple[Any, Any, str]:
    """The longest string within `value` (a dict or a list), with what holds it and where."""
    best: tuple[Any, Any, str] = (None, None, "")
    stack = [value]
    while stack:
        holder = stack.pop()
        for key, item in holder.items() if isinstance(holder, dict) else enumerate(holder):
            if isinstance(item, str) and len(item) > len(best[2]):
                best = (holder, key, item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return best


def masked(value: Any, mask: SecretMask) -> Any:
    """`value` with every string's secrets replaced by `****` (dict keys are the format's own)."""
    if isinstance(value, str):
        return mask.redact(value)
    if isinstance(value, dict):
        return {key: masked(item, mask) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(item, mask) for item in value]
    return value


def session_secrets(api_key: str | None, base_url: str | None) -> list[str]:
    """The credentials a session holds, as a trace must never show them."""
    found = [api_key] if api_key and len(api_key) >= SHORTEST_SECRET else []
    if base_url:
        user, *others = url_secrets(base_url) or [""]
        found += [user] if len(user) >= SHORTEST_USER_NAME else []
        found += [other for other in others if len(other) >= SHORTEST_SECRET]
    return found


def trace_header(
    command: Command, settings: dict[str, Any], tools: Iterable[Tool]
) -> dict[str, Any]:
    """The first line: what made the run (version, settings, the tools as the model saw them
    and where they came from), so a trace can be read, replayed and diagnosed on its own."""
    tools = list(tools)
    return {
        "kind": "trace_header",
        "format": FORMAT,
        "version": VERSION,
        "toolcall": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "command": command,
        "settings": settings,
        "tools": [tool_entry(tool) for tool in tools],
        "plugins": plugin_hashes(tool.source for tool in tools),
        # Who writes it: `doctor` tells a run still under way from one cut off by a crash.
        "writer": writer_entry(),
    }


def writer_entry() -> dict[str, Any]:
    """This process, as a trace header names its writer: its pid and host, and when it started
    where the system says (a pid is used again once its process ends, a start time is not)."""
    entry: dict[str, Any] = {"pid": os.getpid(), "host": host_tag()}
    started = process_start(os.getpid())
    if started is not None:
        entry["started"] = started
    return entry


def host_tag() -> str:
    """This machine, as a trace names its writer's: a digest of the host name, which tells one
    machine from another without putting the name in a trace the user may share."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:16]


def process_start(pid: int) -> str | None:
    """When process `pid` started, as a token only compared with another: a digest of the boot's
    id and the clock tick of its start, from Linux's /proc (a digest, as with the host: the boot
    id names this machine's boot to whoever reads a shared trace). None where there is no /proc
    (macOS, Windows), or the process is gone or hidden: a reader then goes by the pid alone."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        ticks = start_ticks(Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return hashlib.sha256(f"{boot}/{ticks}".encode()).hexdigest()[:16]


def start_ticks(stat: str) -> int:
    """Field 22 of /proc/PID/stat, the process's start in clock ticks since boot. The fields
    are counted from the last `)`: the second, the command's name, may hold spaces and `)`."""
    fields = stat[stat.rindex(")") + 1 :].split()
    return int(fields[19])  # fields[0] is field 3, the process's state


def tool_entry(tool: Tool) -> dict[str, Any]:
    spec = tool.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "source": tool.source,
    }


def plugin_hashes(sources: Iterable[str]) -> dict[str, str]:
    """Each plugin file's sha256: a replay can tell whether a tool changed since the trace."""
    hashes: dict[str, str] = {}
    for source in sources:
        if source and source not in hashes:
            try:
                hashes[source] = "sha256:" + hashlib.sha256(Path(source).read_bytes()).hexdigest()
            except OSError as error:
                hashes[source] = f"unreadable: {error.strerror or error}"
    return hashes

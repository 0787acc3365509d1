"""Where traces live: the user state directory by the platform's conventions, one file per run
or chat session named by when it began, the oldest pruned past a limit, and a trace found again
by id, by path or by how recent it is."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from toolcall_cli.trace.reader import TraceError

STATE_DIR_ENV = "TOOLCALL_STATE_DIR"
"""Overrides the state directory (the tests point it at a temporary one)."""

TRACE_NAME = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}\.jsonl")
"""The names toolcall gives its traces: UTC date and time, and the microsecond in hex, so
sorting by name sorts by age. Only files named so are listed or pruned: anything else in the
directory is not toolcall's to delete."""


def state_dir(environ: Mapping[str, str] = os.environ) -> Path:
    override = environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs  # here, not at the top: `toolcall --help` must not pay for it

    return platformdirs.user_state_path("toolcall")


def trace_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return state_dir(environ) / "traces"


def make_trace_dir(directory: Path) -> None:
    """`directory`, made owner-only (0700) when missing. Raises OSError when it cannot be."""
    if not directory.is_dir():
        directory.mkdir(mode=0o700, parents=True)
        os.chmod(directory, 0o700)  # mkdir's mode passes through the umask


def new_trace_path(directory: Path, now: datetime | None = None) -> Path:
    """A fresh name in `directory`, which is made owner-only (0700) when missing. Raises
    OSError when it cannot be made."""
    make_trace_dir(directory)
    now = now or datetime.now(timezone.utc)
    # The six hex digits are the microsecond (at most 0xf423f): traces begun in the same second
    # still sort by age, and two begun in the same microsecond take the next free number.
    tick = now.microsecond
    while (path := directory / f"{now:%Y%m%d-%H%M%S}-{tick:06x}.jsonl").exists():
        tick += 1
    return path


def trace_files(directory: Path) -> list[Path]:
    """toolcall's traces in `directory`, oldest first; none when it does not exist."""
    try:
        names = [entry.name for entry in os.scandir(directory) if entry.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [directory / name for name in sorted(names) if TRACE_NAME.fullmatch(name)]


def prune(directory: Path, keep: int, spare: Path | None = None) -> list[Path]:
    """Delete the oldest traces past the newest `keep`, never `spare` (the one being written).
    Returns what was deleted; a file that will not go is left for next time."""
    files = [path for path in trace_files(directory) if path != spare]
    room = keep - (1 if spare is not None else 0)
    doomed = files[: max(len(files) - max(room, 0), 0)]
    deleted = []
    for path in doomed:
        try:
            path.unlink()
            deleted.append(path)
        except OSError:
            pass
    return deleted


def find_trace(which: str | None, directory: Path) -> Path:
    """The trace `which` names: None or `-1` the latest, `-N` the Nth latest, a file's path, or
    an id (a file name's stem, or a prefix of only one). Raises TraceError saying what is
    there instead."""
    files = trace_files(directory)
    if which is None or re.fullmatch(r"-\d+", which):
        back = int(which or "-1")
        if not files:
            raise TraceError(f"no traces yet in {directory}")
        if back == 0 or -back > len(files):
            raise TraceError(f"no trace {which}: {directory} holds {len(files)} trace(s)")
        return files[back]
    path = Path(which).expanduser()
    if path.is_file():
        return path
    matches = [f for f in files if f.stem.startswith(which.removesuffix(".jsonl"))]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise TraceError(f"{which!r} names {len(matches)} traces; give more of the id")
    raise TraceError(f"no trace {which!r}: no such file, and no id in {directory} starts so")

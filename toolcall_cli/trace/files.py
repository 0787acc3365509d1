"""Where traces live: the user state directory by the platform's conventions, one file per run
or chat session named by when it began, the oldest pruned past a limit, and a trace found again
by id, by path or by how recent it is.

The runs compare and replay make are kept apart from the user's own, each command's in a
folder of its own inside the trace directory, pruned on its own: a `compare --repeat 100`
never pushes the user's runs out, and `-1` (`replay -1`, `trace show`, `doctor`) is always the
user's own latest run. They are still found by id, and `trace list --all` lists them."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from toolcall_cli.trace.reader import TraceError
from toolcall_cli.wording import plural

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


KEPT_APART = ("compare", "replay")
"""The commands whose runs are kept apart from the user's own (see the module's doc)."""


def kept_apart_dir(directory: Path, command: str) -> Path:
    """Where the runs `command` makes are kept in the trace directory `directory`: its own
    folder for compare and replay, else the directory itself."""
    return directory / command if command in KEPT_APART else directory


def make_trace_dir(directory: Path, within: Path | None = None) -> None:
    """`directory`, made owner-only (0700) when missing, as is `within`, a directory it is in
    (the trace directory of a kept-apart folder). Raises OSError when either cannot be."""
    if within is not None:
        make_trace_dir(within)
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
        with contextlib.suppress(OSError):
            path.unlink()
            deleted.append(path)
    return deleted


def kept_apart_files(directory: Path) -> list[Path]:
    """The traces of the runs kept apart (compare's and replay's) in the trace directory
    `directory`, oldest first."""
    found = [path for command in KEPT_APART for path in trace_files(directory / command)]
    return sorted(found, key=lambda path: path.name)


def listed_traces(directory: Path, kept_apart: bool = False) -> list[Path]:
    """The user's traces in `directory`, and with `kept_apart` the runs kept apart too, newest
    first (a name is when its run began, whatever folder it is in)."""
    files = trace_files(directory) + (kept_apart_files(directory) if kept_apart else [])
    return sorted(files, key=lambda path: path.name, reverse=True)


def no_traces_yet(directory: Path) -> str:
    """Why `-1` finds nothing, saying so when compare or replay wrote traces: they are not
    counted, but can be named by id."""
    apart = len(kept_apart_files(directory))
    if not apart:
        return f"no traces yet in {directory}"
    return (
        f"no runs of your own yet in {directory}; the {apart} of compare and replay are kept "
        "apart: name one by its id (`toolcall trace list --all`)"
    )


def find_trace(which: str | None, directory: Path) -> Path:
    """The trace `which` names: None or `-1` the user's latest run, `-N` their Nth latest, a
    file's path, or an id (a file name's stem, or a prefix of only one), the runs kept apart
    included. Raises TraceError saying what is there instead."""
    files = trace_files(directory)
    if which is None or re.fullmatch(r"-\d+", which):
        back = int(which or "-1")
        if not files:
            raise TraceError(no_traces_yet(directory))
        if back == 0 or -back > len(files):
            raise TraceError(f"no trace {which}: {directory} holds {plural(len(files), 'trace')}")
        return files[back]
    path = Path(which).expanduser()
    if path.is_dir():
        raise TraceError(f"{which} is a folder: name a trace file in it, or a trace's id")
    if path.is_char_device() or path.is_block_device():  # /dev/zero's one line never ends
        raise TraceError(f"{which} is a device, not a trace file")
    if path.exists():  # a file, or a pipe: `toolcall doctor <(ssh box cat run.jsonl)`
        return path
    every = files + kept_apart_files(directory)
    matches = [f for f in every if f.stem.startswith(which.removesuffix(".jsonl"))]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise TraceError(f"{which!r} names {len(matches)} traces; give more of the id")
    raise TraceError(f"no trace {which!r}: no such file, and no id in {directory} starts so")

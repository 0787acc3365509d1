"""The files toolcall writes at a path the user gives (a trace, the chat history): owner-only,
and a path that cannot work is one clear sentence before anything runs. The files it reads
whole at a path the user gives (a config, a script, a system prompt): within a bound. And where
toolcall's own directory of the user's is (the config file, the user's tools.d)."""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

OWNER_ONLY = 0o600
OTHERS = 0o077
"""Group and other permission bits: what a private file must not have."""


class PathProblem(ValueError):
    """A path cannot be used; the message names it and says why (a usage error)."""


READ_LIMIT = 64 << 20
"""Bytes read at most of a file the user names to be read whole (64 MiB): far past any
config, prompt or model output, and a bound for `/dev/zero` or a mistaken disk image, which
ran the process out of memory ("internal error: MemoryError")."""


class TooLarge(OSError):
    """A file given to be read whole holds more than its bound (or never ends). An OSError
    with no errno: the callers say it as they say a file that cannot be read."""


def read_bounded(path: Path, limit: int = READ_LIMIT) -> bytes:
    """The bytes of `path` (a file, a pipe, a device), or TooLarge past `limit`."""
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"it holds more than {limit >> 20} MiB: is it the file you meant?")
    return data


def open_private(path: Path, label: str, *, readable: bool = False) -> int:
    """Open `path` for appending and return its descriptor.

    A new file is made owner-only (0600) whatever the umask, and an existing regular file is
    tightened to owner-only: a trace or a history holds questions, answers and tool results.
    A pipe or a device (`--trace /dev/stderr`) is written as it is. Missing directories are
    never created: a typo in a path must fail, not leave a tree of directories behind."""
    flags = (os.O_RDWR if readable else os.O_WRONLY) | os.O_APPEND
    try:
        fd, created = open_or_create(path, flags)
    except OSError as error:
        raise PathProblem(f"cannot use {path} as the {label}: {why(path, error)}") from None
    try:
        if created:
            os.fchmod(fd, OWNER_ONLY)  # exactly 0600: the umask may have taken owner bits too
        else:
            make_private(fd)
    except OSError as error:
        os.close(fd)
        reason = error.strerror or str(error)
        raise PathProblem(f"cannot make the {label} {path} owner-only: {reason}") from None
    return fd


FIRST_LINE_READ = 1 << 16
"""Bytes of an existing file's first line read to tell what it holds."""


def refuse_other_file(path: Path, label: str, first_line: re.Pattern[bytes]) -> None:
    """An existing file whose first line that is not blank is not a `label`'s (`first_line`)
    is never appended to, nor made owner-only: a slip of the user's, and the file is theirs.
    Raises PathProblem. A file that is empty, a pipe or a device passes."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return  # never opened here: a pipe without a writer would block the read
        with path.open("rb") as file:
            head = file.read(FIRST_LINE_READ)
    except OSError:
        return  # opening it to write says why it cannot be used
    first = next((line for line in head.splitlines() if line.strip()), b"")
    if first and not first_line.match(first):
        raise PathProblem(
            f"cannot use {path} as the {label}: it holds something other than a {label}, "
            "and is never written to; name a new file"
        )


def open_or_create(path: Path, flags: int) -> tuple[int, bool]:
    """The open descriptor, and whether the file was made just now."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, OWNER_ONLY), True
    except FileExistsError:
        return os.open(path, flags), False


def make_private(fd: int) -> None:
    """Take group and other permissions off an existing regular file; pipes and devices keep
    theirs (a terminal's permissions are not a trace's business)."""
    status = os.fstat(fd)
    if stat.S_ISREG(status.st_mode) and status.st_mode & OTHERS:
        os.fchmod(fd, stat.S_IMODE(status.st_mode) & ~OTHERS)


def why(path: Path, error: OSError) -> str:
    """Why a path could not be opened, in words that point at the part of it that is wrong."""
    if isinstance(error, IsADirectoryError):
        return "it is a directory"
    if isinstance(error, NotADirectoryError):
        blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), path.parent)
        return f"{blocking} is not a directory"
    if isinstance(error, FileNotFoundError):
        if not path.parent.is_dir():
            return f"the directory {path.parent} does not exist"
        if path.is_symlink():
            return "it is a link to a file that does not exist"
        return f"no file can be made in {path.parent}"  # /proc, say
    if isinstance(error, PermissionError):
        return "permission denied"
    return error.strerror or str(error)


def app_dir() -> Path:
    """toolcall's directory for the user's settings, where click (and so typer's get_app_dir)
    puts an app's: $XDG_CONFIG_HOME/toolcall (~/.config/toolcall) on Linux, ~/Library/Application
    Support/toolcall on macOS, %APPDATA%\\toolcall on Windows. Worked out here, not asked of
    typer: building a session must not need the command line's library."""
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or os.path.expanduser("~")) / "toolcall"
    if sys.platform == "darwin":
        return Path(os.path.expanduser("~/Library/Application Support")) / "toolcall"
    return Path(os.environ.get("XDG_CONFIG_HOME", os.path.expanduser("~/.config"))) / "toolcall"

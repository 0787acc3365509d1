"""Which trace a run or a chat writes: the file --trace names, none (--no-trace, or `trace =
false` in the config file), or by default a new one in the trace directory, whose oldest
traces are pruned past `trace_keep`. Compare, which writes a trace per run, chooses a
directory the same way."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolcall_cli.cli._running import RunTrace
from toolcall_cli.cli.entry import EXIT_FAILURE, fail, warn

if TYPE_CHECKING:
    from toolcall_cli.app.build import Assembled
    from toolcall_cli.cli._options import TraceFile
    from toolcall_cli.config import FileConfig
    from toolcall_cli.trace.writer import Command


def start_trace(
    flags: TraceFile, command: Command, assembled: Assembled, replay_of: Path | None = None
) -> RunTrace:
    """The trace a `command` writes, opened: in the trace directory by default, a replay's kept
    apart from the user's own runs (trace/files.py). `replay_of`: the trace a replay asks
    again, named in the header."""
    if flags.trace is not None and flags.no_trace:
        fail("--trace and --no-trace cannot be used together")
    if flags.trace is not None:
        return open_trace(flags.trace, command, assembled, replay_of=replay_of)
    if flags.no_trace or not assembled.config.trace:
        return RunTrace()
    from toolcall_cli.trace.files import (
        kept_apart_dir,
        make_trace_dir,
        new_trace_path,
        prune,
        trace_dir,
    )

    directory = kept_apart_dir(trace_dir(), command)
    try:
        make_trace_dir(directory, within=trace_dir())
        path = new_trace_path(directory)
    except OSError as error:
        # Nobody asked for this trace: the run goes on without it, and says why once.
        warn(f"no trace written: cannot make {directory}: {error.strerror or error}")
        return RunTrace()
    prune(directory, assembled.config.trace_keep, spare=path)
    return open_trace(path, command, assembled, default=True, replay_of=replay_of)


def open_trace(
    path: Path,
    command: Command,
    assembled: Assembled,
    *,
    default: bool = False,
    replay_of: Path | None = None,
) -> RunTrace:
    """The trace, opened and its header written before the run starts, with the session's
    credentials masked in every record. A path the user asked for that cannot be written is a
    usage error naming it, and nothing has run yet; a `default` trace (in the trace directory,
    where the user did not say) that cannot be is left out, with a warning."""
    from toolcall_cli.private_files import PathProblem
    from toolcall_cli.trace import TraceWriteError, TraceWriter, trace_header
    from toolcall_cli.trace.writer import session_secrets

    header = trace_header(command, assembled.settings, assembled.session.registry)
    if replay_of is not None:
        header["replay_of"] = str(replay_of)
    secrets = session_secrets(assembled.choice.api_key, assembled.choice.base_url)
    try:
        writer = TraceWriter.open(path, secrets=secrets)
    except PathProblem as error:
        if default:
            warn(f"no trace written: {error}")
            return RunTrace()
        fail(str(error))
    try:
        writer.header(header)
    except TraceWriteError as error:
        writer.close()
        fail(str(error), EXIT_FAILURE)
    return RunTrace(writer, default)


@dataclass(frozen=True)
class TraceDir:
    """Where a command that writes a trace per run (compare) puts them."""

    directory: Path
    default: bool
    """Compare's folder in the trace directory: each file named as every run's trace is, and
    pruned past `keep` as the user's own are, apart from them. Otherwise a directory the user
    named (--trace-dir): files named by what they hold, never pruned."""
    keep: int = 0
    """With `default`: how many traces the directory keeps (`trace_keep`)."""


def choose_trace_dir(flag: Path | None, no_trace: bool, config: FileConfig) -> TraceDir | None:
    """--trace-dir DIR, none (--no-trace, or `trace = false`), or by default compare's folder
    in the trace directory, kept apart from the user's own runs (trace/files.py); None when it
    cannot be made (the runs go on without traces, said once)."""
    if flag is not None and no_trace:
        fail("--trace-dir and --no-trace cannot be used together")
    if flag is not None:
        return TraceDir(flag, default=False)
    if no_trace or not config.trace:
        return None
    from toolcall_cli.trace.files import kept_apart_dir, make_trace_dir, trace_dir

    directory = kept_apart_dir(trace_dir(), "compare")
    try:
        make_trace_dir(directory, within=trace_dir())
    except OSError as error:
        warn(f"no traces written: cannot make {directory}: {error.strerror or error}")
        return None
    return TraceDir(directory, default=True, keep=config.trace_keep)

"""Which trace a run or a chat writes: the file --trace names, none (--no-trace, or `trace =
false` in the config file), or by default a new one in the trace directory, whose oldest
traces are pruned past `trace_keep`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolcall_cli.cli.assemble import Assembled
from toolcall_cli.cli.entry import fail, warn
from toolcall_cli.cli.running import RunTrace, open_trace


@dataclass(frozen=True)
class TraceChoice:
    path: Path | None
    """None: no trace."""
    default: bool = False
    """In the trace directory, where the user did not say: then its path is shown once."""


def choose_trace(flag: Path | None, no_trace: bool, assembled: Assembled) -> TraceChoice:
    if flag is not None and no_trace:
        fail("--trace and --no-trace cannot be used together")
    if flag is not None:
        return TraceChoice(flag)
    if no_trace or not assembled.config.trace:
        return TraceChoice(None)
    from toolcall_cli.trace.files import new_trace_path, prune, trace_dir

    directory = trace_dir()
    try:
        path = new_trace_path(directory)
    except OSError as error:
        # Nobody asked for this trace: the run goes on without it, and says why once.
        warn(f"no trace written: cannot make {directory}: {error.strerror or error}")
        return TraceChoice(None)
    prune(directory, assembled.config.trace_keep, spare=path)
    return TraceChoice(path, default=True)


def start_trace(
    choice: TraceChoice, command: Literal["run", "chat"], assembled: Assembled
) -> RunTrace:
    """The chosen trace, opened with its header written; a file --trace names that cannot be
    written is a usage error before anything runs."""
    if choice.path is None:
        return RunTrace()
    from toolcall_cli.trace import trace_header
    from toolcall_cli.trace.writer import session_secrets

    session = assembled.session
    header = trace_header(command, assembled.settings, session.registry)
    secrets = session_secrets(assembled.choice.api_key, assembled.choice.base_url)
    return open_trace(choice.path, header, secrets, asked=not choice.default)

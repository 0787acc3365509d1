"""The `toolcall` command: parse flags, have app/ build the session, pick a renderer. No
assembly and no loop logic here.

Public here: `app` and `main`, from `entry` (the console script is `toolcall_cli.cli:main`; entry
also holds the exit codes, `fail` and `warn`). Every other module is private, one job each:
`_options` (the option groups as flags, panel by panel in `--help`), `_running` (rendering a
run), `_tracing` (which trace a run writes), `_commands` (each command), `_trace_commands`
(`trace list` and `trace show`), `_replay`, `_kata_commands` (`kata list`, `new`, `check` and
`solution`), `_drill_commands` (`drill`; the drill itself is `_drilling`), `_practice` (`serve`
and `eject`), `_evaluating` (`eval`)."""

from __future__ import annotations

from toolcall_cli.cli import (
    _commands,  # registers the commands on the app
    _drill_commands,
    _evaluating,
    _kata_commands,
    _practice,
    _replay,
    _trace_commands,
)
from toolcall_cli.cli.entry import app, main

__all__ = ["app", "main"]
del _commands, _drill_commands, _evaluating, _kata_commands, _practice, _replay, _trace_commands

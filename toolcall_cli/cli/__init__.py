"""The `toolcall` command: parse flags, have app/ build the session, pick a renderer. No
assembly and no loop logic here.

One job a module: `entry` (the typer app, exit codes, `main`), `_options` (the option groups as
flags, panel by panel in `--help`), `running` (rendering a run), `tracing` (which trace a run
writes), `commands` (each command), `trace_commands` (`trace list` and `trace show`), `replay`,
`kata_commands` (`kata list`, `new`, `check` and `solution`), `drill_commands` (`drill`; the
drill itself is `drilling`),
`practice` (`serve` and `eject`), `evaluating` (`eval`).
"""

from __future__ import annotations

from toolcall_cli.cli import commands as _commands  # registers the commands on the app
from toolcall_cli.cli import drill_commands as _drill_commands
from toolcall_cli.cli import evaluating as _evaluating
from toolcall_cli.cli import kata_commands as _kata_commands
from toolcall_cli.cli import practice as _practice
from toolcall_cli.cli import replay as _replay
from toolcall_cli.cli import trace_commands as _trace_commands
from toolcall_cli.cli.entry import app, main

__all__ = ["app", "main"]
del _commands, _drill_commands, _evaluating, _kata_commands, _practice, _replay, _trace_commands

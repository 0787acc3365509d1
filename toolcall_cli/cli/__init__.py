"""The `toolcall` command: parse flags, assemble a session, pick a renderer. No loop logic here.

One job a module: `entry` (the typer app, exit codes, `main`), `options` (the flags), `assemble`
(a session from the options), `running` (rendering a run), `commands` (each command).
"""

from __future__ import annotations

from toolcall_cli.cli import commands as _commands  # registers the commands on the app
from toolcall_cli.cli.entry import app, main

__all__ = ["app", "main"]
del _commands

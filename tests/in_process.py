"""`toolcall` run inside the test process: the same `main()` a user's shell runs, with its exit
code, stdout and stderr, in milliseconds instead of a second's interpreter start.

Tests whose point is the process boundary (signals, broken pipes, a hung thread that must not
keep the process alive, real file descriptors) start a real process instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from toolcall_cli.cli import main


@dataclass(frozen=True)
class Finished:
    """How a command ended, named as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """`path` as the working directory (where ./tools.d is looked for), then back."""
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def toolcall(
    *args: str,
    cwd: Path,
    env: Mapping[str, str | None] | None = None,
    stdin: str | bytes | None = None,
) -> Finished:
    """Run `toolcall ARGS` through `main()` in `cwd`, with `env` added to the environment and
    `stdin` as its input. An exception `main()` lets out is a bug, and fails the test as one."""
    argv = sys.argv
    with CliRunner().isolation(input=stdin, env=env) as (out, err, _), working_directory(cwd):
        sys.argv = ["toolcall", *args]
        try:
            main()
            raise AssertionError("main() returned instead of exiting with a code")
        except SystemExit as done:
            code = 0 if done.code is None else done.code if isinstance(done.code, int) else 1
        finally:
            sys.argv = argv
            sys.stdout.flush()
            sys.stderr.flush()
        return Finished(code, out.getvalue().decode(), err.getvalue().decode())

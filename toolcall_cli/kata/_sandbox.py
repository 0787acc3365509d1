"""Running a user's kata file where it cannot hurt toolcall: a fresh interpreter (the grader) in
a session and process group of its own, its memory and CPU limited from inside, its wall clock
watched from here. A case that runs past its limit and ignores the grader's own timer, a file
that kills its interpreter, an allocation without end: each ends as one line in the report,
never as a hung or crashed CLI."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from toolcall_cli.kata._catalog import Kata
from toolcall_cli.tools.isolated import kill_group

Outcome = Literal["pass", "fail", "raised", "timeout", "memory", "not run"]

BUILD_SECONDS = 120.0
"""How long the grader may take to start, build the battery and import the user's file."""
GRACE_SECONDS = 3.0
"""How long past a case's limit the grader's own timer has to stop it before it is killed."""
MEMORY_MB = 1024
CPU_SECONDS = 600
"""A backstop only: the wall clock watched here ends a run long before."""
OUTPUT_TAIL_LINES = 12


@dataclass
class CaseResult:
    category: str
    source: str
    name: str
    outcome: Outcome = "not run"
    expected: str = ""
    got: str = ""


@dataclass
class CheckRun:
    """What a check found: every case's result, and a line when it could not run them all."""

    kata: Kata
    file: Path
    cases: list[CaseResult] = field(default_factory=list)
    conformance: str = ""
    coverage: str = ""
    problem: str | None = None
    """Why cases went unrun or the file could not be used (one line), else None."""
    output: str = ""
    """The end of what the user's code printed, kept when the run ended abnormally."""

    @property
    def passed(self) -> bool:
        return (
            bool(self.cases)
            and self.problem is None
            and all(c.outcome == "pass" for c in self.cases)
        )


@dataclass(frozen=True)
class Limits:
    time_limit: float = 3.0
    """Seconds per case (a case may ask for more: the long stream reply)."""
    memory_mb: int = MEMORY_MB


def run_check(
    kata: Kata,
    file: Path,
    conformance: Path,
    limits: Limits = Limits(),
    clock: Callable[[], float] = time.monotonic,
) -> CheckRun:
    check = CheckRun(kata, file)
    read_end, write_end = os.pipe()
    printed = tempfile.TemporaryFile()  # noqa: SIM115 - closed below, after the grader ends
    command = [
        sys.executable, "-m", "toolcall_cli.kata._grader",
        "--kata", kata.name, "--file", str(file.resolve()), "--results-fd", str(write_end),
        "--time-limit", f"{limits.time_limit:g}", "--memory-mb", str(limits.memory_mb),
        "--cpu-seconds", str(CPU_SECONDS), "--conformance", str(conformance),
    ]  # fmt: skip
    # Few malloc arenas: each is address space, and the limit counts address space.
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1"}
    # An empty working directory: `python -m` puts it first on sys.path, where a json.py of
    # the user's (beside their file, or in our own working directory) would shadow the stdlib.
    workdir = tempfile.TemporaryDirectory(prefix="toolcall-kata-")
    try:
        grader = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=printed,
            stderr=printed,
            pass_fds=(write_end,),
            env=env,
            cwd=workdir.name,
            start_new_session=True,  # its own process group: killed whole, deaf to our Ctrl-C
        )
    except OSError as error:
        os.close(read_end)
        os.close(write_end)
        printed.close()
        workdir.cleanup()
        check.problem = f"the grader process could not start: {error}"
        return check
    os.close(write_end)
    try:
        watch(grader, read_end, check, limits, clock)
    finally:
        kill_group(grader)
        grader.wait()
        os.close(read_end)
        ran = any(c.outcome != "not run" for c in check.cases)
        if check.problem and (ran or not check.cases):  # not for a file that did not load
            check.output = tail(printed)
        printed.close()
        workdir.cleanup()
    return check


def watch(
    grader: subprocess.Popen[bytes],
    results: int,
    check: CheckRun,
    limits: Limits,
    clock: Callable[[], float],
) -> None:
    """Read the grader's lines until it is done, killing it when a case overstays."""
    selector = selectors.DefaultSelector()
    selector.register(results, selectors.EVENT_READ)
    pending = b""
    deadline = clock() + BUILD_SECONDS
    running: dict[str, Any] | None = None
    finished = False
    while not finished:
        wait = deadline - clock()
        if wait <= 0 or not selector.select(timeout=wait):
            kill_group(grader)
            overstayed(check, running, limits)
            return
        data = os.read(results, 65536)
        if not data:  # the grader is gone
            ended_early(grader, check, running)
            return
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:  # not the grader's: nothing else writes there, but never trust it
                continue
            finished = take(record, check) or finished
            if record["kind"] == "start":
                running = record
                deadline = clock() + float(record["limit"]) + GRACE_SECONDS
            elif record["kind"] == "result":
                running = None
                deadline = clock() + BUILD_SECONDS


def take(record: dict[str, Any], check: CheckRun) -> bool:
    """Put one line from the grader into the check; True when it was the last."""
    kind = record["kind"]
    if kind == "battery":
        check.cases = [CaseResult(c["category"], c["source"], c["name"]) for c in record["cases"]]
        check.conformance, check.coverage = record["conformance"], record["coverage"]
    elif kind == "load_error":
        check.problem = str(record["message"])
    elif kind == "result":
        result = check.cases[record["index"]]
        result.outcome, result.expected, result.got = (
            record["outcome"],
            record["expected"],
            record["got"],
        )
    elif kind == "stopped":
        check.problem = stopped_line(record, check)
    return bool(kind == "done")


def stopped_line(record: dict[str, Any], check: CheckRun) -> str:
    unrun = sum(c.outcome == "not run" for c in check.cases)
    rest = f"; {unrun} case{'s' * (unrun != 1)} not run" if unrun else ""
    if record["why"] == "memory":
        name = check.cases[record["index"]].name
        return f"stopped: {name!r} ran out of memory (the limit is {record['memory_mb']} MiB){rest}"
    late = sum(c.outcome == "timeout" for c in check.cases)
    return f"stopped: {late} cases ran past the {record['limit']:g} s limit{rest}"


def overstayed(check: CheckRun, running: dict[str, Any] | None, limits: Limits) -> None:
    if running is None:
        check.problem = f"stopped: the grader did not get going within {BUILD_SECONDS:g} s"
        return
    result = check.cases[running["index"]]
    limit = float(running["limit"])
    result.outcome = "timeout"
    result.expected = f"an answer within {limit:g} s"
    result.got = f"no answer after {limit + GRACE_SECONDS:g} s, and the timer could not stop it"
    unrun = sum(c.outcome == "not run" for c in check.cases)
    check.problem = (
        f"stopped: {result.name!r} ran past its {limit:g} s limit and did not yield to the "
        f"timer, so the grader was killed; {unrun} case{'s' * (unrun != 1)} not run"
    )


def ended_early(
    grader: subprocess.Popen[bytes], check: CheckRun, running: dict[str, Any] | None
) -> None:
    try:
        code = grader.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:  # it closed our pipe and went on: it has had its time
        kill_group(grader)
        code = grader.wait()
    how = f"was killed by {signal_name(-code)}" if code < 0 else f"exited (code {code})"
    if not check.cases:  # before any of the user's code ran: the grader itself failed
        check.problem = f"the grader process {how} before it could run any case"
        return
    where = f" during {check.cases[running['index']].name!r}" if running else ""
    if running is not None:
        result = check.cases[running["index"]]
        result.outcome, result.expected, result.got = "raised", "an answer", f"the process {how}"
    check.problem = (
        f"stopped: the grader process {how}{where}; the code under check may have ended it"
    )


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def tail(printed: IO[bytes]) -> str:
    printed.seek(0)
    lines = printed.read().decode("utf-8", errors="replace").splitlines()
    return "\n".join(lines[-OUTPUT_TAIL_LINES:])

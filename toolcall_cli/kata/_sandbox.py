"""Running a user's kata file where it cannot hurt toolcall: `kata check` starts the judge, a
fresh interpreter in a session of its own with an environment that holds no secret, which
starts the user's code in a sandbox of its own and grades it from outside (see _judge and
_keeper). This side reads the judge's lines, each checked for shape, and watches the wall
clock: a judge silent past a case's limit is killed, one that ends early is reported, and
either way the check ends with a report, never a hung or crashed CLI."""

from __future__ import annotations

import contextlib
import json
import math
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, get_args

from toolcall_cli.kata._battery import SOURCES
from toolcall_cli.kata._catalog import Kata
from toolcall_cli.kata._keeper import how_ended
from toolcall_cli.tools.isolated import kill_group
from toolcall_cli.tools.sandbox import undumpable

Outcome = Literal["pass", "fail", "raised", "timeout", "memory", "not run"]

OUTCOMES: tuple[str, ...] = get_args(Outcome)

BUILD_SECONDS = 120.0
"""How long the grader may take to start, build the battery and import the user's file."""
GRACE_SECONDS = 3.0
"""How long past a case's limit the code's own timer has to stop it, before the judge ends
the sandbox (which takes at most twice as long again)."""
JUDGE_SLACK_SECONDS = 4 * GRACE_SECONDS
"""How long past a case's limit the judge has to say how it ended, before it is killed."""
MEMORY_MB = 1024
CPU_SECONDS = 600
"""A backstop only: the wall clock watched here ends a run long before."""
OUTPUT_TAIL_LINES = 12
RECORD_CHARS = 4000
"""The most of any text in the judge's lines kept for the report."""
RECORD_BYTES = 16 << 20
"""The longest line the judge may write (the battery's, with every case's name)."""
PASSED_ENVIRONMENT = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "PYTHONPATH",
    "PYTHONHOME",
)
"""The environment the judge and the user's code get, with the LC_* variables and nothing else:
an allow-list, so that no key (OPENAI_API_KEY, a profile's, a cloud token) reaches the code."""


@dataclass
class CaseResult:
    category: str
    source: str
    name: str
    given: str = ""
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
    sandbox: list[str] = field(default_factory=list)
    """What the code ran in, and its limits, as the judge's keeper set them."""

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
    namespace: bool = True
    """Run the code in namespaces of its own where the machine allows (False: never)."""


def run_check(
    kata: Kata,
    file: Path,
    conformance: Path | None,
    limits: Limits = Limits(),
    clock: Callable[[], float] = time.monotonic,
) -> CheckRun:
    check = CheckRun(kata, file)
    read_end, write_end = os.pipe()
    command = [
        sys.executable, "-m", "toolcall_cli.kata._judge",
        "--kata", kata.name, "--file", str(file.resolve()), "--results-fd", str(write_end),
        "--time-limit", f"{limits.time_limit:g}", "--memory-mb", str(limits.memory_mb),
        "--cpu-seconds", str(CPU_SECONDS), "--conformance", str(conformance or ""),
        *([] if limits.namespace else ["--no-namespace"]),
    ]  # fmt: skip
    with contextlib.ExitStack() as held:
        held.callback(os.close, read_end)
        printed = held.enter_context(tempfile.TemporaryFile())
        # An empty working directory: `python -m` puts it first on sys.path, where a json.py of
        # the user's (beside their file, or in our own working directory) would shadow the stdlib.
        workdir = held.enter_context(tempfile.TemporaryDirectory(prefix="toolcall-kata-"))
        try:
            grader = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=printed,
                stderr=printed,
                pass_fds=(write_end,),
                env=environment(),
                cwd=workdir,
                start_new_session=True,  # its own process group: killed whole, deaf to our Ctrl-C
            )
        except OSError as error:
            check.problem = f"the grader process could not start: {error}"
            return check
        finally:
            os.close(write_end)
        try:
            with undumpable():  # where the sandbox is weakest, its code shares our user
                watch(grader, read_end, check, clock)
        finally:
            kill_group(grader)
            grader.wait()
            ran = any(c.outcome != "not run" for c in check.cases)
            if check.problem and (ran or not check.cases):  # not for a file that did not load
                check.output = tail(printed)
    return check


def environment() -> dict[str, str]:
    """The judge's environment: the allow-list, and few malloc arenas (each is address space,
    and the code's limit counts address space)."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if name in PASSED_ENVIRONMENT or name.startswith("LC_")
    }
    return {**kept, "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1"}


class BadRecord(ValueError):
    """A line that is not one the judge writes."""


@dataclass
class Running:
    index: int
    limit: float


def watch(
    grader: subprocess.Popen[bytes], results: int, check: CheckRun, clock: Callable[[], float]
) -> None:
    """Read the judge's lines until it is done, killing it when it overstays."""
    selector = selectors.DefaultSelector()
    selector.register(results, selectors.EVENT_READ)
    pending = b""
    deadline = clock() + BUILD_SECONDS
    running: Running | None = None
    while True:
        wait = deadline - clock()
        if wait <= 0 or not selector.select(timeout=wait):
            kill_group(grader)
            overstayed(check, running)
            return
        data = os.read(results, 65536)
        if not data:  # the judge is gone
            ended_early(grader, check, running)
            return
        pending += data
        *lines, pending = pending.split(b"\n")
        try:
            if len(pending) > RECORD_BYTES:
                raise BadRecord(f"a line over {RECORD_BYTES >> 20} MiB")
            for line in lines:
                record = json.loads(line)
                kind = take(record, check)
                if kind == "done":
                    return
                if kind == "start":
                    running = started(record)
                    deadline = clock() + running.limit + JUDGE_SLACK_SECONDS
                elif kind == "result":
                    running = None
                    deadline = clock() + BUILD_SECONDS
        except (BadRecord, ValueError, RecursionError) as error:
            kill_group(grader)
            check.problem = f"stopped: the grader wrote a line toolcall cannot read ({error})"
            return


def take(record: Any, check: CheckRun) -> str:
    """Put one line from the judge into the check; its kind. BadRecord when the line is not
    one the judge writes: toolcall wrote the judge, but it reads the line as data all the same."""
    if not isinstance(record, dict):
        raise BadRecord("not a JSON object")
    kind = record.get("kind")
    if kind == "battery":
        check.cases = [case_of(entry) for entry in listed(record, "cases")]
        check.conformance, check.coverage = text(record, "conformance"), text(record, "coverage")
    elif kind == "sandbox":
        check.sandbox = [text({"line": line}, "line") for line in listed(record, "lines")]
    elif kind == "load_error":
        check.problem = text(record, "message")
    elif kind == "start":
        case_at(record, check)
    elif kind == "result":
        result = case_at(record, check)
        outcome = record.get("outcome")
        if outcome not in OUTCOMES:
            raise BadRecord(f"no such outcome: {outcome!r}")
        result.outcome = outcome
        result.expected, result.got = text(record, "expected"), text(record, "got")
    elif kind == "stopped":
        check.problem = text(record, "problem")
    elif kind != "done":
        raise BadRecord(f"no such kind: {kind!r}")
    return str(kind)


def text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise BadRecord(f"{key} is not text")
    return value if len(value) <= RECORD_CHARS else value[: RECORD_CHARS - 3] + "..."


def listed(record: dict[str, Any], key: str) -> list[Any]:
    value = record.get(key)
    if not isinstance(value, list):
        raise BadRecord(f"{key} is not a list")
    return value


def case_of(entry: Any) -> CaseResult:
    if not isinstance(entry, dict) or entry.get("source") not in SOURCES:
        raise BadRecord("a case without a known source")
    given = text(entry, "given") if "given" in entry else ""
    return CaseResult(text(entry, "category"), entry["source"], text(entry, "name"), given)


def case_at(record: dict[str, Any], check: CheckRun) -> CaseResult:
    index = record.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(check.cases):
        raise BadRecord(f"no case {index!r}")
    return check.cases[index]


def started(record: dict[str, Any]) -> Running:
    limit = record.get("limit")
    if not isinstance(limit, (int, float)) or isinstance(limit, bool):
        raise BadRecord("a limit that is not a number")
    if not (math.isfinite(limit) and 0 < limit <= 24 * 3600):
        raise BadRecord(f"a limit of {limit!r} s")
    return Running(int(record["index"]), float(limit))


def overstayed(check: CheckRun, running: Running | None) -> None:
    if running is None:
        check.problem = f"stopped: the grader did not get going within {BUILD_SECONDS:g} s"
        return
    result = check.cases[running.index]
    limit = running.limit
    result.outcome = "timeout"
    result.expected = f"an answer within {limit:g} s"
    result.got = (
        f"no answer after {limit + JUDGE_SLACK_SECONDS:g} s, and the timer could not stop it"
    )
    unrun = sum(c.outcome == "not run" for c in check.cases)
    check.problem = (
        f"stopped: {result.name!r} ran past its {limit:g} s limit and did not yield to the "
        f"timer, so the grader was killed; {unrun} case{'s' * (unrun != 1)} not run"
    )


def ended_early(grader: subprocess.Popen[bytes], check: CheckRun, running: Running | None) -> None:
    try:
        code = grader.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:  # it closed our pipe and went on: it has had its time
        kill_group(grader)
        code = grader.wait()
    how = how_ended(code)
    if not check.cases:  # before any of the user's code ran: the grader itself failed
        check.problem = f"the grader process {how} before it could run any case"
        return
    where = f" during {check.cases[running.index].name!r}" if running else ""
    if running is not None:
        result = check.cases[running.index]
        result.outcome, result.expected, result.got = "raised", "an answer", f"the process {how}"
    check.problem = (
        f"stopped: the grader process {how}{where}; the code under check may have ended it"
    )


def tail(printed: IO[bytes]) -> str:
    printed.seek(0)
    lines = printed.read().decode("utf-8", errors="replace").splitlines()
    return "\n".join(lines[-OUTPUT_TAIL_LINES:])

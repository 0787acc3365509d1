"""The process that grades a user's kata file: `python -m toolcall_cli.kata._judge`, started by
`toolcall kata check`. It builds the battery, starts the code in its sandbox (_keeper, _runner),
and judges every case here, writing one JSON line per step on the descriptor the CLI gave it.

The verdicts are made from data, in a process the code under check cannot reach (where the
sandbox has a PID namespace, not even by a signal). What the code's process sends is untrusted:
a message of the wrong shape stops the check with one line."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolcall_cli.kata._battery import Case, Chat, Step, Verdict, clipped
from toolcall_cli.kata._catalog import Kata, find_kata
from toolcall_cli.kata._keeper import how_ended, shield
from toolcall_cli.kata._values import Lines, Malformed, decode, encode, unpack
from toolcall_cli.tools.sandbox import become_subreaper, sweep_children

KEEPER = "toolcall_cli.kata._keeper"
MAX_TIMEOUTS = 3
"""Cases past their limit that stop the run (as one out of memory does): the rest would only
cost more of the same."""
GRACE_SECONDS = 3.0
"""How long past a limit the code's own timer has to stop it before its sandbox is ended."""
START_SECONDS = 60.0
"""How long the sandbox may take to start."""
JUDGE_MEMORY_MB = 2048
"""This process's own address space: what the code sends it is bounded (MESSAGE_BYTES), but a
hostile stream of it must end as a stopped check, not as the machine's memory."""


class CaseTimeout(BaseException):
    """The code ran past the case's limit, and its own timer stopped it."""


class OutOfMemory(Exception):
    """The code ran out of memory (its address space is limited)."""


class Raised(Exception):
    """The user's code raised: the text says what, and where in their file."""


class SandboxGone(Exception):
    """The code's process ended, or closed its end: nothing more will come."""


class Overstayed(Exception):
    """No answer within the limit and its grace."""


def write(results: IO[str], **record: Any) -> None:
    results.write(json.dumps(record, ensure_ascii=False) + "\n")
    results.flush()


# --- the code's process -----------------------------------------------------------------------


class CodeProcess:
    """The sandbox running the user's code, as the judge holds it: the keeper process, the
    socket to the code, the keeper's report pipe and the pipe whose closing ends it all."""

    def __init__(self, options: argparse.Namespace) -> None:
        ours, theirs = socket.socketpair()
        report_read, report_write = os.pipe()
        control_read, self.control = os.pipe()
        command = [
            # The package imports the keeper before runpy runs it: its warning about that is
            # toolcall's, and would show as what the user's code printed.
            sys.executable, "-W", f"ignore:'{KEEPER}' found in sys.modules:RuntimeWarning",
            "-m", KEEPER,
            "--report-fd", str(report_write), "--channel-fd", str(theirs.fileno()),
            "--memory-mb", str(options.memory_mb), "--cpu-seconds", str(options.cpu_seconds),
            *(["--no-namespace"] if options.no_namespace else []),
        ]  # fmt: skip
        try:
            self.keeper = subprocess.Popen(
                command,
                stdin=control_read,
                pass_fds=(report_write, theirs.fileno()),
                start_new_session=True,
            )
        finally:
            os.close(control_read)
            os.close(report_write)
            theirs.close()
        self.socket = ours
        self.socket.settimeout(START_SECONDS)  # for sendall: select() guards every read
        self.report = report_read
        self.reported = b""
        self.lines = Lines()
        self.received: list[bytes] = []
        self.numbers = itertools.count(1)
        self.pid = 0
        self.ended: int | None = None

    def started(self) -> tuple[list[str], str | None]:
        """The lines that say what the sandbox is, or why it could not start."""
        first = self.keeper_line(time.monotonic() + START_SECONDS)
        if first is None or "problem" in first:
            why = str(first["problem"]) if first else "the sandbox did not start"
            return [], why
        self.pid = int(first.get("pid", 0))
        limits = [str(item) for item in first.get("limits", [])]
        lines = [str(first.get("sandbox", ""))]
        if limits:
            lines.append(f"limits (hard: the code cannot raise them): {' · '.join(limits)}")
        return lines, None

    def keeper_line(self, deadline: float) -> dict[str, Any] | None:
        """The keeper's next report line (it is ours: trusted, still read with care)."""
        while b"\n" not in self.reported:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([self.report], [], [], wait)[0]:
                return None
            data = os.read(self.report, 4096)
            if not data:
                return None
            self.reported += data
        line, self.reported = self.reported.split(b"\n", 1)
        try:
            record = json.loads(line)
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    def stop(self) -> int:
        """End the sandbox and everything in it; the code's exit code (negative: a signal)."""
        if self.ended is not None:
            return self.ended
        os.close(self.control)
        self.control = -1
        self.socket.close()
        deadline = time.monotonic() + 2 * GRACE_SECONDS
        line: dict[str, Any] | None = {}
        while line is not None and "ended" not in line:
            line = self.keeper_line(deadline)
        try:
            self.keeper.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:  # a keeper that hangs is a bug; end it the hard way
            self.kill_hard()
        sweep_children()  # had the code ended its keeper, what it left came to us
        code = line.get("ended") if line else None
        self.ended = code if isinstance(code, int) else -9
        return self.ended

    def kill_hard(self) -> None:
        for pid in (self.pid, self.keeper.pid):
            if pid > 0:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        self.keeper.wait()

    # --- messages --------------------------------------------------------------------------

    def send(self, **message: Any) -> None:
        try:
            self.socket.sendall(encode(message))
        except TimeoutError:  # it stopped reading: as good as deaf
            raise Overstayed from None
        except OSError:
            raise SandboxGone from None

    def receive(self, deadline: float) -> dict[str, Any]:
        """The next message from the code's process."""
        while not self.received:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([self.socket], [], [], wait)[0]:
                raise Overstayed
            try:
                data = self.socket.recv(1 << 20)
            except OSError:
                data = b""
            if not data:
                raise SandboxGone
            self.received.extend(self.lines.feed(data))
        return decode(self.received.pop(0))

    def ask(
        self, request: dict[str, Any], limit: float, chat: Chat | None = None
    ) -> dict[str, Any]:
        """Send one request; serve its chat() calls until it is done. The final message."""
        number = next(self.numbers)
        self.send(number=number, limit=limit, **request)
        deadline = time.monotonic() + limit + GRACE_SECONDS
        while True:
            message = self.receive(deadline)
            if "ask" in message:
                self.answer(message, number, chat)
            elif message.get("done") == number:
                return message
            else:
                raise Malformed("an answer to no request")

    def answer(self, message: dict[str, Any], number: int, chat: Chat | None) -> None:
        """One chat() call of the user's loop, served here: the chat keeps what was sent."""
        asked = message["ask"]
        if not isinstance(asked, int) or isinstance(asked, bool):
            raise Malformed("a question without a number")
        if chat is None or message.get("chat") != number:
            self.send(reply=asked, refused="400 Bad Request: the run this chat belonged to is over")
            return
        reply: dict[str, Any]
        try:
            unsendable = message.get("unsendable")
            if unsendable is not None:
                chat.refuse(f"the messages are not JSON: {clipped(str(unsendable))}")
            reply = {"message": chat(message.get("messages"))}
        except Exception as error:  # the chat's own refusal (400 Bad Request), as data
            reply = {"refused": str(error)}
        self.send(reply=asked, **reply)


# --- the user's code, as a check reaches it ---------------------------------------------------


class RemoteSolution:
    """`Solution` for the checks: each method asks the code's process and reads its answer as
    data. Within one case, every request shares the case's time limit."""

    def __init__(self, process: CodeProcess) -> None:
        self.process = process
        self.deadline = 0.0

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.01)

    def ask(self, request: dict[str, Any], chat: Chat | None = None) -> Any:
        """What the user's code returned for `request`, within the case's time left."""
        answer = self.process.ask(request, self.remaining(), chat)
        if "returned" in answer:
            return unpack(answer["returned"])
        if "raised" in answer:
            raise Raised(clipped(str(answer["raised"])))
        if answer.get("timeout") is True:
            raise CaseTimeout
        if answer.get("memory") is True:
            raise OutOfMemory
        raise Malformed("an answer of no known kind")

    def call(self, function: str, *arguments: Any) -> Any:
        return self.ask({"op": "call", "function": function, "arguments": list(arguments)})

    def call_on_samples(self, function: str, *arguments: Any) -> Any:
        request = {"op": "call_on_samples", "function": function, "arguments": list(arguments)}
        return self.ask(request)

    def parsers(self, steps: Sequence[Step]) -> list[Any]:
        returned = self.ask({"op": "parsers", "steps": steps})
        if not (isinstance(returned, list) and len(returned) == len(steps)):
            raise Malformed("not one answer per step")
        return returned

    def agent_loop(
        self,
        chat: Chat,
        toolbox: Sequence[str],
        question: str,
        max_iterations: int,
        options: dict[str, Any],
    ) -> Any:
        request = {
            "op": "loop",
            "toolbox": list(toolbox),
            "question": question,
            "max_iterations": max_iterations,
            "options": options,
        }
        return self.ask(request, chat)


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Run:
    results: IO[str]
    process: CodeProcess
    cases: tuple[Case, ...]
    time_limit: float
    memory_mb: int

    def unrun(self, index: int) -> str:
        left = len(self.cases) - index - 1
        return f"{left} case{'s' * (left != 1)} not run"

    def how(self) -> str:
        return how_ended(self.process.stop())


def load(run: Run, kata: Kata, file: Path) -> tuple[str, str] | None:
    """Import the user's file in its sandbox: None, or the record that says why it cannot be
    used ("load_error": the file's fault; "stopped": its process had to be ended)."""
    request = {"op": "load", "file": str(file), "kata": kata.name, "required": list(kata.required)}
    try:
        answer = run.process.ask(request, run.time_limit)
    except Overstayed:
        run.process.stop()
        return "stopped", (
            f"stopped: importing {file.name} ran past the {run.time_limit:g} s limit and did "
            "not yield to the timer, so the grader was killed"
        )
    except SandboxGone:
        how = run.how()
        return (
            "stopped",
            f"stopped: the grader process {how}; the code under check may have ended it",
        )
    except Malformed as error:
        run.process.stop()
        return "stopped", f"stopped: the grader process sent what toolcall cannot read ({error})"
    if answer.get("loaded") is True:
        return None
    return "load_error", clipped(str(answer.get("load_error", "the file could not be loaded")))


def run_all(run: Run) -> str | None:
    """Every case, each written as it ends; the line that stopped the run, if one did."""
    solution = RemoteSolution(run.process)
    timeouts = 0
    for index, case in enumerate(run.cases):
        limit = max(case.time_limit or 0.0, run.time_limit)  # a slow case never gets less
        write(run.results, kind="start", index=index, limit=limit)
        solution.deadline = time.monotonic() + limit
        outcome, verdict, problem = run_case(run, case, solution, limit, index)
        write(
            run.results,
            kind="result",
            index=index,
            outcome=outcome,
            expected=verdict.expected,
            got=verdict.got,
        )
        if problem:
            return problem
        rest = f"; {run.unrun(index)}" if index + 1 < len(run.cases) else ""
        if outcome == "memory":
            return (
                f"stopped: {case.name!r} ran out of memory (the limit is {run.memory_mb} MiB){rest}"
            )
        timeouts += outcome == "timeout"
        if timeouts >= MAX_TIMEOUTS:
            return f"stopped: {timeouts} cases ran past the {run.time_limit:g} s limit{rest}"
    return None


def run_case(
    run: Run, case: Case, solution: RemoteSolution, limit: float, index: int
) -> tuple[str, Verdict, str | None]:
    try:
        verdict = case.check(solution)
        return ("pass" if verdict.passed else "fail"), verdict, None
    except CaseTimeout:
        return (
            "timeout",
            Verdict(
                False, f"an answer within {limit:g} s", f"no answer after {limit:g} s: stopped"
            ),
            None,
        )
    except OutOfMemory:
        return "memory", Verdict(False, "an answer", "ran out of memory"), None
    except Raised as error:
        return "raised", Verdict(False, "no exception", f"raised {error}"), None
    except Overstayed:
        run.process.stop()
        return (
            "timeout",
            Verdict(
                False,
                f"an answer within {limit:g} s",
                f"no answer after {limit + GRACE_SECONDS:g} s, and the timer could not stop it",
            ),
            (
                f"stopped: {case.name!r} ran past its {limit:g} s limit and did not yield to the "
                f"timer, so the grader was killed; {run.unrun(index)}"
            ),
        )
    except SandboxGone:
        how = run.how()
        return (
            "raised",
            Verdict(False, "an answer", f"the process {how}"),
            (
                f"stopped: the grader process {how} during {case.name!r}; the code under check "
                "may have ended it"
            ),
        )
    except Malformed as error:
        run.process.stop()
        return (
            "raised",
            Verdict(False, "an answer", "a message toolcall cannot read"),
            (
                f"stopped: the grader process sent what toolcall cannot read during "
                f"{case.name!r} ({error}), so it was stopped; {run.unrun(index)}"
            ),
        )
    except Exception as error:  # a check that cannot read what came back: the case failed
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return "raised", Verdict(False, "no exception", f"raised {clipped(text)}"), None


def limit_memory() -> None:
    try:
        import resource
    except ImportError:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = JUDGE_MEMORY_MB << 20
    if hard == resource.RLIM_INFINITY or hard > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolcall_cli.kata._judge")
    parser.add_argument("--kata", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--results-fd", type=int, required=True)
    parser.add_argument("--time-limit", type=float, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--conformance", default="", help="The extra corpus's folder, if named.")
    parser.add_argument("--no-namespace", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    options = arguments().parse_args(argv)
    shield()
    become_subreaper()
    os.set_inheritable(options.results_fd, False)  # never the sandbox's
    results = os.fdopen(options.results_fd, "w", encoding="utf-8")
    try:
        process = CodeProcess(options)  # it starts while the battery is built
    except OSError as error:
        write(results, kind="stopped", problem=f"the grader process could not start: {error}")
        write(results, kind="done")
        os._exit(0)
    limit_memory()
    kata = find_kata(options.kata)
    extra = Path(options.conformance) if options.conformance else None
    battery = importlib.import_module(kata.battery).battery(extra)
    cases = battery.cases
    write(
        results,
        kind="battery",
        conformance=battery.conformance,
        coverage=battery.coverage,
        cases=[
            {"category": c.category, "source": c.source, "name": c.name, "given": c.given}
            for c in cases
        ],
    )
    lines, problem = process.started()
    write(results, kind="sandbox", lines=lines)
    run = Run(results, process, cases, options.time_limit, options.memory_mb)
    if problem:
        write(results, kind="stopped", problem=f"the grader process could not start: {problem}")
    elif (failed := load(run, kata, Path(options.file))) is not None:
        kind, line = failed
        write(results, kind=kind, **{"message" if kind == "load_error" else "problem": line})
    elif (stopped := run_all(run)) is not None:
        write(results, kind="stopped", problem=stopped)
    process.stop()
    write(results, kind="done")
    results.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

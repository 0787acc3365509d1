"""The process that runs a user's kata file: `python -m toolcall_cli.kata._grader ...`, started
by `toolcall kata check` and never imported by it. It limits its own memory and time, builds
the kata's battery, then imports the user's file and runs each case, writing one JSON line per
step on the file descriptor it was given; what the user's code prints goes to its own stdout
and stderr, which the CLI keeps apart.

Each case runs under a timer: past its limit, the case is interrupted (CaseTimeout, not an
Exception, so a loop's `except Exception` cannot swallow it). Three cases past their limit,
or one that runs out of memory, stop the run: the rest would only cost more of the same. Code
that does not yield to the timer is the CLI's to kill, which it does by the process group.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import signal
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, ModuleType
from typing import IO, Any

from toolcall_cli.kata._battery import Case, Verdict, clipped
from toolcall_cli.kata._catalog import Kata, find_kata

MAX_TIMEOUTS = 3
USER_MODULE = "kata_under_check"


class CaseTimeout(BaseException):
    """The case ran past its limit (raised by the timer, inside the user's code)."""


def on_alarm(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout


def main(argv: list[str] | None = None) -> None:
    options = arguments().parse_args(argv)
    limit_resources(options.memory_mb << 20, options.cpu_seconds)
    sys.dont_write_bytecode = True  # no __pycache__ beside the user's file
    results = os.fdopen(options.results_fd, "w", encoding="utf-8")
    kata = find_kata(options.kata)
    battery = importlib.import_module(kata.battery).battery(Path(options.conformance))
    cases = battery.cases
    write(
        results,
        kind="battery",
        conformance=battery.conformance,
        coverage=battery.coverage,
        cases=[{"category": c.category, "source": c.source, "name": c.name} for c in cases],
    )
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, on_alarm)
    user = load(Path(options.file), kata, options.time_limit)
    if isinstance(user, str):
        write(results, kind="load_error", message=user)
    else:
        run_all(results, cases, user, options.time_limit, options.memory_mb)
    write(results, kind="done")
    results.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # a thread the user's code left hanging must not keep the process alive


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolcall_cli.kata._grader")
    parser.add_argument("--kata", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--results-fd", type=int, required=True)
    parser.add_argument("--time-limit", type=float, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--conformance", required=True)
    return parser


OUTPUT_BYTES = 64 << 20
"""The most a file this process writes may hold (what the user's code prints included)."""


def limit_resources(memory_bytes: int, cpu_seconds: int) -> None:
    """Address space, CPU time and file size, where the platform can limit them. Past the
    memory limit an allocation fails with MemoryError; past the CPU limit the process is
    killed; past the file size a write fails with OSError (its signal is ignored)."""
    try:
        import resource
    except ImportError:  # not on this platform: the CLI's wall clock still bounds the run
        return
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limits = (
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_FSIZE, OUTPUT_BYTES),
    )
    for which, wanted in limits:
        try:
            _, hard = resource.getrlimit(which)
            soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def write(results: IO[str], **record: Any) -> None:
    results.write(json.dumps(record, ensure_ascii=False) + "\n")
    results.flush()


def load(path: Path, kata: Kata, time_limit: float) -> ModuleType | str:
    """The user's file as a module, or one line saying why it cannot be used."""
    spec = importlib.util.spec_from_file_location(USER_MODULE, path)
    if spec is None or spec.loader is None:
        return f"{path.name} cannot be imported as Python"
    module = importlib.util.module_from_spec(spec)
    sys.modules[USER_MODULE] = module  # dataclasses and the like look their module up
    sys.path.append(str(path.parent))  # its own helper modules, after everything else
    try:
        with timer(time_limit):
            spec.loader.exec_module(module)
    except CaseTimeout:
        return f"importing {path.name} did not finish within {time_limit:g} s"
    except SyntaxError as error:
        return f"{path.name}, line {error.lineno}: SyntaxError: {error.msg}"
    except BaseException as error:  # even SystemExit: the file is what failed, say so
        return f"importing {path.name} raised {failure(error, path)}"
    missing = [name for name in kata.required if not callable(getattr(module, name, None))]
    if missing:
        return f"{path.name} does not define {' and '.join(missing)} (kata {kata.name} needs it)"
    return module


@contextmanager
def timer(seconds: float) -> Iterator[None]:
    """Raise CaseTimeout in this thread after `seconds` (where SIGALRM exists)."""
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)


def failure(error: BaseException, path: Path) -> str:
    """`Type: message`, with the line of the user's file it came from when there is one."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    return f"{text} ({path.name}, line {frames[-1].lineno})" if frames else text


def run_all(
    results: IO[str], cases: tuple[Case, ...], user: ModuleType, time_limit: float, memory_mb: int
) -> None:
    path = Path(user.__file__ or "")
    timeouts = 0
    for index, case in enumerate(cases):
        limit = max(case.time_limit or 0.0, time_limit)  # a slow case never gets less
        write(results, kind="start", index=index, limit=limit)
        outcome, verdict = run_case(case, user, limit, path)
        write(
            results,
            kind="result",
            index=index,
            outcome=outcome,
            expected=verdict.expected,
            got=verdict.got,
        )
        if outcome == "memory":
            write(results, kind="stopped", why="memory", index=index, memory_mb=memory_mb)
            return
        timeouts += outcome == "timeout"
        if timeouts >= MAX_TIMEOUTS:
            write(results, kind="stopped", why="timeouts", index=index, limit=time_limit)
            return


def run_case(case: Case, user: ModuleType, limit: float, path: Path) -> tuple[str, Verdict]:
    try:
        with timer(limit):
            verdict = case.check(user)
        return ("pass" if verdict.passed else "fail"), verdict
    except CaseTimeout:
        return "timeout", Verdict(
            False, f"an answer within {limit:g} s", f"no answer after {limit:g} s: stopped"
        )
    except MemoryError:
        return "memory", Verdict(False, "an answer", "ran out of memory")
    except BaseException as error:
        return "raised", Verdict(False, "no exception", f"raised {clipped(failure(error, path))}")
    finally:
        if case.after is not None:
            case.after()


if __name__ == "__main__":
    main()

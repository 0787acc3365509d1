"""`toolcall doctor`: a troubleshooting checklist walked over a recorded run.

1. should a tool have been called while the model answered directly (硬答)?
2. were the tool names and arguments valid, and how was each error recovered?
3. was every result fed back, paired with its call id, every call answered exactly once?
4. did the loop end, and why?

The checks read plain trace records (dicts), as toolcall_cli.trace reads them from a file.
Public here: the names in `__all__` (`diagnose`, `diagnose_runs` and what they return); the
checks' modules are private."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from toolcall_cli.doctor._advice import advise
from toolcall_cli.doctor._calls import check_calls
from toolcall_cli.doctor._direct import check_direct_answer
from toolcall_cli.doctor._ending import check_ending
from toolcall_cli.doctor._model import (
    Advice,
    Diagnosis,
    Finding,
    RunDiagnosis,
    RunRecords,
    Step,
    as_record,
    split_runs,
)
from toolcall_cli.doctor._pairing import check_pairing
from toolcall_cli.trace import Trace, TraceError
from toolcall_cli.trace.reader import run_mode
from toolcall_cli.trace.writer import host_tag, process_start

__all__ = [
    "Advice",
    "Diagnosis",
    "Finding",
    "RunDiagnosis",
    "Step",
    "as_record",
    "diagnose",
    "diagnose_runs",
]


def diagnose(trace: Trace) -> Diagnosis:
    """The checklist over every run of `trace` (v1, or v0 without a header). Raises TraceError
    for a trace with no run in it: there is nothing to walk the checklist over."""
    if not trace.records:
        raise TraceError(f"{trace.path} holds no trace records")
    if not any(record["kind"] == "run_started" for record in trace.records):
        raise TraceError(f"{trace.path} records no run (no run_started record)")
    notes = []
    if trace.cut_line is not None:
        notes.append(f"line {trace.cut_line} was cut mid-write and is left out")
    runs = diagnose_runs(trace.records, trace.header)
    return Diagnosis(str(trace.path), trace.version, tuple(runs), tuple(notes))


def diagnose_runs(
    records: Sequence[dict[str, Any]], header: dict[str, Any] | None = None
) -> list[RunDiagnosis]:
    """The checklist over each run in `records` (event records, the header apart)."""
    header = header or {}
    runs = split_runs(records)
    writing = writer_running(header)
    return [_diagnose_run(run, header, writing if run is runs[-1] else None) for run in runs]


def writer_running(header: dict[str, Any]) -> int | None:
    """The pid of the process writing the trace, if it is still running on this host: its last
    run may be under way rather than cut off. None when the header names no writer (a trace
    from before it did), another host's, or a process that is gone, or one that took the
    writer's pid after it ended (it started at another time)."""
    writer = header.get("writer")
    if not isinstance(writer, dict) or writer.get("host") != host_tag():
        return None
    pid = writer.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
        return None  # this process reads the trace: it is not in the middle of writing it
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except PermissionError:
        pass  # it exists, under another user
    except (ProcessLookupError, OverflowError, OSError):
        return None
    return pid if same_start(writer.get("started"), process_start(pid)) else None


def same_start(recorded: object, now: str | None) -> bool:
    """Whether the process with the writer's pid is the writer. Without a start time on both
    sides (a trace from before headers kept it, a system without /proc, a process hidden from
    this user) the pid alone decides, as it did before."""
    if not isinstance(recorded, str) or now is None:
        return True
    return recorded == now


def _diagnose_run(run: RunRecords, header: dict[str, Any], writing: int | None) -> RunDiagnosis:
    steps = (
        check_direct_answer(run, header),
        check_calls(run),
        check_pairing(run),
        check_ending(run, writing),
    )
    finished = run.last("run_finished")
    iterations = max((r.iteration or 0 for r in run.records), default=0)
    return RunDiagnosis(
        number=run.number,
        question=run.question,
        model=str(run.started.get("model", "")),
        strategy=str(run.started.get("strategy", "")),
        mode=run_mode(run.started, header),
        iterations=int(finished.data.get("iterations", iterations)) if finished else iterations,
        stop_reason=str(finished.data.get("stop_reason")) if finished else None,
        steps=steps,
        advice=advise(steps),
    )

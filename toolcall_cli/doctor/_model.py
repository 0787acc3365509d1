"""What the doctor reads (a run's records, each with its place in the trace) and what it
reports (steps of findings, and advice)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.events import strategy_label

Status = Literal["pass", "problem"]
FixKind = Literal["prompt rule", "description", "schema", "limit", "strategy", "wiring", "none"]


@dataclass(frozen=True)
class Record:
    """One event record of a trace, with where it is."""

    event: int
    """Its position among the trace's records, from 1 (the header is not counted)."""
    iteration: int | None
    """The iteration it belongs to; None before the run's first request."""
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data["kind"])


@dataclass(frozen=True)
class RunRecords:
    """The records of one run: from its `run_started` up to the next run's."""

    number: int
    records: tuple[Record, ...]

    @property
    def started(self) -> dict[str, Any]:
        return self.records[0].data

    @property
    def question(self) -> str:
        return str(self.started.get("question", ""))

    def of(self, *kinds: str) -> list[Record]:
        return [record for record in self.records if record.kind in kinds]

    def first(self, kind: str) -> Record | None:
        return next(iter(self.of(kind)), None)

    def last(self, kind: str) -> Record | None:
        return next(reversed(self.of(kind)), None)

    @property
    def answered(self) -> bool:
        """The run ended with an answer."""
        finished = self.last("run_finished")
        return finished is not None and finished.data.get("stop_reason") == "answered"


def split_runs(records: Sequence[dict[str, Any]]) -> list[RunRecords]:
    """Each run of a trace (a chat trace holds several), its records numbered and placed in
    their iteration. Records before the first `run_started` belong to no run and are left out."""
    runs: list[list[Record]] = []
    iteration: int | None = None
    for event, data in enumerate(records, start=1):
        if data.get("kind") == "run_started":
            runs.append([])
            iteration = None
        if not runs:
            continue
        own = data.get("iteration")
        if isinstance(own, int) and not isinstance(own, bool):
            iteration = own
        runs[-1].append(Record(event, iteration, data))
    return [RunRecords(number, tuple(run)) for number, run in enumerate(runs, start=1)]


@dataclass(frozen=True)
class Finding:
    """One thing that went wrong (or, as a note, is worth knowing), and where."""

    problem: str
    """A short code: "hard_answer", "unknown_tool", "invalid_arguments", "not_fed_back", ..."""
    message: str
    iteration: int | None = None
    event: int | None = None
    event_kind: str | None = None
    recovered: str | None = None
    """How it was put right ("fixed at iteration 2 by #2.0"), or None when it was not."""
    fixable: bool = False
    """A mistake a later call could put right: without `recovered`, it never was."""
    tool: str | None = None
    note: bool = False
    """True: worth knowing, but nothing went wrong (the step still passes)."""

    @classmethod
    def at(cls, record: Record, problem: str, message: str, **more: Any) -> Finding:
        return cls(
            problem=problem,
            message=message,
            iteration=record.iteration,
            event=record.event,
            event_kind=record.kind,
            **more,
        )


@dataclass(frozen=True)
class Step:
    """One step of the checklist over one run."""

    number: int
    question: str
    """What the step asks, as the checklist words it."""
    summary: str
    """The answer in one line."""
    findings: tuple[Finding, ...] = ()

    @property
    def status(self) -> Status:
        return "problem" if self.problems else "pass"

    @property
    def problems(self) -> list[Finding]:
        return [finding for finding in self.findings if not finding.note]


@dataclass(frozen=True)
class Advice:
    """The most likely cause of a run's problems, and the fix to try first."""

    cause: str
    fix_kind: FixKind
    fix: str
    finding: Finding


@dataclass(frozen=True)
class RunDiagnosis:
    number: int
    question: str
    model: str
    strategy: str
    iterations: int
    stop_reason: str | None
    """None when the trace ends before the run did."""
    steps: tuple[Step, ...]
    advice: Advice | None = None
    mode: str = ""
    """The strategy's mode (`json` of `schema json`); empty for regex."""

    @property
    def strategy_label(self) -> str:
        return strategy_label(self.strategy, self.mode)

    @property
    def problems(self) -> list[Finding]:
        return [finding for step in self.steps for finding in step.problems]


@dataclass(frozen=True)
class Diagnosis:
    """The checklist over every run of one trace."""

    path: str
    version: int
    runs: tuple[RunDiagnosis, ...]
    notes: tuple[str, ...] = field(default=())
    """About the trace itself (a last line cut mid-write, say)."""

    @property
    def problem_count(self) -> int:
        return sum(len(run.problems) for run in self.runs)


def as_record(diagnosis: Diagnosis) -> dict[str, Any]:
    """The diagnosis as plain data, for `--json`: each step with its status, each run with
    its advice, and the count of problems."""
    return {
        "trace": diagnosis.path,
        "version": diagnosis.version,
        "notes": list(diagnosis.notes),
        "problems": diagnosis.problem_count,
        "runs": [_run_record(run) for run in diagnosis.runs],
    }


def _run_record(run: RunDiagnosis) -> dict[str, Any]:
    advice = run.advice
    return {
        "run": run.number,
        "question": run.question,
        "model": run.model,
        "strategy": run.strategy,
        "mode": run.mode,
        "iterations": run.iterations,
        "stop_reason": run.stop_reason,
        "steps": [
            {
                "step": step.number,
                "question": step.question,
                "status": step.status,
                "summary": step.summary,
                "findings": [dataclasses.asdict(finding) for finding in step.findings],
            }
            for step in run.steps
        ],
        "cause": advice.cause if advice else None,
        "fix": {"kind": advice.fix_kind, "text": advice.fix} if advice else None,
    }

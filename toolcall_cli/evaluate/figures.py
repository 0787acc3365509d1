"""A run's figures, read from the events the loop yields and nothing else (`toolcall compare`
and `toolcall eval`), and the rates over repeated runs of one strategy."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from toolcall_cli.events import (
    Event,
    FinalAnswer,
    IterationStarted,
    ModelFailed,
    ModelReplied,
    ParseError,
    RunFinished,
    RunStarted,
    ToolCallParsed,
    ToolFinished,
    ToolStarted,
)
from toolcall_cli.wire.tokens import estimate_tokens, request_tokens


@dataclass(frozen=True)
class RunFigures:
    """One run of one strategy."""

    label: str
    seed: int
    iterations: int
    calls: int
    parse_errors: int
    tool_errors: int
    """Calls answered with an error: unknown tool, bad arguments, the tool raised, timed out..."""
    errors_recovered: int
    """Parse and tool errors of a run that went on to answer (stop reason `answered`)."""
    first_tool_start: float | None
    """Seconds from the run's start to its first tool starting; None when none started."""
    wall_time: float
    tokens: int
    tokens_estimated: bool
    """The model reported no usage: `tokens` is estimated from the requests and replies."""
    stop_reason: str
    answer: str | None
    """The final answer; a best-effort one (made without tools at the limit) too."""
    failure: str | None = None
    """Why the model failed, when it did."""
    trace: str | None = None

    @property
    def errors(self) -> int:
        return self.parse_errors + self.tool_errors

    @property
    def answered(self) -> bool:
        return self.stop_reason == "answered"

    def record(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        record["first_tool_start"] = milliseconds(self.first_tool_start)
        record["wall_time"] = milliseconds(self.wall_time)
        return record


class RunTally:
    """Counts a run's events as they arrive. Times are read on `clock` when an event arrives,
    so the first tool's start is when the loop started it (mid-reply with stream)."""

    def __init__(
        self,
        label: str,
        seed: int,
        trace: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.seed, self.trace = label, seed, trace
        self._clock = clock
        self._started: float | None = None
        self._first_tool: float | None = None
        self._calls = self._parse_errors = self._tool_errors = 0
        self._estimate = 0
        """Tokens of the requests and replies, for a model that reports no usage."""
        self._request = 0
        """The estimate of the request sent last, counted once a reply to it comes: a request
        that failed (a server never reached) brought no reply and used no tokens."""
        self._replies = 0
        self._answer: str | None = None
        self._failure: str | None = None
        self._finished: RunFinished | None = None

    def add(self, event: Event) -> None:
        now = self._clock()
        if isinstance(event, RunStarted):
            self._started = now
        elif isinstance(event, ToolStarted) and self._first_tool is None:
            self._first_tool = now
        elif isinstance(event, ToolCallParsed):
            self._calls += 1
        elif isinstance(event, ParseError):
            self._parse_errors += 1
        elif isinstance(event, ToolFinished) and not event.result.ok:
            self._tool_errors += 1
        elif isinstance(event, IterationStarted):
            self._request = request_tokens(event.request)
        elif isinstance(event, ModelReplied):
            self._estimate += self._request + estimate_tokens(event.raw + event.reasoning)
            self._request, self._replies = 0, self._replies + 1
        elif isinstance(event, FinalAnswer):
            self._answer = event.text
        elif isinstance(event, ModelFailed):
            self._failure = event.message
        elif isinstance(event, RunFinished):
            self._finished = event

    def figures(self) -> RunFigures:
        """The run's figures; call it once the run has finished."""
        end = self._finished
        if end is None:
            raise ValueError("the run has not finished")
        tokens = reported_tokens(end.usage)
        first = None
        if self._first_tool is not None and self._started is not None:
            first = self._first_tool - self._started
        errors = self._parse_errors + self._tool_errors
        return RunFigures(
            label=self.label,
            seed=self.seed,
            iterations=end.iterations,
            calls=self._calls,
            parse_errors=self._parse_errors,
            tool_errors=self._tool_errors,
            errors_recovered=errors if end.stop_reason == "answered" else 0,
            first_tool_start=first,
            wall_time=end.elapsed,
            tokens=tokens if tokens is not None else self._estimate,
            # No reply, nothing to estimate: 0 is what the run used, not a guess.
            tokens_estimated=tokens is None and self._replies > 0,
            stop_reason=end.stop_reason,
            answer=self._answer,
            failure=self._failure,
            trace=self.trace,
        )


def milliseconds(seconds: float | None) -> float | None:
    """Seconds to the millisecond: finer is noise from the machine, not the strategy."""
    return None if seconds is None else round(seconds, 3)


def reported_tokens(usage: dict[str, int]) -> int | None:
    """The run's tokens as the model reported them: the total, else prompt plus completion."""
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
    counted = [part for part in parts if isinstance(part, int)]
    return sum(counted) if counted else None


@dataclass(frozen=True)
class StrategyRates:
    """One strategy over repeated runs (`--repeat N`, one seed each)."""

    label: str
    runs: int
    answered: int
    mean_iterations: float
    mean_calls: float
    mean_tokens: float
    tokens_estimated: bool
    parse_errors: int
    errors: int
    errors_recovered: int
    mean_first_tool_start: float | None
    """Over the runs where a tool started."""
    mean_wall_time: float
    stop_reasons: dict[str, int]

    @property
    def answered_rate(self) -> float:
        return self.answered / self.runs

    def record(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "runs": self.runs,
            "answered": self.answered,
            "answered_rate": self.answered_rate,
            "mean_iterations": round(self.mean_iterations, 3),
            "mean_calls": round(self.mean_calls, 3),
            "mean_tokens": round(self.mean_tokens, 1),
            "tokens_estimated": self.tokens_estimated,
            "parse_errors": self.parse_errors,
            "errors": self.errors,
            "errors_recovered": self.errors_recovered,
            "mean_first_tool_start": milliseconds(self.mean_first_tool_start),
            "mean_wall_time": milliseconds(self.mean_wall_time),
            "stop_reasons": self.stop_reasons,
        }


def rates(label: str, runs: Sequence[RunFigures]) -> StrategyRates:
    """The rates of one strategy's runs (at least one)."""
    firsts = [run.first_tool_start for run in runs if run.first_tool_start is not None]
    # Answered first, then the other ends by name: the same order in every row.
    ends = Counter(run.stop_reason for run in runs)
    order = sorted(ends, key=lambda end: (end != "answered", end))
    return StrategyRates(
        label=label,
        runs=len(runs),
        answered=sum(run.answered for run in runs),
        mean_iterations=fmean(run.iterations for run in runs),
        mean_calls=fmean(run.calls for run in runs),
        mean_tokens=fmean(run.tokens for run in runs),
        tokens_estimated=any(run.tokens_estimated for run in runs),
        parse_errors=sum(run.parse_errors for run in runs),
        errors=sum(run.errors for run in runs),
        errors_recovered=sum(run.errors_recovered for run in runs),
        mean_first_tool_start=fmean(firsts) if firsts else None,
        mean_wall_time=fmean(run.wall_time for run in runs),
        stop_reasons={end: ends[end] for end in order},
    )

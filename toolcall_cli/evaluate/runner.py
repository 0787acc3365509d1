"""The matrix: every case under every model, strategy and seed asked for, each run a session
built as compare builds its runs (app.build.variant_session), traced into the eval's own
folder, graded, and appended to the eval's results file as it ends. Runs against one server go
at most `jobs` at a time; different servers run side by side. A resumed eval skips every run
its results file already holds."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_cli import strictjson
from toolcall_cli.app.build import Toolbox, Warn, load_toolbox, print_warning, variant_session
from toolcall_cli.app.errors import AppError
from toolcall_cli.app.settings import Settings, session_retrieval
from toolcall_cli.app.variants import Variant
from toolcall_cli.evaluate._grading import ExpectedAnswer
from toolcall_cli.evaluate._matching import MadeCall
from toolcall_cli.evaluate._verdict import RunOutput, Verdict, grade
from toolcall_cli.evaluate.cases import Case, ToolFunctions, expected_answer
from toolcall_cli.evaluate.figures import RunFigures, RunTally
from toolcall_cli.events import (
    Event,
    FinalAnswer,
    IterationStarted,
    RunFinished,
    ToolCallParsed,
    ToolFinished,
)
from toolcall_cli.messages import ToolSpec
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.termination import Terminated
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.trace.writer import InterruptReason

NOW_VARIABLE = "TOOLCALL_NOW"
"""The instant the bundled get_time reads, when a case fixes one."""
RESULTS = "results.jsonl"
META = "eval.json"
RESULT_KEPT = 400
"""Characters of each tool result a run's record keeps."""
NOT_RUN = "not run: toolcall eval --calls-only grades the calls and runs no tool"


# --- what is run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One model of the eval: its settings, and the server whose load --jobs bounds."""

    label: str
    settings: Settings

    @property
    def server(self) -> str:
        return self.settings.choice.base_url or f"local {self.settings.choice.name}"


@dataclass(frozen=True)
class Strategy:
    """One strategy of the eval; `variant` None: the one `run` picks."""

    variant: Variant | None

    @property
    def label(self) -> str:
        return self.variant.label if self.variant is not None else "default"


@dataclass(frozen=True)
class RunKey:
    model: str
    strategy: str
    case: str
    seed: int
    calls_only: bool

    def record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class EvalRun:
    """One finished run: what it did, its figures and its verdict, as the results file holds it."""

    key: RunKey
    verdict: Verdict
    figures: dict[str, Any]
    """RunFigures.record(): iterations, calls, tokens, wall time, stop reason, answer, trace."""
    calls: tuple[str, ...] = ()
    """Each call the model wrote, as `name(arg=value, ...)`."""
    category: str = ""
    results: tuple[str, ...] = ()
    """The start of each tool result fed back (what grading an answer again needs)."""

    def record(self) -> dict[str, Any]:
        return {
            **self.key.record(),
            "category": self.category,
            **self.verdict.record(),
            "made_calls": list(self.calls),
            "results": list(self.results),
            **self.figures,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> EvalRun:
        """A run read back from the results file; KeyError or TypeError when it is not one."""
        key = RunKey(
            model=str(record["model"]),
            strategy=str(record["strategy"]),
            case=str(record["case"]),
            seed=int(record["seed"]),
            calls_only=bool(record["calls_only"]),
        )
        verdict = Verdict(
            outcome=record["outcome"],
            kind=record.get("kind"),
            detail=str(record.get("detail") or ""),
            ended_0_non_answer=bool(record.get("ended_0_non_answer")),
        )
        figure_keys = RunFigures.__dataclass_fields__.keys()
        figures = {k: record.get(k) for k in figure_keys if k in record}
        return cls(
            key,
            verdict,
            figures,
            tuple(record.get("made_calls") or ()),
            str(record.get("category") or ""),
            tuple(str(result) for result in record.get("results") or ()),
        )

    @property
    def trace(self) -> str | None:
        value = self.figures.get("trace")
        return value if isinstance(value, str) else None


@dataclass
class EvalPlan:
    cases: list[Case]
    targets: list[Target]
    strategies: list[Strategy]
    seeds: tuple[int, ...]
    folder: Path
    calls_only: bool = False
    jobs: int = 1
    done: dict[RunKey, EvalRun] = field(default_factory=dict)
    """Runs the results file already holds (--resume): not run again."""

    def runs(self) -> Iterator[tuple[Target, Strategy, Case, int]]:
        for seed in self.seeds:
            for case in self.cases:
                for target in self.targets:
                    for strategy in self.strategies:
                        yield target, strategy, case, seed

    def key(self, target: Target, strategy: Strategy, case: Case, seed: int) -> RunKey:
        return RunKey(target.label, strategy.label, case.id, seed, self.calls_only)

    @property
    def total(self) -> int:
        return len(self.seeds) * len(self.cases) * len(self.targets) * len(self.strategies)


# --- the eval's folder --------------------------------------------------------------------------


def read_results(folder: Path, warn: Warn = print_warning) -> dict[RunKey, EvalRun]:
    """The runs an eval's results file holds; a line cut short by an interruption is left out
    (its run is run again)."""
    path = folder / RESULTS
    done: dict[RunKey, EvalRun] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return done
    except (OSError, UnicodeDecodeError) as error:
        raise AppError(f"cannot read {path}: {error}") from None
    for number, line in enumerate(lines, start=1):
        try:
            run = EvalRun.from_record(json.loads(line))
        except (ValueError, KeyError, TypeError, RecursionError):
            warn(f"{path}:{number}: not a run record; that run is run again")
            continue
        done[run.key] = run
    return done


def write_meta(folder: Path, meta: Mapping[str, Any]) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "traces").mkdir(exist_ok=True)
        (folder / META).write_text(strictjson.dumps(dict(meta), indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise AppError(
            f"cannot write the eval's folder {folder}: {error.strerror or error}"
        ) from None


def latest_folder(root: Path, cases: Path) -> Path | None:
    """The newest eval folder under `root` whose eval was of the case file `cases`."""
    found = []
    for meta in root.glob(f"*/{META}"):
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            if json.loads(meta.read_text(encoding="utf-8")).get("cases") == str(cases.resolve()):
                found.append(meta.parent)
    return max(found, key=lambda path: path.name, default=None)


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "x"


def trace_name(key: RunKey) -> str:
    parts = (key.model, key.strategy, key.case, f"seed{key.seed}")
    mode = "-calls" if key.calls_only else ""
    return "_".join(safe_name(part) for part in parts) + mode + ".jsonl"


# --- tools --------------------------------------------------------------------------------------


def not_run(**arguments: Any) -> str:
    """A tool under --calls-only: its calls are graded, never run."""
    return NOT_RUN


def stub(spec: ToolSpec, source: str = "") -> Tool:
    return Tool(spec=spec, func=not_run, source=source, permission="read", cacheable=False)


class Toolboxes:
    """The tools each case runs with: the eval's, plus its own directory's, narrowed to the
    ones it offers; under --calls-only each is a stub that runs nothing."""

    def __init__(self, settings: Settings, calls_only: bool, warn: Warn) -> None:
        self._settings, self._calls_only, self._warn = settings, calls_only, warn
        self._loaded: dict[Path | None, Toolbox] = {}
        self._lock = threading.Lock()

    def loaded(self, case: Case) -> Toolbox:
        with self._lock:
            if case.tools not in self._loaded:
                self._loaded[case.tools] = self._load(case.tools)
            return self._loaded[case.tools]

    def _load(self, directory: Path | None) -> Toolbox:
        options = self._settings.options
        if directory is not None:
            if not directory.is_dir():
                raise AppError(f"no such tools directory: {directory}")
            tools = options.tools
            options = options.replace(tools=(*tools.tools, directory))
        return load_toolbox(dataclasses.replace(self._settings, options=options), self._warn)

    def functions(self, case: Case) -> ToolFunctions:
        """The tools' own functions, by name, for computing an answer."""
        return {tool.name: tool.func for tool in self.loaded(case).registry}

    def for_case(self, case: Case) -> Toolbox:
        toolbox = self.loaded(case)
        if case.specs:
            tools = [stub(spec) for spec in case.specs]
        else:
            tools = list(toolbox.registry)
            if case.only:
                unknown = sorted(set(case.only) - {tool.name for tool in tools})
                if unknown:
                    raise AppError(f"case {case.id}: only names no tool {unknown[0]!r}")
                tools = [tool for tool in tools if tool.name in case.only]
            if self._calls_only:
                tools = [stub(tool.spec, tool.source) for tool in tools]
        return Toolbox(ToolRegistry(tools), toolbox.plugins, toolbox.servers)

    def close(self) -> None:
        for toolbox in self._loaded.values():
            toolbox.close()


@contextlib.contextmanager
def fixed_now(now: str | None) -> Iterator[None]:
    """get_time reads `now` while the cases that fix it run (and their answers are computed)."""
    before = os.environ.get(NOW_VARIABLE)
    if now is not None:
        os.environ[NOW_VARIABLE] = now
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(NOW_VARIABLE, None)
        else:
            os.environ[NOW_VARIABLE] = before


# --- one run ------------------------------------------------------------------------------------


class RunReader:
    """What grading needs of a run's events, beside the figures RunTally counts."""

    def __init__(self) -> None:
        self.calls: list[MadeCall] = []
        self.first_calls: list[MadeCall] = []
        self.results: list[str] = []
        self.best_effort = False
        self._iteration = 0

    def add(self, event: Event) -> None:
        if isinstance(event, IterationStarted):
            self._iteration = event.iteration
        elif isinstance(event, ToolCallParsed):
            made = MadeCall(event.call.name, event.call.arguments)
            self.calls.append(made)
            if self._iteration <= 1:
                self.first_calls.append(made)
        elif isinstance(event, ToolFinished):
            self.results.append(event.result.content)
        elif isinstance(event, FinalAnswer):
            self.best_effort = event.best_effort

    def output(self, figures: RunFigures) -> RunOutput:
        return RunOutput(
            stop_reason=figures.stop_reason,
            answer=figures.answer,
            calls=tuple(self.calls),
            first_calls=tuple(self.first_calls),
            results=tuple(self.results),
            best_effort=self.best_effort,
            failure=figures.failure,
        )


class Stopped(Exception):
    """The eval was stopped (Ctrl-C, a signal, another run's failure) while this run went on."""


@dataclass
class LiveRun:
    """A run under way: its trace, how far it got, and whether its trace has been ended. The
    run's own thread writes its events; the thread that stops the eval may end the trace
    first, so both go through `lock`."""

    writer: Any
    progress: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    ended: bool = False


@dataclass
class Runner:
    plan: EvalPlan
    toolboxes: dict[str, Toolboxes]
    """By target label."""
    expected: dict[str, ExpectedAnswer | None]
    """By case id."""
    retrieval: dict[str, Retrieval]
    """By target label."""
    stop: threading.Event = field(default_factory=threading.Event)
    why_stopped: tuple[InterruptReason, str] = ("ctrl-c", "the eval was stopped by Ctrl-C")
    """What the traces of the runs under way say when the eval stops."""
    written: threading.Lock = field(default_factory=threading.Lock)
    live: dict[RunKey, LiveRun] = field(default_factory=dict)
    """The runs under way, by key."""

    def run(self, target: Target, strategy: Strategy, case: Case, seed: int) -> EvalRun:
        key = self.plan.key(target, strategy, case, seed)
        settings = target.settings
        if self.plan.calls_only:
            limits = dataclasses.replace(settings.limits, max_iterations=1, last_answer=False)
            settings = dataclasses.replace(settings, limits=limits)
        toolbox = self.toolboxes[target.label].for_case(case)
        assembled = variant_session(
            settings,
            toolbox,
            strategy.variant,
            seed=seed,
            retrieval=self.retrieval[target.label],
        )
        session = assembled.session
        session.history.extend(case.history)
        path = self.plan.folder / "traces" / trace_name(key)
        writer = open_trace(path, assembled, toolbox.registry)
        tally, reader = RunTally(strategy.label, seed, str(path)), RunReader()
        try:
            self._consume(key, session.ask(case.question), writer, tally, reader)
        finally:
            writer.close()
            session.close()
        figures = tally.figures()
        output = reader.output(figures)
        names = toolbox.registry.names()
        verdict = grade(
            case, output, self.expected.get(case.id), names, calls_only=self.plan.calls_only
        )
        calls = tuple(call.describe() for call in output.calls)
        results = tuple(result[:RESULT_KEPT] for result in output.results)
        run = EvalRun(key, verdict, figures.record(), calls, case.category, results)
        self._record(run)
        return run

    def _consume(
        self, key: RunKey, events: Iterator[Event], writer: Any, tally: RunTally, reader: RunReader
    ) -> None:
        from toolcall_cli.trace import RunProgress

        live = self.live[key] = LiveRun(writer, RunProgress())
        try:
            for event in events:
                with live.lock:
                    if live.ended:  # the eval stopped while this event was on its way
                        raise Stopped
                    writer.write(event)
                    live.progress.add(event)
                tally.add(event)
                reader.add(event)
                if self.stop.is_set() and not isinstance(event, RunFinished):
                    self._end(live, self.why_stopped)
                    raise Stopped
        except Exception as error:  # toolcall failed in this run: its trace says so
            if not isinstance(error, Stopped):
                self._end(live, ("crash", f"{type(error).__name__}: {error}"))
            raise
        finally:
            self._retire(key)

    def _retire(self, key: RunKey) -> None:
        """The run's own thread is done with its trace (finished, stopped or failed): the
        thread stopping the eval may hold it from before, and must no longer write to it (a
        closed file, or a trace already whole)."""
        live = self.live.pop(key, None)
        if live is not None:
            with live.lock:
                live.ended = True

    def halt(self, why: BaseException) -> None:
        """Stop the eval: no run starts, and every run under way has its trace ended now, as
        stopped by `why`, without waiting for it (a tool or a model may take minutes to
        answer, and a process told to end must end)."""
        with self.written:  # a result being recorded is counted; none is after this
            self.why_stopped = stop_reason(why)
            self.stop.set()
        for live in list(self.live.values()):
            self._end(live, self.why_stopped)

    def _end(self, live: LiveRun, why: tuple[InterruptReason, str]) -> None:
        """The run's final event, then the `interrupted` line saying `why`; once, whoever
        comes first."""
        from toolcall_cli.trace import TraceWriteError

        with live.lock:
            if live.ended or live.progress.finished:  # a run that ended itself stays as it is
                return
            live.ended = True
            with contextlib.suppress(TraceWriteError):  # a trace that cannot keeps what it has
                live.writer.write(live.progress.interrupted())
                live.writer.interrupted(*why)

    def _record(self, run: EvalRun) -> None:
        """The run's result, in results.jsonl and among the plan's runs done; none once the
        eval is stopped: the stop has said how many runs are done, and a run that ends just
        after it is run again by --resume."""
        with self.written:
            if self.stop.is_set():
                raise Stopped
            try:
                with (self.plan.folder / RESULTS).open("a", encoding="utf-8") as out:
                    out.write(strictjson.dumps(run.record()) + "\n")
            except OSError as error:
                raise AppError(
                    f"cannot write {self.plan.folder / RESULTS}: {error.strerror or error}",
                    "failure",
                ) from None
            self.plan.done[run.key] = run


def open_trace(path: Path, assembled: Any, registry: ToolRegistry) -> Any:
    """The run's trace in the eval's folder, its header written as `toolcall run` writes it,
    with the session's credentials masked in every record."""
    from toolcall_cli.private_files import PathProblem
    from toolcall_cli.trace import TraceWriter, trace_header
    from toolcall_cli.trace.writer import session_secrets

    choice = assembled.choice
    try:
        set_aside(path)
        writer = TraceWriter.open(path, secrets=session_secrets(choice.api_key, choice.base_url))
    except PathProblem as error:
        raise AppError(str(error), "failure") from None
    except OSError as error:
        raise AppError(f"cannot write {path}: {error.strerror or error}", "failure") from None
    writer.header(trace_header("eval", assembled.settings, registry))
    return writer


def set_aside(path: Path) -> None:
    """A trace already at `path` is an attempt whose result was never recorded (the eval was
    stopped mid-run, and --resume runs it again): it is kept beside, as NAME.unfinished-N.jsonl,
    so the run's own trace, which the grid names, holds that run alone. Appended to, it held
    both, and `trace show`, doctor and replay read the unfinished attempt first."""
    if not path.exists():
        return
    for number in itertools.count(1):
        aside = path.with_name(f"{path.stem}.unfinished-{number}{path.suffix}")
        if not aside.exists():
            path.rename(aside)
            return


# --- the whole matrix ---------------------------------------------------------------------------

Done = Callable[[EvalRun], None]


def run_eval(
    plan: EvalPlan, done: Done = lambda run: None, warn: Warn = print_warning
) -> list[EvalRun]:
    """Every run of the plan not already done, graded; the plan's runs in its order. `done` is
    told of each run as it ends (from the thread that ran it)."""
    toolboxes = {t.label: Toolboxes(t.settings, plan.calls_only, warn) for t in plan.targets}
    try:
        runner = Runner(
            plan,
            toolboxes,
            expected={},
            retrieval={t.label: session_retrieval(t.settings) for t in plan.targets},
        )
        first = plan.targets[0].label
        for now, cases in by_instant(plan.cases):
            with fixed_now(now):
                for case in cases:
                    runner.expected[case.id] = expected_for(case, toolboxes[first])
                run_group(runner, {case.id for case in cases}, done)
    finally:
        for toolbox in toolboxes.values():
            toolbox.close()
    finished = plan.done
    return [finished[key] for key in (plan.key(*parts) for parts in plan.runs()) if key in finished]


def expected_for(case: Case, toolboxes: Toolboxes) -> ExpectedAnswer | None:
    if case.answer is None:
        return None
    return expected_answer(case.answer, toolboxes.functions(case), f"case {case.id}")


def by_instant(cases: Sequence[Case]) -> list[tuple[str | None, list[Case]]]:
    """The cases grouped by the instant they fix, in the order each instant first appears:
    one group runs at a time, with TOOLCALL_NOW set for it."""
    groups: dict[str | None, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.now, []).append(case)
    return list(groups.items())


def run_group(runner: Runner, case_ids: set[str], done: Done) -> None:
    """The group's runs not already done: per server --jobs threads taking them in turn. The
    threads are daemons: an eval told to stop ends the traces of the runs under way and leaves,
    never waiting for a tool or a model that takes its time."""
    plan = runner.plan
    pending: dict[str, queue.SimpleQueue[tuple[Target, Strategy, Case, int]]] = {}
    for target, strategy, case, seed in plan.runs():
        if case.id in case_ids and plan.key(target, strategy, case, seed) not in plan.done:
            pending.setdefault(target.server, queue.SimpleQueue()).put(
                (target, strategy, case, seed)
            )
    failed: list[BaseException] = []
    ended: queue.SimpleQueue[None] = queue.SimpleQueue()
    workers = [
        threading.Thread(target=work, args=(runner, runs, done, failed, ended), daemon=True)
        for runs in pending.values()
        for _ in range(min(plan.jobs, runs.qsize()))
    ]
    for worker in workers:
        worker.start()
    try:
        for _ in workers:
            ended.get()
            if failed:  # the others' traces are ended: their slow tools are not waited for
                break
    except BaseException as stop:  # Ctrl-C, or a signal (termination.Terminated)
        runner.halt(stop)
        raise
    if failed:
        raise failed[0]


def work(
    runner: Runner,
    runs: queue.SimpleQueue[tuple[Target, Strategy, Case, int]],
    done: Done,
    failed: list[BaseException],
    ended: queue.SimpleQueue[None],
) -> None:
    """One worker: the server's runs, one after another, until none is left or the eval stops.
    A run that fails stops the eval, and the main thread raises its error at once. `ended` is
    told when this worker is done."""
    try:
        while not runner.stop.is_set():
            try:
                run = runs.get_nowait()
            except queue.Empty:
                return
            try:
                finish(runner, run, done)
            except BaseException as error:
                failed.append(error)
                runner.halt(error)
                return
    finally:
        ended.put(None)


def finish(runner: Runner, run: tuple[Target, Strategy, Case, int], done: Done) -> None:
    if runner.stop.is_set():
        return
    from toolcall_cli.trace import TraceWriteError

    try:
        finished = runner.run(*run)
    except Stopped:
        return
    except TraceWriteError as error:  # a full disk is said as a failure, not as a bug
        raise AppError(str(error), "failure") from None
    done(finished)


def stop_reason(why: BaseException) -> tuple[InterruptReason, str]:
    """How the trace of a run under way says why the eval stopped."""
    if isinstance(why, Terminated):
        return why.reason, f"the eval was terminated ({why.signal.name})"
    if isinstance(why, KeyboardInterrupt):
        return "ctrl-c", "the eval was stopped by Ctrl-C"
    # Not `crash`: this run did nothing wrong (the failed run's own trace says `crash`).
    return "stopped", f"the eval stopped: another run failed: {type(why).__name__}: {why}"


def stamp() -> str:
    """`20250102-030405`: when the eval began (UTC), for its folder's name."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime())

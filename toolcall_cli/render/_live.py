"""The rich view for a terminal: finished steps scroll up, the current iteration stays live."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rich.console import Console, Group, RenderableType
from rich.highlighter import JSONHighlighter
from rich.live import Live
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.spinner import Spinner
from rich.text import Text

from toolcall_cli.events import (
    AnswerWithoutTools,
    ApprovalAnswered,
    CallForming,
    CallFromResult,
    Event,
    FedBack,
    FinalAnswer,
    GroundingChecked,
    IterationStarted,
    LimitReached,
    ModelChunk,
    ModelFailed,
    ModelReplied,
    Notice,
    ParseError,
    ParserEvent,
    PlaceholdersFilled,
    ReasoningDelta,
    ReplyNotRead,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallParsed,
    ToolFinished,
    ToolsChosen,
    ToolStarted,
    ToolTimeline,
)
from toolcall_cli.history import preview
from toolcall_cli.messages import ToolCall, ToolResult
from toolcall_cli.render.base import (
    CUT_SHORT,
    RESULT_SHOWN,
    RunEvent,
    RunStats,
    ToolEvent,
    TurnEvent,
    Waiting,
    answer_label,
    assert_never,
    chosen_line,
    cut,
    fed_back_lines,
    filled_line,
    footer_parts,
    from_result_line,
    grounding_line,
    indent,
    lenient_note,
    not_read_line,
    partial_arguments,
    reply_summary,
    request_summary,
    setting,
    shown_arguments,
    shown_name,
    timeline_lines,
    tools_line,
    visible,
    withdrawn_text,
    withdrawn_title,
)
from toolcall_cli.render.verbatim import verbatim
from toolcall_cli.wording import plural

# Events after which the current iteration's live region has nothing left to show.
_TURN_ENDERS = (IterationStarted, FedBack, FinalAnswer, LimitReached, ModelFailed, RunFinished)
# Deltas arrive per token; everything else is rare enough to redraw at once.
_DELTAS = (TextDelta, ReasoningDelta, CallForming)

RAW_SHOWN = (4000, 80)
"""The characters and lines of a reply's raw output the view shows."""
REASONING_CHARS = 1200

_json_highlighter = JSONHighlighter()


@dataclass
class _Running:
    call: ToolCall
    spinner: Spinner
    since: float = field(default_factory=time.monotonic)


@dataclass
class _Turn:
    """The live state of one iteration: what streams in, and the tools still running."""

    iteration: int
    since: float = field(default_factory=time.monotonic)
    waiting: Spinner = field(default_factory=lambda: Spinner("dots", style="cyan"))
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    forming: dict[int, tuple[CallForming, Spinner]] = field(default_factory=dict)
    pending: list[RenderableType] = field(default_factory=list)
    """Steps finished before the reply ended; printed after the raw output, so the scrollback
    reads in order: output, calls, results."""
    running: dict[str, _Running] = field(default_factory=dict)
    asking: str | None = None
    """The call whose approval or --step pause is on screen: not yet run, whatever Ctrl-C ends."""
    replied: bool = False

    def drop_forming(self) -> None:
        # Calls complete in the order they started, so the oldest forming call is the one done.
        if self.forming:
            del self.forming[min(self.forming)]


class LiveRenderer:
    """Renders a run with rich; `close()` stops the live region and leaves the terminal clean."""

    def __init__(
        self,
        console: Console,
        *,
        auto_refresh: bool = True,
        show_request: bool = False,
    ) -> None:
        self._console = console
        self._auto_refresh = auto_refresh
        self._show_request = show_request
        self._stats = RunStats()
        self._turn: _Turn | None = None
        self._live: Live | None = None
        # The refresh thread reads the turn while the loop's thread changes it.
        self._lock = threading.RLock()

    # --- the Renderer protocol -------------------------------------------------------------

    def handle(self, event: Event) -> None:
        if isinstance(event, ModelChunk):
            return  # the parser's deltas show what it held; nothing to redraw for
        self._stats.update(event)
        if isinstance(event, _TURN_ENDERS):
            self._end_turn()
        with self._lock:
            above = self._apply(event)
        if self._turn is not None:
            self._start_live()
            self._refresh(delta=isinstance(event, _DELTAS))
        for renderable in above:
            self._console.print(renderable)

    def close(self) -> None:
        self._end_turn()

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """Clear the live region while something else reads from or writes to the terminal
        (an approval prompt: Live would swallow it); it comes back on the way out."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()
        try:
            yield
            if self._turn is not None:
                self._turn.asking = None  # answered: the call runs, or is answered without
        finally:
            if self._turn is not None:
                self._start_live()
                self._refresh(delta=False)

    # --- events ------------------------------------------------------------------------------

    def _apply(self, event: Event) -> list[RenderableType]:
        """Update the live state for `event`; return what to print above the live region."""
        if isinstance(event, ParserEvent):
            return self._apply_parsed(event)
        if isinstance(event, TurnEvent):
            return self._apply_turn(event)
        if isinstance(event, ToolEvent):
            return self._apply_tool(event)
        if isinstance(event, RunEvent):
            return self._apply_run(event)
        if isinstance(event, Waiting):
            self._current().asking = event.call.id if event.call is not None else None
            return []
        assert_never(event)

    def _apply_parsed(self, event: ParserEvent) -> list[RenderableType]:
        """Deltas grow the live region; a finished call (or one that failed to parse) is a step."""
        match event:
            case TextDelta():
                self._current().text.append(event.text)
            case ReasoningDelta():
                self._current().reasoning.append(event.text)
            case CallForming():
                self._on_forming(event)
            case ToolCallParsed():
                self._current().drop_forming()
                return self._step(self._call_block(event.call))
            case ParseError():
                self._current().drop_forming()
                return self._step(self._parse_error_block(event))
            case _:
                assert_never(event)
        return []

    def _apply_turn(self, event: TurnEvent) -> list[RenderableType]:
        match event:
            case IterationStarted():
                self._turn = _Turn(iteration=event.iteration)
                return self._iteration_heading(event)
            case ModelChunk():
                return []  # for the trace; the parser's deltas show what it held
            case ModelReplied():
                return self._on_replied(event)
            case ToolsChosen():
                return [Text("tools: " + chosen_line(event), style="blue")]
            case FedBack():
                return [self._fed_back_block(event)]
            case _:
                assert_never(event)

    def _apply_tool(self, event: ToolEvent) -> list[RenderableType]:
        match event:
            case ToolStarted():
                spinner = Spinner("dots", style="cyan")
                self._current().running[event.call.id] = _Running(event.call, spinner)
                return []
            case PlaceholdersFilled():
                return self._step(Text(filled_line(event), style="magenta"))
            case CallFromResult():
                return self._step(Text(from_result_line(event), style="bold yellow"))
            case ApprovalAnswered():
                return []  # the prompt showed what was typed; a call not run says so itself
            case ToolFinished():
                self._current().running.pop(event.call.id, None)
                return self._step(self._result_block(event.call, event.result))
            case ToolTimeline():
                return _timeline_block(event, self._console.width)
            case _:
                assert_never(event)

    def _apply_run(self, event: RunEvent) -> list[RenderableType]:
        match event:
            case RunStarted():
                return [self._header(event)]
            case Notice():
                return [_notice_line(event)]
            case FinalAnswer():
                return [_answer_panel(event)]
            case AnswerWithoutTools():
                title = withdrawn_title(event)
                return [_stop_panel(title, withdrawn_text(event), "yellow")]
            case GroundingChecked():
                return [Text(f"⚠ {grounding_line(event)}", style="yellow")]
            case LimitReached():
                return [_stop_panel(f"limit reached: {event.limit}", event.message, "yellow")]
            case ReplyNotRead():
                return [Text(f"⚠ {not_read_line(event)}", style="yellow")]
            case ModelFailed():
                title = f"model failed: {event.error_kind}"
                return [_stop_panel(title, event.message, "red")]
            case RunFinished():
                return [self._footer(event)]
            case _:
                assert_never(event)

    def _current(self) -> _Turn:
        if self._turn is None:  # events outside an iteration: show them rather than fail
            self._turn = _Turn(iteration=0)
        return self._turn

    def _step(self, renderable: RenderableType) -> list[RenderableType]:
        turn = self._current()
        if turn.replied:
            return [renderable]
        turn.pending.append(renderable)
        return []

    def _on_forming(self, event: CallForming) -> None:
        turn = self._current()
        previous = turn.forming.get(event.index)
        spinner = previous[1] if previous else Spinner("dots", style="yellow")
        turn.forming[event.index] = (event, spinner)

    def _on_replied(self, event: ModelReplied) -> list[RenderableType]:
        turn = self._current()
        turn.replied = True
        turn.forming.clear()
        turn.text.clear()
        turn.reasoning.clear()
        pending, turn.pending = turn.pending, []
        return [*self._reasoning_panel(event.reasoning), self._raw_panel(event), *pending]

    # --- the live region ---------------------------------------------------------------------

    def _start_live(self) -> None:
        if self._live is not None:
            return
        self._live = Live(
            console=self._console,
            auto_refresh=self._auto_refresh,
            refresh_per_second=12.5,
            transient=True,  # everything it showed is printed above once finished
            get_renderable=self._live_view,
            # rich would swap sys.stdout/sys.stderr for its own proxy while live, on top of the
            # router that keeps what tools print (tools/_capture.py): tools' prints would then
            # land above the live region instead of under their result.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def _refresh(self, *, delta: bool) -> None:
        # With auto refresh the refresh thread picks deltas up at its own pace (that is the
        # throttle); other events redraw at once so the region never lags what is printed.
        if self._live is not None and not (delta and self._auto_refresh):
            self._live.refresh()

    def _end_turn(self) -> None:
        """Stop the live region; what never finished (an interrupted stream) is printed."""
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()
        with self._lock:
            turn, self._turn = self._turn, None
        if turn is None:
            return
        for renderable in _leftovers(turn):
            self._console.print(renderable)

    def _live_view(self) -> RenderableType:
        with self._lock:
            turn = self._turn
            if turn is None:
                return Text("")
            return Group(*self._streaming_rows(turn), *self._running_rows(turn))

    def _streaming_rows(self, turn: _Turn) -> list[RenderableType]:
        if turn.replied:
            return []
        rows: list[RenderableType] = []
        if turn.reasoning:
            rows.append(_tail("".join(turn.reasoning), 4, "dim italic"))
        if turn.text:
            rows.append(_tail("".join(turn.text), 12, ""))
        rows += turn.pending
        for event, spinner in turn.forming.values():
            spinner.update(text=_forming_text(event))
            rows.append(spinner)
        if not (turn.text or turn.reasoning or turn.forming or turn.pending):
            turn.waiting.update(text=Text(f"waiting for the model… {self._since(turn.since)}"))
            rows.append(turn.waiting)
        return rows

    def _running_rows(self, turn: _Turn) -> list[RenderableType]:
        rows: list[RenderableType] = []
        for running in turn.running.values():
            label = Text.assemble(("running ", "cyan"), (shown_name(running.call.name), "bold"))
            label.append(f"  {self._since(running.since)}", style="dim")
            running.spinner.update(text=label)
            rows.append(running.spinner)
        return rows

    def _since(self, start: float) -> str:
        return f"{time.monotonic() - start:.1f}s"

    # --- blocks printed above --------------------------------------------------------------

    def _header(self, event: RunStarted) -> RenderableType:
        body = Text.assemble(
            ("model ", "dim"),
            (visible(event.model), "bold"),
            ("  ·  strategy ", "dim"),
            (visible(event.strategy_label), "bold"),
        )
        for key, value in event.sampling.items():
            body.append_text(Text.assemble((f"  ·  {key} ", "dim"), (setting(value), "bold")))
        tools = tools_line(event.tools)
        body.append_text(Text.assemble("\n", ("tools ", "dim"), tools))
        body.append_text(Text.assemble("\n", ("question ", "dim"), visible(event.question)))
        return _panel(body, "toolcall", "cyan")

    def _iteration_heading(self, event: IterationStarted) -> list[RenderableType]:
        rows: list[RenderableType] = [
            Rule(Text(f"Iteration {event.iteration}", style="bold"), align="left"),
            Text(f"request: {request_summary(event.request)}", style="dim"),
        ]
        if self._show_request:
            body = json.dumps(event.request, ensure_ascii=False, indent=2, default=repr)
            rows.append(_json_highlighter(Text(visible(body))))
        return rows

    def _reasoning_panel(self, reasoning: str) -> list[RenderableType]:
        if not reasoning:
            return []
        shown = cut(visible(reasoning), REASONING_CHARS)
        body = Text(shown.text, style="dim italic")
        if shown.was_cut:
            body.append("\n" + shown.note(), style="dim")
        return [_panel(body, "reasoning", "dim")]

    def _raw_panel(self, event: ModelReplied) -> RenderableType:
        shown = cut(visible(event.raw), *RAW_SHOWN)
        # Text, never a markup string: `[bold]` or `[/tool_call]` from the model stays literal.
        body = Text(shown.text) if shown.text else Text("(empty)", style="dim")
        if shown.was_cut:
            body.append("\n" + shown.note(), style="dim")
        summary = reply_summary(event)
        return Panel(
            body,
            title="model output (raw)",
            title_align="left",
            subtitle=Text(summary, style="dim") if summary else None,
            subtitle_align="right",
            border_style="blue",
        )

    def _call_block(self, call: ToolCall) -> RenderableType:
        line = Text.assemble(("→ call ", "magenta"), (shown_name(call.name), "bold magenta"), " ")
        line.append_text(_json_highlighter(Text(shown_arguments(call.arguments))))
        line.append(f"  {shown_name(call.id)}", style="dim")
        lenient = lenient_note(call, self._stats.tagged)
        notes = [Text(f"  ℹ {lenient}", style="cyan")] if lenient else []
        if call.repaired:
            note = Text("  ⚠ json-repair fixed the JSON; the model wrote: ", style="yellow")
            notes.append(note.append(visible(preview(call.raw, 200)), style="dim"))
        return Group(line, *notes) if notes else line

    def _parse_error_block(self, error: ParseError) -> RenderableType:
        rows: list[RenderableType] = [
            Text.assemble(("✗ parse error ", "bold red"), (visible(error.message), "red")),
        ]
        if error.truncated:
            rows.append(Text(f"  {CUT_SHORT}", "red"))  # the message says where it ended
        raw = cut(visible(error.raw), *RESULT_SHOWN)
        body = Text("raw: ", style="dim")
        body.append(raw.text, style=verbatim())
        if raw.was_cut:
            body.append("\n" + raw.note())
        rows.append(Padding(body, (0, 0, 0, 4), expand=False))
        fed = f"  ↩ fed back to the model as an error result for {shown_name(error.call_id)}"
        rows.append(Text(fed, style="dim red"))
        return Group(*rows)

    def _result_block(self, call: ToolCall, result: ToolResult) -> RenderableType:
        if result.ok:
            head = Text.assemble(("✓ ", "bold green"), (shown_name(call.name), "bold"))
        else:
            head = Text.assemble(("✗ ", "bold red"), (shown_name(call.name), "bold red"))
        # The call's id pairs the result with its call: two calls of one tool look alike.
        head.append(f" {shown_name(call.id)}", style="dim")
        if not result.ok:
            head.append(f" {result.error_kind or 'error'}", style="red")
        head.append(f"  {result.duration:.2f}s", style="dim")
        if result.cached:
            head.append("  repeated call: earlier result reused, not run", style="yellow")
        shown = cut(visible(result.content), *RESULT_SHOWN)
        body = Text("fed back: " if not result.ok else "", style="dim")
        body.append(shown.text, style=verbatim("" if result.ok else "red"))
        for note in (shown.note(), _model_cut_note(result)):
            if note:
                body.append("\n" + note, style="dim")
        if result.coerced:
            fixes = "; ".join(visible(c) for c in result.coerced)
            body.append(f"\nargument types fixed before validation: {fixes}", style="yellow")
        self._append_printed(body, result)
        return Group(head, Padding(body, (0, 0, 0, 4), expand=False))

    def _append_printed(self, body: Text, result: ToolResult) -> None:
        """What the tool printed while it ran: the user sees it here; the model never does."""
        if not result.output or result.cached:  # a reused result: the tool did not run now
            return
        shown = cut(visible(result.output.rstrip("\n")), *RESULT_SHOWN)
        body.append("\nprinted by the tool:", style="dim")
        # Text, never markup: `[red]` printed by a tool stays literal.
        body.append("\n" + indent(shown.text, "  "), style=verbatim("italic"))
        if shown.was_cut:
            body.append("\n  " + shown.note(), style="dim")

    def _fed_back_block(self, event: FedBack) -> RenderableType:
        head = f"↩ fed back to the model ({plural(len(event.messages), 'message')})"
        rows: list[RenderableType] = [Text(head, style="cyan")]
        # One line per message, or per result block of a text protocol's results message, each
        # cut on its own: every call id fed back is on screen, however long the results.
        rows += [
            Text("    " + line, style="dim", no_wrap=True, overflow="ellipsis")
            for m in event.messages
            for line in fed_back_lines(m, 300)
        ]
        return Group(*rows)

    def _footer(self, event: RunFinished) -> RenderableType:
        return Group(Rule(style="dim"), Text(" · ".join(footer_parts(event, self._stats)), "dim"))


def _tail(text: str, lines: int, style: str) -> Text:
    """The last lines of a growing text: the live region stays small however long it gets."""
    kept = visible(text).split("\n")[-lines:]
    return Text("\n".join(kept), style=style)


def _forming_text(event: CallForming) -> Text:
    label = Text.assemble(("forming ", "yellow"), (shown_name(event.name or "?"), "bold"), " ")
    shown = partial_arguments(event.arguments_text)[-120:]
    label.append(visible(preview(shown, 120)), style="dim")
    return label


def _timeline_block(event: ToolTimeline, width: int) -> list[RenderableType]:
    shown = timeline_lines(event.entries, width - 4)  # each line is indented by 4
    if not shown:
        return []
    rows = [Text("timeline", style="cyan")]
    rows += [Text("    " + visible(line), style="dim", no_wrap=True) for line in shown]
    return [Group(*rows)]


def _model_cut_note(result: ToolResult) -> str:
    if result.full_length is None:
        return ""
    return f"the tool returned {result.full_length:,} chars; the model got {len(result.content):,}"


def _notice_line(event: Notice) -> Text:
    marks = {"info": ("ℹ", "cyan"), "warning": ("⚠", "yellow"), "error": ("✗", "red")}
    mark, style = marks.get(event.level, ("ℹ", "cyan"))
    return Text(f"{mark} {visible(event.message)}", style=style)


def _answer_panel(answer: FinalAnswer) -> Panel:
    text = answer.text
    body = Text(visible(text)) if text else Text("(empty answer)", style="dim")
    colour = "yellow" if answer.best_effort or answer.cut else "green"
    return _panel(body, answer_label(answer), colour)


def _stop_panel(title: str, message: str, colour: str) -> Panel:
    return _panel(Text(visible(message)), title, colour)


def _panel(body: Text, title: str, colour: str) -> Panel:
    return Panel(body, title=title, title_align="left", border_style=colour)


def _leftovers(turn: _Turn) -> list[RenderableType]:
    """What an iteration that ended early (model failed, Ctrl-C) had shown only live."""
    rows: list[RenderableType] = []
    if not turn.replied and (turn.text or turn.reasoning):
        said = "\n".join(visible("".join(part)) for part in (turn.reasoning, turn.text) if part)
        # With reasoning, the whole panel is dim italic: the text after it too.
        body = Text(said, style="dim italic" if turn.reasoning else "")
        rows.append(_panel(body, "model output so far (incomplete)", "yellow"))
    if not turn.replied:
        rows += turn.pending
    rows += [
        Text(f"… {shown_name(r.call.name)} {_left_how(r.call, turn)}", style="yellow")
        for r in turn.running.values()
    ]
    return rows


def _left_how(call: ToolCall, turn: _Turn) -> str:
    # A call stopped at its approval question never ran: "still running" would say it had.
    if call.id == turn.asking:
        return "did not run: stopped while it waited for your answer"
    return "was still running"

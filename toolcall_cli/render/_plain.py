"""Plain lines for pipes and logs (no colours, no control codes), and the quiet answer-only mode."""

from __future__ import annotations

import json
from typing import IO

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
    LineWriter,
    RunEvent,
    RunStats,
    ToolEvent,
    TurnEvent,
    Waiting,
    answer_label,
    asked_again_lines,
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
    reply_summary,
    request_summary,
    setting,
    shown_arguments,
    shown_name,
    timeline_lines,
    tools_line,
    visible,
    withdrawn_title,
)

RAW_SHOWN = (20_000, 500)
"""The characters and lines of a reply's raw output (and its reasoning) shown: more than the
live view shows, since plain output goes to logs, where more is wanted; still bounded, since a
model can send megabytes (the final answer is always shown whole)."""


class PlainRenderer(LineWriter):
    """The same steps as the live view, one plain line (or indented block) each.

    Streaming deltas are skipped: the whole reply shows once it has arrived.
    """

    def __init__(
        self,
        stream: IO[str],
        *,
        show_request: bool = False,
    ) -> None:
        super().__init__(stream)
        self._show_request = show_request
        self._stats = RunStats()

    def handle(self, event: Event) -> None:
        self._stats.update(event)
        lines = self._lines(event)
        if lines:
            self._write("\n".join(lines))

    def _lines(self, event: Event) -> list[str]:
        if isinstance(event, ParserEvent):
            return self._parser_lines(event)
        if isinstance(event, TurnEvent):
            return self._turn_lines(event)
        if isinstance(event, ToolEvent):
            return self._tool_lines(event)
        if isinstance(event, RunEvent):
            return _run_lines(event, self._stats)
        if isinstance(event, Waiting):
            return []
        assert_never(event)

    def _parser_lines(self, event: ParserEvent) -> list[str]:
        match event:
            case TextDelta() | ReasoningDelta() | CallForming():
                return []  # the whole reply shows once it has arrived
            case ToolCallParsed():
                return _call(event.call, self._stats.tagged)
            case ParseError():
                return self._parse_error(event)
            case _:
                assert_never(event)

    def _turn_lines(self, event: TurnEvent) -> list[str]:
        match event:
            case IterationStarted():
                return self._iteration(event)
            case ModelChunk():
                return []  # for the trace; the parser's events show what it held
            case ModelReplied():
                return _reply(event)
            case ToolsChosen():
                return [chosen_line(event)]
            case FedBack():
                lines = [line for m in event.messages for line in fed_back_lines(m, 200)]
                return ["fed back:", *(indent(line) for line in lines)]
            case _:
                assert_never(event)

    def _tool_lines(self, event: ToolEvent) -> list[str]:
        match event:
            case ToolStarted():
                return []  # its result says all there is
            case PlaceholdersFilled():
                return [filled_line(event)]
            case CallFromResult():
                return [f"warning: {from_result_line(event)}"]
            case ApprovalAnswered():
                return []  # the prompt showed what was typed; a call not run says so itself
            case ToolFinished():
                return self._result(event.call, event.result)
            case ToolTimeline():
                shown = timeline_lines(event.entries)
                return ["timeline:", *(indent(visible(line)) for line in shown)] if shown else []
            case _:
                assert_never(event)

    def _iteration(self, event: IterationStarted) -> list[str]:
        summary = request_summary(event.request)
        lines = [f"== iteration {event.iteration} ==", f"request: {summary}"]
        if self._show_request:
            body = json.dumps(event.request, ensure_ascii=False, indent=2, default=repr)
            lines += [indent(line) for line in visible(body).split("\n")]
        return lines

    def _parse_error(self, error: ParseError) -> list[str]:
        lines = [f"error parse_error {shown_name(error.call_id)}: {visible(error.message)}"]
        if error.truncated:
            lines.append(f"    {CUT_SHORT}")  # the message says where it ended; this, why
        raw = cut(visible(error.raw), *RESULT_SHOWN)
        return [*lines, indent("raw: " + raw.with_note("\n"))]

    def _result(self, call: ToolCall, result: ToolResult) -> list[str]:
        status = "ok" if result.ok else f"error {result.error_kind or 'error'}"
        if result.cached:
            status += " (repeated call: earlier result reused, not run)"
        shown = cut(visible(result.content), *RESULT_SHOWN)
        head, *rest = shown.with_note("\n").split("\n")
        name = f"{shown_name(call.name)} {shown_name(call.id)}"  # the id pairs it with its call
        lines = [f"tool {name} {status} {result.duration:.2f}s -> {head}"]
        lines += [indent(line) for line in rest]
        if result.coerced:
            fixes = "; ".join(visible(c) for c in result.coerced)
            lines.append(indent(f"argument types fixed before validation: {fixes}"))
        if result.full_length is not None:
            lines.append(
                indent(f"(the model got {len(result.content):,} of {result.full_length:,} chars)")
            )
        return lines + self._printed(result)

    def _printed(self, result: ToolResult) -> list[str]:
        """What the tool printed while it ran: the user sees it here; the model never does."""
        if not result.output or result.cached:  # a reused result: the tool did not run now
            return []
        shown = cut(visible(result.output.rstrip("\n")), *RESULT_SHOWN)
        return [indent("printed by the tool:"), indent(shown.with_note("\n"), "      ")]


class QuietRenderer(LineWriter):
    """Only the final answer's text: for scripts. Failures go to stderr from the CLI."""

    def handle(self, event: Event) -> None:
        if isinstance(event, FinalAnswer):
            self._write(visible(event.text))


def _run_lines(event: RunEvent, stats: RunStats) -> list[str]:
    match event:
        case RunStarted():
            return _header(event)
        case Notice():
            return [f"{event.level}: {visible(event.message)}"]
        case FinalAnswer():
            return _labelled(answer_label(event), event.text)
        case AnswerWithoutTools():
            told = f"{withdrawn_title(event)}: {visible(event.message)}"
            return [told, *asked_again_lines(event)]
        case GroundingChecked():
            return [f"warning: {grounding_line(event)}"]
        case LimitReached():
            return [f"limit reached ({event.limit}): {visible(event.message)}"]
        case ReplyNotRead():
            return [f"warning: {not_read_line(event)}"]
        case ModelFailed():
            return [f"model failed ({event.error_kind}): {visible(event.message)}"]
        case RunFinished():
            return ["-- " + ", ".join(footer_parts(event, stats))]
        case _:
            assert_never(event)


def _header(event: RunStarted) -> list[str]:
    tools = tools_line(event.tools)
    sampling = "".join(f", {key} {setting(value)}" for key, value in event.sampling.items())
    return [
        f"model {visible(event.model)}, strategy {visible(event.strategy_label)}{sampling}, "
        f"tools: {tools}",
        *_labelled("question", event.question),
    ]


def _reply(event: ModelReplied) -> list[str]:
    lines = ["reasoning:", _cut_block(event.reasoning)] if event.reasoning else []
    lines += ["model output:", _cut_block(event.raw) if event.raw else "    (empty)"]
    summary = reply_summary(event)
    return lines + ([f"({summary})"] if summary else [])


def _cut_block(text: str) -> str:
    """Text indented under its label, cut to the view's size with a note saying how much."""
    return indent(cut(visible(text), *RAW_SHOWN).with_note("\n"))


def _call(call: ToolCall, tagged: bool) -> list[str]:
    arguments = shown_arguments(call.arguments)
    lines = [f"call {shown_name(call.name)} {arguments}  {shown_name(call.id)}"]
    lenient = lenient_note(call, tagged)
    if lenient:
        lines.append(indent(f"({lenient})"))
    if call.repaired:
        lines.append(
            indent(
                f"(json-repair fixed the JSON; the model wrote: {visible(preview(call.raw, 200))})"
            )
        )
    return lines


def _labelled(label: str, text: str) -> list[str]:
    """`label: text` on one line, or the label then the text indented when it has several."""
    text = visible(text)
    if "\n" not in text:
        return [f"{label}: {text}"]
    return [f"{label}:", indent(text)]

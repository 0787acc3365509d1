"""The typed events a run yields. Renderers, the trace writer and the tests all consume these."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.messages import ToolCall, ToolResult

# --- emitted by a strategy's parser while a reply arrives ------------------------------------


@dataclass(frozen=True, kw_only=True)
class TextDelta:
    """Display text (text outside any call), as it arrives."""

    kind: Literal["text_delta"] = "text_delta"
    text: str


@dataclass(frozen=True, kw_only=True)
class ReasoningDelta:
    """Thinking text (`<think>` or `reasoning_content`): shown apart, never parsed for calls."""

    kind: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


@dataclass(frozen=True, kw_only=True)
class CallForming:
    """A call whose text is still arriving; `arguments_text` is everything seen so far."""

    kind: Literal["call_forming"] = "call_forming"
    index: int
    name: str | None
    arguments_text: str


@dataclass(frozen=True, kw_only=True)
class ToolCallParsed:
    """A complete call, parsed and ready to run."""

    kind: Literal["tool_call_parsed"] = "tool_call_parsed"
    call: ToolCall


@dataclass(frozen=True, kw_only=True)
class ParseError:
    """Call text that could not be turned into a call. It is fed back, never raised."""

    kind: Literal["parse_error"] = "parse_error"
    message: str
    raw: str
    call_id: str
    truncated: bool = False
    """True when the reply ended inside the call (cut by max_tokens or a dropped stream)."""


ParserEvent = TextDelta | ReasoningDelta | CallForming | ToolCallParsed | ParseError

# --- emitted by the loop --------------------------------------------------------------------


def strategy_label(strategy: str, mode: str) -> str:
    """`schema json`, `stream native`, `regex`: a strategy with its mode, where it has one."""
    return f"{strategy} {mode}" if mode else strategy


@dataclass(frozen=True, kw_only=True)
class RunStarted:
    kind: Literal["run_started"] = "run_started"
    question: str
    model: str
    strategy: str
    tools: tuple[str, ...]
    sampling: dict[str, float | int] = field(default_factory=dict)
    """The temperature, top_p and seed every request of the run carries; only those set."""
    mode: str = ""
    """The strategy's mode (schema: tools, json or required; stream: tags or native); empty
    for regex, and in a trace written before runs recorded it."""

    @property
    def strategy_label(self) -> str:
        """`schema json`, `stream native`, `regex`: the strategy as it ran, named as `compare`
        names it."""
        return strategy_label(self.strategy, self.mode)


@dataclass(frozen=True, kw_only=True)
class IterationStarted:
    kind: Literal["iteration_started"] = "iteration_started"
    iteration: int
    request: dict[str, Any]
    """The exact request body sent to the model (OpenAI chat-completions shape)."""


@dataclass(frozen=True, kw_only=True)
class ModelChunk:
    """One streamed chunk as the model layer received it: for the trace, so a streamed run can
    be played back chunk by chunk. The views show what the parser made of it instead."""

    kind: Literal["model_chunk"] = "model_chunk"
    iteration: int
    delta: dict[str, Any]
    """The chunk's `choices[0].delta` (content, tool_calls, reasoning parts), as sent."""
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    """The chunk's own `usage`, where the server sent one (usually the last chunk)."""


@dataclass(frozen=True, kw_only=True)
class ModelReplied:
    """The model's whole reply for one iteration, verbatim, once it has fully arrived."""

    kind: Literal["model_replied"] = "model_replied"
    iteration: int
    raw: str
    """The raw output: the content text, or for native tool calls the message as JSON."""
    text: str
    reasoning: str = ""
    finish_reason: str | None = None
    latency: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolStarted:
    kind: Literal["tool_started"] = "tool_started"
    call: ToolCall


@dataclass(frozen=True, kw_only=True)
class PlaceholdersFilled:
    """With --dag: a call's placeholders were filled from earlier results, just before it
    runs. `call` carries the arguments the tool gets; `placeholders` what the model wrote."""

    kind: Literal["placeholders_filled"] = "placeholders_filled"
    call: ToolCall
    placeholders: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CallFromResult:
    """A call that appears in an earlier tool result: the page, file or mail a tool read may
    have written it (prompt injection). It runs only if the user approves it, whatever --yes
    says; when nobody can be asked, it is refused, and the model is told why."""

    kind: Literal["call_from_result"] = "call_from_result"
    call: ToolCall
    result_name: str
    """The tool whose result holds the call."""
    result_id: str
    """The id of the call that result answered."""
    verbatim: bool
    """True: the call's own text stands in the result (spacing aside). False: the same call,
    name and arguments, can be read out of the result, written another way."""


UNRECORDED = {"recorded": False}
"""Field metadata: the field is the consumer's answer slot, never part of an event's record."""


@dataclass(frozen=True, kw_only=True)
class Asked:
    """An event the loop waits on: the consumer answers it with `answer()` before it takes the
    next event; `answered` is that answer, or None."""

    _answers: list[Any] = field(
        default_factory=list, compare=False, repr=False, metadata=UNRECORDED
    )

    def answer(self, answer: Any) -> None:
        self._answers[:] = [answer]

    @property
    def answered(self) -> Any:
        return self._answers[0] if self._answers else None


@dataclass(frozen=True, kw_only=True)
class ApprovalAsked(Asked):
    """A call waits for the user's yes before it runs: its tool is dangerous, or the call was
    copied from a tool result. The loop asks and never answers itself: the consumer answers
    "yes", "no", "always", True/False, or a Declined saying why nobody said yes (pydantic-ai
    hands such deferred calls back to its caller the same way). A call nobody answers is
    declined, and the model told why."""

    kind: Literal["approval_asked"] = "approval_asked"
    call: ToolCall
    reason: Literal["dangerous", "from_result"]
    dangerous: bool = True
    """Whether the tool is a dangerous one (a call from a result may be of any tool)."""
    result_name: str = ""
    """from_result: the tool whose result holds the call."""
    result_id: str = ""
    """from_result: the id of the call that result answered."""

    @property
    def offers_always(self) -> bool:
        """Whether "always" (yes to this tool for the rest of the session) may be answered: not
        for a call a result planted, which is approved one call at a time."""
        return self.reason == "dangerous"


@dataclass(frozen=True, kw_only=True)
class ApprovalAnswered:
    """What the user answered an ApprovalAsked, once they have: a program reading the events
    (--json) learns that the run waits no more, and how the question ended. `declined`:
    nobody could be asked (or the consumer declined, saying why); the call is not run."""

    kind: Literal["approval_answered"] = "approval_answered"
    call_id: str
    name: str
    answer: Literal["yes", "no", "always", "declined"]
    waited: float
    """Seconds the question waited for the answer: the person's time, kept out of the run's."""


@dataclass(frozen=True, kw_only=True)
class StepPaused(Asked):
    """--step: the run waits before a model request or a tool execution. The consumer answers
    "go", "quit", and before a tool also "skip" or the edited arguments (a dict). Unanswered,
    the run goes on. Edited arguments that do not fit the tool's schema bring the same pause
    again, with `problem` saying why and `draft` holding them."""

    kind: Literal["step_paused"] = "step_paused"
    before: Literal["request", "tool"]
    iteration: int
    request: dict[str, Any] | None = None
    call: ToolCall | None = None
    problem: str | None = None
    draft: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ToolFinished:
    kind: Literal["tool_finished"] = "tool_finished"
    call: ToolCall
    result: ToolResult
    started: float | None = None
    """Seconds from the start of the round to the start of the call (None: it never ran)."""
    ended: float | None = None
    """Seconds from the start of the round to its result."""


@dataclass(frozen=True)
class TimelineEntry:
    """One call of a round on the round's time axis."""

    call_id: str
    name: str
    ref: str | None
    """The model's id for the call (--dag)."""
    waits_for: tuple[str, ...]
    """The call ids it waited for."""
    started: float | None
    ended: float | None
    ok: bool
    outcome: str
    """"ok", "reused", an error kind ("timeout", "skipped", ...), or "unanswered"."""
    approval_wait: float = 0.0
    """Seconds it waited for the user's answer to its approval question, just before
    `started`: the person's time, never the call's."""


@dataclass(frozen=True, kw_only=True)
class ToolTimeline:
    """A round's calls on one time axis, with what waited for what: drawn when the round ends."""

    kind: Literal["tool_timeline"] = "tool_timeline"
    entries: tuple[TimelineEntry, ...]


@dataclass(frozen=True)
class ChosenTool:
    """One tool a request carries under retrieval, with why."""

    name: str
    score: float | None
    """The ranker's score; None for the search_tools meta-tool, which is not ranked."""
    found: bool = False
    """Added because the model found it with search_tools."""


@dataclass(frozen=True, kw_only=True)
class ToolsChosen:
    """With retrieval on (--retrieve): the tools this request carries, of how many, and why."""

    kind: Literal["tools_chosen"] = "tools_chosen"
    iteration: int
    total: int
    """The registered tools that were ranked (search_tools not counted)."""
    sent: tuple[ChosenTool, ...]
    ranker: str
    """"lexical" or "embed"."""
    added: tuple[str, ...] = ()
    """The tools search_tools found that this request carries."""


@dataclass(frozen=True, kw_only=True)
class FedBack:
    """The messages appended to the request for the next iteration, in wire format."""

    kind: Literal["fed_back"] = "fed_back"
    iteration: int
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True, kw_only=True)
class Notice:
    """Something the user should know that is not an error of the run (e.g. a cut result)."""

    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str


@dataclass(frozen=True, kw_only=True)
class AnswerWithoutTools:
    """Tool rounds kept failing, or only repeated earlier calls, so the model is told to answer
    with what it has, without tools."""

    kind: Literal["answer_without_tools"] = "answer_without_tools"
    failed_rounds: int
    """Rounds in a row without progress (failed, repeated, or not an answer)."""
    message: str
    """The instruction added to the conversation."""
    repeated: bool = False
    """Withdrawn because the last rounds only repeated calls whose results the model has."""
    failed_again: bool = False
    """The repeated calls had failed, and failed again the same way."""
    asked_again: str = ""
    """The user's question, sent again on its own after the instruction (the model answers the
    last thing it is asked)."""


GroundingAction = Literal["refused", "ran_on_repeat", "warned", "nudged", "stands"]


@dataclass(frozen=True, kw_only=True)
class GroundingChecked:
    """Figures from nowhere (in neither the question nor any result) in a call's arguments or
    in an answer, and what became of them (--grounding)."""

    kind: Literal["grounding_checked"] = "grounding_checked"
    what: Literal["arguments", "answer"]
    action: GroundingAction
    """refused: the call was not run, the model told why; ran_on_repeat: the same call sent
    again ran, with a note; warned: shown only (--grounding warn); nudged: the model was told
    the answer's figures are in no result and asked again; stands: the answer after a nudge,
    taken as it is."""
    figures: tuple[str, ...]
    """The figures from nowhere: `value=25` in arguments, `2` in an answer."""
    call: ToolCall | None = None
    mode: Literal["off", "warn", "check"] = "check"


@dataclass(frozen=True, kw_only=True)
class FinalAnswer:
    kind: Literal["final_answer"] = "final_answer"
    text: str
    best_effort: bool = False
    """Made without tools by one last request at the iteration limit: the run did not finish."""
    ungrounded: tuple[str, ...] = ()
    """Figures of the answer that no result holds, after one nudge: the answer stands, marked."""
    cut: bool = False
    """The reply stopped at the token limit (finish_reason "length"): its end may be missing."""


@dataclass(frozen=True, kw_only=True)
class LimitReached:
    kind: Literal["limit_reached"] = "limit_reached"
    limit: Literal["iterations", "timeout"]
    message: str


@dataclass(frozen=True, kw_only=True)
class ModelFailed:
    """The model could not be reached or answered with an error; the run stops."""

    kind: Literal["model_failed"] = "model_failed"
    message: str
    error_kind: str
    """A short category ("connection", "timeout", "auth", "not_found", "bad_request",
    "rate_limit", "server", "protocol")."""


@dataclass(frozen=True, kw_only=True)
class ReplyNotRead:
    """The model's server could not read its reply as a tool call, and answered with an error in
    place of the reply (llama-server and Ollama read calls themselves): malformed output, told
    to the model, which is asked again. Not the end of the run."""

    kind: Literal["reply_not_read"] = "reply_not_read"
    iteration: int
    message: str
    """What the user is shown: what the server answered, and its reason."""
    said: str
    """The server's reason in its own words, as the model is told it."""


StopReason = Literal["answered", "limit", "model_failed", "interrupted", "input_rejected"]


@dataclass(frozen=True, kw_only=True)
class RunFinished:
    kind: Literal["run_finished"] = "run_finished"
    stop_reason: StopReason
    iterations: int
    tool_calls: int
    elapsed: float
    usage: dict[str, int] = field(default_factory=dict)


Event = (
    TextDelta
    | ReasoningDelta
    | CallForming
    | ToolCallParsed
    | ParseError
    | RunStarted
    | IterationStarted
    | ModelChunk
    | ModelReplied
    | ToolStarted
    | PlaceholdersFilled
    | CallFromResult
    | ApprovalAsked
    | ApprovalAnswered
    | StepPaused
    | ToolFinished
    | ToolTimeline
    | FedBack
    | ToolsChosen
    | Notice
    | AnswerWithoutTools
    | GroundingChecked
    | FinalAnswer
    | LimitReached
    | ModelFailed
    | ReplyNotRead
    | RunFinished
)


def event_record(event: Event) -> dict[str, Any]:
    """An event as plain data, `kind` first: one `--json` line, or one trace record. A
    consumer's answer slot is not part of it.

    Only the events' own dataclasses are unpacked. The JSON values an event carries (a delta, a
    request body, a call's arguments) are passed on as they are, never walked: one nested
    hundreds deep broke `dataclasses.asdict`, which recurses into every list and dict. The
    writers bound the depth they write (strictjson)."""
    data = _plain(event)
    return {"kind": data.pop("kind"), **data}


def _plain(value: Any) -> Any:
    # Recursion through the events' own types only: dataclasses and the tuples that hold them.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.metadata.get("recorded", True)
        }
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value

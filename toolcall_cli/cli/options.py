"""The flags `run` and `chat` share, and the options a session is assembled from."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolcall_cli.config import (
    LIMIT_SETTINGS,
    MAX_CONTEXT_WINDOW,
    MIN_CONTEXT_WINDOW,
)
from toolcall_cli.limits import Limits

if TYPE_CHECKING:
    pass


class StrategyName(str, Enum):
    regex = "regex"
    schema = "schema"
    stream = "stream"


class SchemaMode(str, Enum):
    tools = "tools"
    json = "json"
    required = "required"


class PromptStyle(str, Enum):
    full = "full"
    compact = "compact"
    examples = "examples"


class Language(str, Enum):
    en = "en"
    zh = "zh"


class StreamMode(str, Enum):
    tags = "tags"
    native = "native"


# --- shared options ---------------------------------------------------------------------------

StrategyOpt = Annotated[
    StrategyName | None,
    typer.Option(
        "--strategy", "-s", help="How tools go on the wire: regex (default), schema, stream."
    ),
]
SchemaModeOpt = Annotated[
    SchemaMode | None,
    typer.Option(
        "--schema-mode",
        help="schema: native `tools` (default; a profile may choose another), `json` structured "
        "output, or `required` (a call is required; the answer is a final_answer tool call).",
    ),
]
PromptStyleOpt = Annotated[
    PromptStyle,
    typer.Option(
        "--prompt-style",
        help="The system prompt: full (default), compact (short, for small models) or examples "
        "(compact plus a worked example). Native modes: compact/examples add a short hint.",
    ),
]
StreamModeOpt = Annotated[
    StreamMode,
    typer.Option("--stream-mode", help="stream: tagged text, or native tool_calls deltas."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="offline (default), scripted, or a model name at --base-url."
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option("--profile", "-p", help="A named endpoint: openai, deepseek, qwen, ollama, ..."),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url", help="An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"
    ),
]
ApiKeyOpt = Annotated[
    str | None, typer.Option("--api-key", help="API key (better: the profile's key variable).")
]
ConnectTimeoutOpt = Annotated[
    float, typer.Option("--connect-timeout", min=0.1, help="Seconds to wait for a connection.")
]
ReadTimeoutOpt = Annotated[
    float, typer.Option("--read-timeout", min=0.1, help="Seconds to wait for the model to answer.")
]
ScriptOpt = Annotated[
    Path | None,
    typer.Option(
        "--script",
        help="Replies for --model scripted: a JSON list or JSONL of replies, or a trace, whose "
        "recorded replies play back as they were sent.",
    ),
]
SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed", help="Sampling seed: sent to the server as `seed`, and seeds the offline model."
    ),
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option("--temperature", help="Sampling temperature, 0..2 (default: the server's)."),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        help="The most tokens one reply may hold, sent as `max_tokens` (default: the server's).",
    ),
]
TopPOpt = Annotated[
    float | None,
    typer.Option(
        "--top-p", help="Nucleus sampling, above 0 and at most 1 (default: the server's)."
    ),
]
FaultsOpt = Annotated[
    str | None,
    typer.Option(
        "--faults", help="Make the offline model misbehave: KIND[,KIND...] (toolcall faults)."
    ),
]
FaultRateOpt = Annotated[
    float,
    typer.Option(
        "--fault-rate", min=0.0, max=1.0, help="Chance a fault fires where it can (0..1)."
    ),
]
ToolsOpt = Annotated[
    list[Path] | None, typer.Option("--tools", help="Another tools.d directory (repeatable).")
]
NoDefaultToolsOpt = Annotated[
    bool, typer.Option("--no-default-tools", help="Leave the bundled tools out.")
]
McpOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp",
        help="An MCP server to start and use the tools of: 'COMMAND ARGS' (repeatable; config: "
        "[mcp.servers.NAME]).",
    ),
]
DEFAULT_LIMITS = Limits()
"""Where the limit flags' defaults come from, so the loop's defaults are written once. The flags
themselves default to None, so that a flag not given lets the config file's [limits] speak."""


def limit_minimum(key: str) -> float:
    return LIMIT_SETTINGS[key].minimum


MaxIterOpt = Annotated[
    int | None,
    typer.Option(
        "--max-iterations",
        min=int(limit_minimum("max_iterations")),
        help=f"Stop after this many model requests (default {DEFAULT_LIMITS.max_iterations}).",
    ),
]
ToolTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--tool-timeout",
        min=limit_minimum("tool_timeout"),
        help=f"Default per-tool timeout in seconds (default {DEFAULT_LIMITS.tool_timeout:g}).",
    ),
]
RunTimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=limit_minimum("timeout"), help="Seconds for the whole run."),
]
ResultCharsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-result-chars",
        min=int(limit_minimum("max_result_chars")),
        help="Cut longer tool results before feeding back "
        f"(default {DEFAULT_LIMITS.max_result_chars:,}).",
    ),
]
FailedRoundsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-failed-rounds",
        min=int(limit_minimum("max_failed_rounds")),
        help="Rounds in a row without progress before the model must answer without tools "
        f"(default {DEFAULT_LIMITS.max_failed_rounds}).",
    ),
]
RepeatedRoundsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-repeated-rounds",
        min=int(limit_minimum("max_repeated_rounds")),
        help="Rounds in a row that only repeat earlier calls before the model must answer "
        f"without tools (default {DEFAULT_LIMITS.max_repeated_rounds}).",
    ),
]
HistoryRoundsOpt = Annotated[
    int | None,
    typer.Option(
        "--history-rounds",
        min=int(limit_minimum("history_rounds")),
        help="Tool rounds sent in full; older ones are summarised "
        f"(default {DEFAULT_LIMITS.history_rounds}).",
    ),
]
CallsPerReplyOpt = Annotated[
    int | None,
    typer.Option(
        "--max-calls-per-reply",
        min=int(limit_minimum("max_calls_per_reply")),
        help="Run at most this many calls of one reply; the rest are dropped with one note to "
        "the model, so a runaway reply cannot flood the next request "
        f"(default {DEFAULT_LIMITS.max_calls_per_reply}).",
    ),
]
ReplyCharsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-reply-chars",
        min=int(limit_minimum("max_reply_chars")),
        help="Stop a reply (text, reasoning and call arguments) longer than this "
        f"(default {DEFAULT_LIMITS.max_reply_chars:,}).",
    ),
]
ResponseBytesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-response-bytes",
        min=int(limit_minimum("max_response_bytes")),
        help="Stop an HTTP answer larger than this after decompression "
        f"(default {DEFAULT_LIMITS.max_response_bytes:,}).",
    ),
]
LineBytesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-line-bytes",
        min=int(limit_minimum("max_line_bytes")),
        help=f"Stop a streamed line longer than this (default {DEFAULT_LIMITS.max_line_bytes:,}).",
    ),
]
RequestTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        min=limit_minimum("request_timeout"),
        help="Seconds one model request may take in all, however the server trickles "
        f"(default {DEFAULT_LIMITS.request_timeout:g}).",
    ),
]

ContextWindowOpt = Annotated[
    int | None,
    typer.Option(
        "--context-window",
        min=MIN_CONTEXT_WINDOW,
        max=MAX_CONTEXT_WINDOW,
        help="The model's context window in tokens; each request is fitted into it "
        "(default: the profile's context_window, else asked of the server).",
    ),
]


class Allow(str, Enum):
    read = "read"
    write = "write"
    admin = "admin"


AllowOpt = Annotated[
    Allow,
    typer.Option(
        "--allow", help="The most a tool may do: read, write (default) or admin (its @tool says)."
    ),
]
MaxParallelOpt = Annotated[
    int, typer.Option("--max-parallel", min=1, max=64, help="Tool calls run at once (default 4).")
]
IsolateOpt = Annotated[
    bool,
    typer.Option(
        "--isolate-tools", help="Run every plugin tool in a worker process, killed at its timeout."
    ),
]
NoFinalAnswerOpt = Annotated[
    bool,
    typer.Option(
        "--no-final-answer",
        help="At the iteration limit, stop without one last request for an answer.",
    ),
]
DagOpt = Annotated[
    bool,
    typer.Option(
        "--dag",
        help="Let one call of a reply wait for another and use its result ({{id.field}}).",
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the final answer.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON event per line.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Run dangerous tools without asking.")]
UnaskedYesOpt = Annotated[
    bool,
    typer.Option(
        "--yes", "-y", help="Run dangerous tools (without it they are declined: nobody asked)."
    ),
]
"""--yes where nobody is asked (compare, replay): without it dangerous tools are declined."""
PaceOpt = Annotated[
    float | None,
    typer.Option(
        "--pace",
        min=0.0,
        help="Seconds between streamed chunks of the offline/scripted model "
        "(default: 0.02 in the live view, else 0).",
    ),
]
StepOpt = Annotated[
    bool,
    typer.Option(
        "--step",
        help="Pause before each model request and each tool execution: Enter goes on, e edits "
        "the call's arguments, s skips the call, q stops the run (needs a terminal).",
    ),
]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="A short note at each step: which layer acted (protocol, execution, loop) and why.",
    ),
]
LangOpt = Annotated[
    Language | None,
    typer.Option(
        "--lang", help="The language of --explain's notes (default: the question's, zh or en)."
    ),
]
ShowRequestOpt = Annotated[
    bool, typer.Option("--show-request", help="Show each request body as sent (live view).")
]
TraceOpt = Annotated[
    Path | None,
    typer.Option(
        "--trace",
        help="Write the trace (every event as JSON lines) to this file instead of the trace "
        "directory (`toolcall trace list`).",
    ),
]
NoTraceOpt = Annotated[
    bool, typer.Option("--no-trace", help="Write no trace (config: trace = false in [defaults]).")
]
SystemPromptOpt = Annotated[
    Path | None,
    typer.Option(
        "--system-prompt",
        help="Send this file's text as the system prompt instead of the strategy's (requests "
        "that offer tools).",
    ),
]


class Retriever(str, Enum):
    lexical = "lexical"
    embed = "embed"


RetrieveOpt = Annotated[
    int | None,
    typer.Option(
        "--retrieve",
        min=0,
        help="Send each request at most K tools: the best ranked for the question, plus a "
        "search_tools tool for the rest (default: 6 past --retrieve-over tools; 0: off).",
    ),
]
RetrieveOverOpt = Annotated[
    int | None,
    typer.Option(
        "--retrieve-over",
        min=0,
        help="Past this many tools, retrieval comes on by itself (default 20).",
    ),
]
RetrieverOpt = Annotated[
    Retriever | None,
    typer.Option(
        "--retriever",
        help="How tools are ranked: lexical (BM25, default) or embed (an /embeddings endpoint).",
    ),
]
EmbedUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--embed-url", help="The OpenAI-compatible API root for embeddings (default: --base-url)."
    ),
]
EmbedModelOpt = Annotated[
    str | None,
    typer.Option("--embed-model", help="The embedding model's name (--retriever embed)."),
]


LIMIT_FIELDS = {key: "run_timeout" if key == "timeout" else key for key in LIMIT_SETTINGS}
"""Each `[limits]` key's field in Limits and SessionOptions (`--timeout` is run_timeout)."""


@dataclass(frozen=True)
class SessionOptions:
    strategy: StrategyName | None = None
    schema_mode: SchemaMode | None = None
    """None: the profile's, else `tools`."""
    stream_mode: StreamMode = StreamMode.tags
    model: str | None = None
    profile: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    script: Path | None = None
    seed: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    prompt_style: PromptStyle = PromptStyle.full
    tools: tuple[Path, ...] = ()
    no_default_tools: bool = False
    mcp: tuple[str, ...] = ()
    """--mcp: MCP server command lines, as given."""
    yes: bool = False
    # Limits: None means the flag was not given (the config file or Limits decides).
    max_iterations: int | None = None
    tool_timeout: float | None = None
    run_timeout: float | None = None
    max_result_chars: int | None = None
    history_rounds: int | None = None
    max_failed_rounds: int | None = None
    max_repeated_rounds: int | None = None
    max_calls_per_reply: int | None = None
    max_reply_chars: int | None = None
    max_response_bytes: int | None = None
    max_line_bytes: int | None = None
    request_timeout: float | None = None
    pace: float = 0.0
    faults: tuple[str, ...] = ()
    fault_rate: float = 1.0
    dag: bool = False
    allow: Allow = Allow.write
    max_parallel: int = 4
    isolate_tools: bool = False
    no_final_answer: bool = False
    context_window: int | None = None
    system_prompt: Path | None = None
    """--system-prompt: the file whose text replaces the strategy's system prompt."""
    # Retrieval: None means the flag was not given (environment, [retrieval] or defaults decide).
    retrieve: int | None = None
    retrieve_over: int | None = None
    retriever: Retriever | None = None
    embed_url: str | None = None
    embed_model: str | None = None

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], *, mode: str) -> SessionOptions:
        """The session options among a command's flags (its `locals()`), normalised.

        Every option must be among the flags: a flag renamed in a command's signature would
        otherwise be dropped without a word, and its default used instead."""
        names = {f.name for f in dataclasses.fields(cls)}
        missing = sorted(names - set(flags))
        if missing:
            raise TypeError(f"the command has no flag for session option(s) {', '.join(missing)}")
        chosen = {key: value for key, value in flags.items() if key in names}
        chosen["tools"] = tuple(flags.get("tools") or ())
        chosen["mcp"] = tuple(flags.get("mcp") or ())
        chosen["faults"] = fault_names(flags.get("faults"))
        chosen["pace"] = pace_for(flags.get("pace"), mode)
        return cls(**chosen)

    def retrieval_flags(self) -> dict[str, Any]:
        """The retrieval flags by `[retrieval]` key; None where not given."""
        return {
            "retrieve": self.retrieve,
            "retrieve_over": self.retrieve_over,
            "retriever": self.retriever.value if self.retriever else None,
            "embed_url": self.embed_url,
            "embed_model": self.embed_model,
        }

    def limit_flags(self) -> dict[str, Any]:
        """The limit flags by `[limits]` key; None where not given."""
        return {key: getattr(self, name) for key, name in LIMIT_FIELDS.items()}


def pace_for(pace: float | None, mode: str) -> float:
    """Streamed replies of the local models are spaced out only where someone is watching
    (the pause applies to streaming requests only)."""
    if pace is not None:
        return pace
    return 0.02 if mode == "live" else 0.0


def fault_names(faults: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (faults or "").split(",") if name.strip())

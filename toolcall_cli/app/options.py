"""What a session can be asked for, in groups: each option declared once, with the flag that
sets it on the command line and what it means. The command line reads these declarations and
makes its flags from them; the rest of the program reads the values."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, ClassVar

from toolcall_cli.config import LIMIT_SETTINGS, MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW
from toolcall_cli.limits import Limits


class StrategyName(str, Enum):
    regex = "regex"
    schema = "schema"
    stream = "stream"


class SchemaMode(str, Enum):
    tools = "tools"
    json = "json"
    required = "required"


class StreamMode(str, Enum):
    tags = "tags"
    native = "native"


class PromptStyle(str, Enum):
    full = "full"
    compact = "compact"
    examples = "examples"


class Allow(str, Enum):
    read = "read"
    write = "write"
    admin = "admin"


class Retriever(str, Enum):
    lexical = "lexical"
    embed = "embed"


class Flag:
    """How an option is given on the command line: its names (the long one first), what it
    means, and the bounds of a number. It sits in the option's annotation, where the command
    line reads it (`Annotated[int, Flag("--max-parallel", help=...)]`)."""

    __slots__ = ("help", "max", "min", "names")

    def __init__(
        self, *names: str, help: str, min: float | None = None, max: float | None = None
    ) -> None:
        self.names = names
        self.help = help
        self.min = min
        self.max = max


DEFAULT_LIMITS = Limits()
"""Where the limit flags' defaults come from, so the loop's defaults are written once. The flags
themselves default to None, so that a flag not given lets the config file's [limits] speak."""


def limit_minimum(key: str) -> float:
    return LIMIT_SETTINGS[key].minimum


# --- the groups -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StrategyChoice:
    """Which strategy; compare, which runs every one, has no use for it."""

    PANEL: ClassVar[str] = "Strategy"
    strategy: Annotated[
        StrategyName | None,
        Flag("--strategy", "-s", help="How tools go on the wire: regex (default), schema, stream."),
    ] = None
    schema_mode: Annotated[
        SchemaMode | None,
        Flag(
            "--schema-mode",
            help="schema: native `tools` (default; a profile may choose another), `json` "
            "structured output, or `required` (a call is required; the answer is a final_answer "
            "tool call).",
        ),
    ] = None
    """None: the profile's, else `tools`."""


@dataclass(frozen=True)
class Prompting:
    """How a strategy writes its requests."""

    PANEL: ClassVar[str] = "Strategy"
    stream_mode: Annotated[
        StreamMode,
        Flag("--stream-mode", help="stream: tagged text, or native tool_calls deltas."),
    ] = StreamMode.tags
    prompt_style: Annotated[
        PromptStyle,
        Flag(
            "--prompt-style",
            help="The system prompt: full (default), compact (short, for small models) or examples "
            "(compact plus a worked example). Native modes: compact/examples add a short hint.",
        ),
    ] = PromptStyle.full
    system_prompt: Annotated[
        Path | None,
        Flag(
            "--system-prompt",
            help="Send this file's text as the system prompt instead of the strategy's (requests "
            "that offer tools).",
        ),
    ] = None
    dag: Annotated[
        bool,
        Flag(
            "--dag",
            help="Let one call of a reply wait for another and use its result ({{id.field}}).",
        ),
    ] = False


@dataclass(frozen=True)
class Endpoint:
    """Which model, and where it answers."""

    PANEL: ClassVar[str] = "Model and endpoint"
    model: Annotated[
        str | None,
        Flag(
            "--model",
            "-m",
            help="offline (default), scripted, or a model name at --base-url.",
        ),
    ] = None
    profile: Annotated[
        str | None,
        Flag("--profile", "-p", help="A named endpoint: openai, deepseek, qwen, ollama, ..."),
    ] = None
    base_url: Annotated[
        str | None,
        Flag("--base-url", help="An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"),
    ] = None
    api_key: Annotated[
        str | None,
        Flag("--api-key", help="API key (better: the profile's key variable)."),
    ] = None
    connect_timeout: Annotated[
        float,
        Flag("--connect-timeout", min=0.1, help="Seconds to wait for a connection."),
    ] = 10.0
    read_timeout: Annotated[
        float,
        Flag("--read-timeout", min=0.1, help="Seconds to wait for the model to answer."),
    ] = 120.0
    context_window: Annotated[
        int | None,
        Flag(
            "--context-window",
            min=MIN_CONTEXT_WINDOW,
            max=MAX_CONTEXT_WINDOW,
            help="The model's context window in tokens; each request is fitted into it "
            "(default: the profile's context_window, else asked of the server).",
        ),
    ] = None


@dataclass(frozen=True)
class LocalModel:
    """The models that run in this process: the offline model's faults, a script, the pace."""

    PANEL: ClassVar[str] = "Offline and scripted models"
    script: Annotated[
        Path | None,
        Flag(
            "--script",
            help="Replies for --model scripted: a JSON list or JSONL of replies, or a trace, whose "
            "recorded replies play back as they were sent.",
        ),
    ] = None
    faults: Annotated[
        str | None,
        Flag(
            "--faults",
            help="Make the offline model misbehave: KIND[,KIND...] (toolcall faults).",
        ),
    ] = None
    fault_rate: Annotated[
        float,
        Flag(
            "--fault-rate",
            min=0.0,
            max=1.0,
            help="Chance a fault fires where it can (0..1).",
        ),
    ] = 1.0
    pace: Annotated[
        float | None,
        Flag(
            "--pace",
            min=0.0,
            help="Seconds between streamed chunks of the offline/scripted model "
            "(default: 0.02 in the live view, else 0).",
        ),
    ] = None

    @property
    def fault_names(self) -> tuple[str, ...]:
        return fault_names(self.faults)


def fault_names(faults: str | None) -> tuple[str, ...]:
    """`--faults a, b` as the names it lists."""
    return tuple(name.strip() for name in (faults or "").split(",") if name.strip())


@dataclass(frozen=True)
class SamplingOptions:
    PANEL: ClassVar[str] = "Sampling"
    seed: Annotated[
        int | None,
        Flag(
            "--seed",
            help="Sampling seed: sent to the server as `seed`, and seeds the offline model "
            "(default: the configured seed, else 0; compare --repeat: run k gets seed+k).",
        ),
    ] = None
    temperature: Annotated[
        float | None,
        Flag("--temperature", help="Sampling temperature, 0..2 (default: the server's)."),
    ] = None
    top_p: Annotated[
        float | None,
        Flag("--top-p", help="Nucleus sampling, above 0 and at most 1 (default: the server's)."),
    ] = None
    max_tokens: Annotated[
        int | None,
        Flag(
            "--max-tokens",
            help="The most tokens one reply may hold, sent as `max_tokens` (default: the "
            "server's).",
        ),
    ] = None


@dataclass(frozen=True)
class ToolSources:
    """Where the tools come from."""

    PANEL: ClassVar[str] = "Tools"
    tools: Annotated[
        tuple[Path, ...],
        Flag("--tools", help="Another tools.d directory (repeatable)."),
    ] = ()
    no_default_tools: Annotated[
        bool,
        Flag("--no-default-tools", help="Leave the bundled tools out."),
    ] = False
    mcp: Annotated[
        tuple[str, ...],
        Flag(
            "--mcp",
            help="An MCP server to start and use the tools of: 'COMMAND ARGS' (repeatable; config: "
            "[mcp.servers.NAME]).",
        ),
    ] = ()
    """MCP server command lines, as given."""


@dataclass(frozen=True)
class ToolRunning:
    """How tools run, and which may."""

    PANEL: ClassVar[str] = "Tools"
    allow: Annotated[
        Allow,
        Flag(
            "--allow",
            help="The most a tool may do: read, write (default) or admin (its @tool says).",
        ),
    ] = Allow.write
    max_parallel: Annotated[
        int,
        Flag("--max-parallel", min=1, max=64, help="Tool calls run at once (default 4)."),
    ] = 4
    isolate_tools: Annotated[
        bool,
        Flag(
            "--isolate-tools",
            help="Run every plugin tool in a worker process, killed at its timeout.",
        ),
    ] = False
    yes: Annotated[
        bool,
        Flag(
            "--yes",
            "-y",
            help="Run dangerous tools without asking (compare and replay ask nobody: without it "
            "they are declined).",
        ),
    ] = False


@dataclass(frozen=True)
class RetrievalOptions:
    """Which tools each request carries when there are many."""

    PANEL: ClassVar[str] = "Retrieval"
    retrieve: Annotated[
        int | None,
        Flag(
            "--retrieve",
            min=0,
            help="Send each request at most K tools: the best ranked for the question, plus a "
            "search_tools tool for the rest (default: 6 past --retrieve-over tools; 0: off).",
        ),
    ] = None
    retrieve_over: Annotated[
        int | None,
        Flag(
            "--retrieve-over",
            min=0,
            help="Past this many tools, retrieval comes on by itself (default 20).",
        ),
    ] = None
    retriever: Annotated[
        Retriever | None,
        Flag(
            "--retriever",
            help="How tools are ranked: lexical (BM25, default) or embed (an /embeddings "
            "endpoint).",
        ),
    ] = None
    embed_url: Annotated[
        str | None,
        Flag(
            "--embed-url",
            help="The OpenAI-compatible API root for embeddings (default: --base-url).",
        ),
    ] = None
    embed_model: Annotated[
        str | None,
        Flag("--embed-model", help="The embedding model's name (--retriever embed)."),
    ] = None

    def by_key(self) -> dict[str, Any]:
        """The flags by `[retrieval]` key; None where not given."""
        chosen = values_of(self)
        chosen["retriever"] = self.retriever.value if self.retriever else None
        return chosen


def limit(key: str, help: str) -> Flag:
    """A limit's flag, bounded below as the config file's [limits] are."""
    kind = LIMIT_SETTINGS[key].kind
    return Flag("--" + key.replace("_", "-"), min=kind(limit_minimum(key)), help=help)


@dataclass(frozen=True)
class LimitOptions:
    """The run's limits: None where not given (the config file or Limits decides)."""

    PANEL: ClassVar[str] = "Limits"
    max_iterations: Annotated[
        int | None,
        limit(
            "max_iterations",
            f"Stop after this many model requests (default {DEFAULT_LIMITS.max_iterations}).",
        ),
    ] = None
    tool_timeout: Annotated[
        float | None,
        limit(
            "tool_timeout",
            f"Default per-tool timeout in seconds (default {DEFAULT_LIMITS.tool_timeout:g}).",
        ),
    ] = None
    run_timeout: Annotated[float | None, limit("timeout", "Seconds for the whole run.")] = None
    max_result_chars: Annotated[
        int | None,
        limit(
            "max_result_chars",
            "Cut longer tool results before feeding back "
            f"(default {DEFAULT_LIMITS.max_result_chars:,}).",
        ),
    ] = None
    history_rounds: Annotated[
        int | None,
        limit(
            "history_rounds",
            "Tool rounds sent in full; older ones are summarised "
            f"(default {DEFAULT_LIMITS.history_rounds}).",
        ),
    ] = None
    max_failed_rounds: Annotated[
        int | None,
        limit(
            "max_failed_rounds",
            "Rounds in a row without progress before the model must answer without tools "
            f"(default {DEFAULT_LIMITS.max_failed_rounds}).",
        ),
    ] = None
    max_repeated_rounds: Annotated[
        int | None,
        limit(
            "max_repeated_rounds",
            "Rounds in a row that only repeat earlier calls before the model must answer "
            f"without tools (default {DEFAULT_LIMITS.max_repeated_rounds}).",
        ),
    ] = None
    max_calls_per_reply: Annotated[
        int | None,
        limit(
            "max_calls_per_reply",
            "Run at most this many calls of one reply; the rest are dropped with one note to "
            "the model, so a runaway reply cannot flood the next request "
            f"(default {DEFAULT_LIMITS.max_calls_per_reply}).",
        ),
    ] = None
    max_reply_chars: Annotated[
        int | None,
        limit(
            "max_reply_chars",
            "Stop a reply (text, reasoning and call arguments) longer than this "
            f"(default {DEFAULT_LIMITS.max_reply_chars:,}).",
        ),
    ] = None
    max_response_bytes: Annotated[
        int | None,
        limit(
            "max_response_bytes",
            "Stop an HTTP answer larger than this after decompression "
            f"(default {DEFAULT_LIMITS.max_response_bytes:,}).",
        ),
    ] = None
    max_line_bytes: Annotated[
        int | None,
        limit(
            "max_line_bytes",
            f"Stop a streamed line longer than this (default {DEFAULT_LIMITS.max_line_bytes:,}).",
        ),
    ] = None
    request_timeout: Annotated[
        float | None,
        limit(
            "request_timeout",
            "Seconds one model request may take in all, however the server trickles "
            f"(default {DEFAULT_LIMITS.request_timeout:g}).",
        ),
    ] = None
    no_final_answer: Annotated[
        bool,
        Flag(
            "--no-final-answer",
            help="At the iteration limit, stop without one last request for an answer.",
        ),
    ] = False

    def by_key(self) -> dict[str, Any]:
        """The limit flags by `[limits]` key; None where not given."""
        return {key: getattr(self, name) for key, name in LIMIT_FIELDS.items()}


LIMIT_FIELDS = {key: "run_timeout" if key == "timeout" else key for key in LIMIT_SETTINGS}
"""Each `[limits]` key's field in Limits and LimitOptions (`--timeout` is run_timeout)."""


@dataclass(frozen=True)
class SessionOptions:
    """Everything a session can be asked for, by group. Each group's fields are its flags."""

    choice: StrategyChoice = field(default_factory=StrategyChoice)
    prompting: Prompting = field(default_factory=Prompting)
    endpoint: Endpoint = field(default_factory=Endpoint)
    local: LocalModel = field(default_factory=LocalModel)
    sampling: SamplingOptions = field(default_factory=SamplingOptions)
    sources: ToolSources = field(default_factory=ToolSources)
    running: ToolRunning = field(default_factory=ToolRunning)
    retrieval: RetrievalOptions = field(default_factory=RetrievalOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)

    def groups(self) -> Iterator[Any]:
        for group in dataclasses.fields(self):
            yield getattr(self, group.name)

    def flat(self) -> dict[str, Any]:
        """Every option by its field name (each name is one flag's, whatever its group)."""
        return {name: value for group in self.groups() for name, value in values_of(group).items()}

    def replace(self, **values: Any) -> SessionOptions:
        """These options with the named ones changed, whatever group each is in."""
        unknown = set(values) - set(self.flat())
        if unknown:
            raise TypeError(f"no session option named {', '.join(sorted(unknown))}")
        changed = {}
        for group_field in dataclasses.fields(self):
            group = getattr(self, group_field.name)
            own = {k: v for k, v in values.items() if k in values_of(group)}
            if own:
                changed[group_field.name] = dataclasses.replace(group, **own)
        return dataclasses.replace(self, **changed)

    @classmethod
    def of(cls, **values: Any) -> SessionOptions:
        """Options with the named ones set and the rest at their defaults."""
        return cls().replace(**values)

    def paced(self, seconds: float) -> SessionOptions:
        """With `seconds` between streamed chunks of the local models where no --pace chose."""
        return self if self.local.pace is not None else self.replace(pace=seconds)


def values_of(group: Any) -> dict[str, Any]:
    """An option group's values by field name (not deep-copied, unlike asdict)."""
    return {f.name: getattr(group, f.name) for f in dataclasses.fields(group)}


def flags_of(group: type[Any]) -> dict[str, tuple[Any, Flag]]:
    """An option group's fields by name: each one's type and its flag."""
    hints = typing.get_type_hints(group, include_extras=True)
    found = {}
    for field_ in dataclasses.fields(group):
        kind, *extras = typing.get_args(hints[field_.name])
        found[field_.name] = (kind, next(e for e in extras if isinstance(e, Flag)))
    return found

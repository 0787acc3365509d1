"""What a session can be asked for, in groups: each option declared once, with the flag that
sets it on the command line and what it means. The command line reads these declarations and
makes its flags from them; the rest of the program reads the values.

No `from __future__ import annotations` here: the command line reads each field's type, and
an annotation that is already a type costs nothing to read at start-up.
"""

import dataclasses
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from toolcall_cli.config import LIMIT_SETTINGS, MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW
from toolcall_cli.limits import Limits

StrategyName = Literal["regex", "schema", "stream"]
SchemaMode = Literal["tools", "json", "required"]
StreamMode = Literal["tags", "native"]
PromptStyle = Literal["full", "compact", "examples"]
Allow = Literal["read", "write", "admin"]
Grounding = Literal["off", "warn", "check"]
Retriever = Literal["lexical", "embed"]


def one_of(kind: Any, value: Any) -> bool:
    """Whether `value` is one of the choices of a Literal, such as SchemaMode."""
    return value in typing.get_args(kind)


@dataclass(frozen=True, slots=True)
class Flag:
    """How an option is given on the command line: its names (the long one first), what it
    means, the bounds of a number, and the placeholder `--help` shows for its value: a word
    in capitals that names the thing (SECONDS, DIR, URL). A flag of choices, or one that takes
    no value, needs none: its choices are listed, or it has no value to name."""

    names: tuple[str, ...]
    help: str
    min: float | None
    max: float | None
    metavar: str | None = None


def option(
    default: Any,
    *names: str,
    help: str,
    min: float | None = None,
    max: float | None = None,
    metavar: str | None = None,
) -> Any:
    """A field of an option group: its default, and the flag that sets it (which the command
    line reads from the field's metadata)."""
    return field(default=default, metadata={"flag": Flag(names, help, min, max, metavar)})


DEFAULT_LIMITS = Limits()
"""Where the limit flags' defaults come from, so the loop's defaults are written once. The flags
themselves default to None, so that a flag not given lets the config file's [limits] speak."""


# --- the groups -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StrategyOptions:
    """Which strategy, and how it writes its requests."""

    PANEL: ClassVar[str] = "Strategy"
    strategy: StrategyName | None = option(
        None, "--strategy", "-s", help="How tools go on the wire: regex (default), schema, stream."
    )
    schema_mode: SchemaMode | None = option(
        None,
        "--schema-mode",
        help="schema: native `tools` (default; a profile may choose another), `json` "
        "structured output, or `required` (a call is required; the answer is a final_answer "
        "tool call).",
    )
    """None: the profile's, else `tools`."""
    stream_mode: StreamMode = option(
        "tags", "--stream-mode", help="stream: tagged text, or native tool_calls deltas."
    )
    prompt_style: PromptStyle = option(
        "full",
        "--prompt-style",
        help="The system prompt: full (default), compact (short, for small models) or examples "
        "(compact plus a worked example). Native modes: compact/examples add a short hint.",
    )
    system_prompt: Path | None = option(
        None,
        "--system-prompt",
        metavar="FILE",
        help="Send this file's text as the system prompt instead of the strategy's (requests "
        "that offer tools).",
    )
    dag: bool = option(
        False,
        "--dag",
        help="Let one call of a reply wait for another and use its result ({{id.field}}).",
    )


@dataclass(frozen=True)
class Endpoint:
    """Which model, and where it answers."""

    PANEL: ClassVar[str] = "Model and endpoint"
    model: str | None = option(
        None,
        "--model",
        "-m",
        metavar="NAME",
        help="offline (default), scripted, or a model name at --base-url.",
    )
    profile: str | None = option(
        None,
        "--profile",
        "-p",
        metavar="NAME",
        help="A named endpoint: openai, deepseek, qwen, ollama, ...",
    )
    base_url: str | None = option(
        None,
        "--base-url",
        metavar="URL",
        help="An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1",
    )
    api_key: str | None = option(
        None, "--api-key", metavar="KEY", help="API key (better: the profile's key variable)."
    )
    connect_timeout: float = option(
        10.0,
        "--connect-timeout",
        min=0.1,
        metavar="SECONDS",
        help="Seconds to wait for a connection.",
    )
    read_timeout: float = option(
        120.0,
        "--read-timeout",
        min=0.1,
        metavar="SECONDS",
        help="Seconds to wait for the model to answer.",
    )
    context_window: int | None = option(
        None,
        "--context-window",
        min=MIN_CONTEXT_WINDOW,
        max=MAX_CONTEXT_WINDOW,
        metavar="TOKENS",
        help="The model's context window in tokens; each request is fitted into it "
        "(default: the profile's context_window, else asked of the server).",
    )


@dataclass(frozen=True)
class LocalModel:
    """The models that run in this process: the offline model's faults, a script, the pace."""

    PANEL: ClassVar[str] = "Offline and scripted models"
    script: Path | None = option(
        None,
        "--script",
        metavar="FILE",
        help="Replies for --model scripted: a JSON list or JSONL of replies, or a trace, whose "
        "recorded replies play back as they were sent.",
    )
    faults: str | None = option(
        None,
        "--faults",
        metavar="KIND[,KIND...]",
        help="Make the offline model misbehave in these ways (`toolcall faults` lists them).",
    )
    fault_rate: float = option(
        1.0,
        "--fault-rate",
        min=0.0,
        max=1.0,
        metavar="CHANCE",
        help="Chance a fault fires where it can (0..1).",
    )
    pace: float | None = option(
        None,
        "--pace",
        min=0.0,
        metavar="SECONDS",
        help="Seconds between streamed chunks of the offline/scripted model "
        "(default: 0.02 in the live view, else 0).",
    )

    @property
    def fault_names(self) -> tuple[str, ...]:
        """`--faults a, b` as the names it lists."""
        return tuple(name.strip() for name in (self.faults or "").split(",") if name.strip())


@dataclass(frozen=True)
class SamplingOptions:
    PANEL: ClassVar[str] = "Sampling"
    seed: int | None = option(
        None,
        "--seed",
        metavar="N",
        help="Sampling seed: sent to the server as `seed`, and seeds the offline model "
        "(default: the configured seed, else 0; compare --repeat: run k gets seed+k).",
    )
    temperature: float | None = option(
        None,
        "--temperature",
        metavar="T",
        help="Sampling temperature, 0..2 (default: 0 on a llama.cpp or Ollama server, else the "
        "server's).",
    )
    top_p: float | None = option(
        None,
        "--top-p",
        metavar="P",
        help="Nucleus sampling, above 0 and at most 1 (default: the server's).",
    )
    max_tokens: int | None = option(
        None,
        "--max-tokens",
        metavar="TOKENS",
        help="The most tokens one reply may hold, sent as `max_tokens` (default: on a llama.cpp "
        "or Ollama server a quarter of the context window, at most 2048; else the server's).",
    )


@dataclass(frozen=True)
class ToolOptions:
    """Where the tools come from, how they run, and which may."""

    PANEL: ClassVar[str] = "Tools"
    tools: tuple[Path, ...] = option(
        (), "--tools", metavar="DIR", help="Another tools.d directory (repeatable)."
    )
    no_default_tools: bool = option(
        False, "--no-default-tools", help="Leave the bundled tools out."
    )
    mcp: tuple[str, ...] = option(
        (),
        "--mcp",
        metavar="'COMMAND ARGS'",
        help="An MCP server to start and use the tools of, as one command line (repeatable; "
        "config: [mcp.servers.NAME]).",
    )
    """MCP server command lines, as given."""
    allow: Allow = option(
        "write",
        "--allow",
        help="The most a tool may do: read, write (default) or admin (its @tool says).",
    )
    max_parallel: int = option(
        4, "--max-parallel", min=1, max=64, metavar="N", help="Tool calls run at once (default 4)."
    )
    isolate_tools: bool = option(
        False,
        "--isolate-tools",
        help="Run every plugin tool in a worker process, killed at its timeout.",
    )
    yes: bool = option(
        False,
        "--yes",
        "-y",
        help="Run dangerous tools without asking (compare and replay ask nobody: without it "
        "they are declined).",
    )


@dataclass(frozen=True)
class RetrievalOptions:
    """Which tools each request carries when there are many."""

    PANEL: ClassVar[str] = "Retrieval"
    retrieve: int | None = option(
        None,
        "--retrieve",
        min=0,
        metavar="K",
        help="Send each request at most K tools: the best ranked for the question, plus a "
        "search_tools tool for the rest (default: 6 past --retrieve-over tools; on a llama.cpp "
        "or Ollama server 3, from 10 tools; 0: off).",
    )
    retrieve_over: int | None = option(
        None,
        "--retrieve-over",
        min=0,
        metavar="N",
        help="Past this many tools, retrieval comes on by itself (default 20).",
    )
    retriever: Retriever | None = option(
        None,
        "--retriever",
        help="How tools are ranked: lexical (BM25, default) or embed (an /embeddings endpoint).",
    )
    embed_url: str | None = option(
        None,
        "--embed-url",
        metavar="URL",
        help="The OpenAI-compatible API root for embeddings (default: --base-url).",
    )
    embed_model: str | None = option(
        None,
        "--embed-model",
        metavar="NAME",
        help="The embedding model's name (--retriever embed).",
    )

    def by_key(self) -> dict[str, Any]:
        """The flags by `[retrieval]` key; None where not given."""
        return values_of(self)


def limit(key: str, help: str, metavar: str) -> Any:
    """A limit's option: not given (None) by default, bounded below as the config file's
    [limits] are."""
    setting = LIMIT_SETTINGS[key]
    return option(
        None,
        "--" + key.replace("_", "-"),
        min=setting.kind(setting.minimum),
        metavar=metavar,
        help=help,
    )


@dataclass(frozen=True)
class LimitOptions:
    """The run's limits: None where not given (the config file or Limits decides)."""

    PANEL: ClassVar[str] = "Limits"
    max_iterations: int | None = limit(
        "max_iterations",
        f"Stop after this many model requests (default {DEFAULT_LIMITS.max_iterations}).",
        "N",
    )
    tool_timeout: float | None = limit(
        "tool_timeout",
        f"Default per-tool timeout in seconds (default {DEFAULT_LIMITS.tool_timeout:g}).",
        "SECONDS",
    )
    run_timeout: float | None = limit("timeout", "Seconds for the whole run.", "SECONDS")
    max_result_chars: int | None = limit(
        "max_result_chars",
        "Cut longer tool results before feeding back "
        f"(default {DEFAULT_LIMITS.max_result_chars:,}).",
        "CHARS",
    )
    history_rounds: int | None = limit(
        "history_rounds",
        "Tool rounds sent in full; older ones are summarised "
        f"(default {DEFAULT_LIMITS.history_rounds}).",
        "N",
    )
    max_failed_rounds: int | None = limit(
        "max_failed_rounds",
        "Rounds in a row without progress before the model must answer without tools "
        f"(default {DEFAULT_LIMITS.max_failed_rounds}).",
        "N",
    )
    max_repeated_rounds: int | None = limit(
        "max_repeated_rounds",
        "Rounds in a row that only repeat earlier calls before the model must answer "
        f"without tools (default {DEFAULT_LIMITS.max_repeated_rounds}).",
        "N",
    )
    max_calls_per_reply: int | None = limit(
        "max_calls_per_reply",
        "Run at most this many calls of one reply; the rest are dropped with one note to "
        "the model, so a runaway reply cannot flood the next request "
        f"(default {DEFAULT_LIMITS.max_calls_per_reply}).",
        "N",
    )
    max_reply_chars: int | None = limit(
        "max_reply_chars",
        "Stop a reply (text, reasoning and call arguments) longer than this "
        f"(default {DEFAULT_LIMITS.max_reply_chars:,}).",
        "CHARS",
    )
    max_response_bytes: int | None = limit(
        "max_response_bytes",
        "Stop an HTTP answer larger than this after decompression "
        f"(default {DEFAULT_LIMITS.max_response_bytes:,}).",
        "BYTES",
    )
    max_line_bytes: int | None = limit(
        "max_line_bytes",
        f"Stop a streamed line longer than this (default {DEFAULT_LIMITS.max_line_bytes:,}).",
        "BYTES",
    )
    request_timeout: float | None = limit(
        "request_timeout",
        "Seconds one model request may take in all, however the server trickles "
        f"(default {DEFAULT_LIMITS.request_timeout:g}).",
        "SECONDS",
    )
    no_final_answer: bool = option(
        False,
        "--no-final-answer",
        help="At the iteration limit, stop without one last request for an answer.",
    )
    grounding: Grounding | None = option(
        None,
        "--grounding",
        help="Figures in a call's arguments or in the answer that are in neither the question "
        "nor any result: warn shows them (default; the config file's `grounding` may choose); "
        "check also refuses such a call once (sent again, it runs) and asks once for an "
        "answer from the results; off.",
    )

    def by_key(self) -> dict[str, Any]:
        """The limit flags by `[limits]` key; None where not given."""
        return {key: getattr(self, name) for key, name in LIMIT_FIELDS.items()}


LIMIT_FIELDS = {key: "run_timeout" if key == "timeout" else key for key in LIMIT_SETTINGS}
"""Each `[limits]` key's field in Limits and LimitOptions (`--timeout` is run_timeout)."""


@dataclass(frozen=True)
class SessionOptions:
    """Everything a session can be asked for, by group. Each group's fields are its flags."""

    strategy: StrategyOptions = field(default_factory=StrategyOptions)
    endpoint: Endpoint = field(default_factory=Endpoint)
    local: LocalModel = field(default_factory=LocalModel)
    sampling: SamplingOptions = field(default_factory=SamplingOptions)
    tools: ToolOptions = field(default_factory=ToolOptions)
    retrieval: RetrievalOptions = field(default_factory=RetrievalOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)

    def flat(self) -> dict[str, Any]:
        """Every option by its field name (each name is one flag's, whatever its group)."""
        groups = values_of(self).values()
        return {name: value for group in groups for name, value in values_of(group).items()}

    def replace(self, **values: Any) -> "SessionOptions":
        """These options with the named ones changed, whatever group each is in."""
        unknown = set(values) - set(self.flat())
        if unknown:
            raise TypeError(f"no session option named {', '.join(sorted(unknown))}")
        changed = {}
        for name, group in values_of(self).items():
            own = {k: v for k, v in values.items() if k in values_of(group)}
            if own:
                changed[name] = dataclasses.replace(group, **own)
        return dataclasses.replace(self, **changed)

    @classmethod
    def of(cls, **values: Any) -> "SessionOptions":
        """Options with the named ones set and the rest at their defaults."""
        return cls().replace(**values)

    def paced(self, seconds: float) -> "SessionOptions":
        """With `seconds` between streamed chunks of the local models where no --pace chose."""
        return self if self.local.pace is not None else self.replace(pace=seconds)


def values_of(group: Any) -> dict[str, Any]:
    """An option group's values by field name (not deep-copied, unlike asdict)."""
    return {f.name: getattr(group, f.name) for f in dataclasses.fields(group)}


def flags_of(group: type) -> Iterator[tuple[str, Any, Flag, Any]]:
    """An option group's fields: each one's name, type, flag and default."""
    for field_ in dataclasses.fields(group):
        yield field_.name, field_.type, field_.metadata["flag"], field_.default

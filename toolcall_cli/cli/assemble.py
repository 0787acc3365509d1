"""Assembling a session from the options: the config file, the model, the strategy, the tools."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_cli.approval import terminal_answers
from toolcall_cli.choosing import Retrieval
from toolcall_cli.cli.entry import fail, warn
from toolcall_cli.cli.models import ModelChoice, check_base_url, get_model
from toolcall_cli.cli.options import DEFAULT_LIMITS, LIMIT_FIELDS, SchemaMode, SessionOptions
from toolcall_cli.config import (
    BUILTIN_PROFILES,
    ConfigError,
    FileConfig,
    Resolved,
    RetrievalSettings,
    config_path,
    load_config,
    resolve,
    resolve_limits,
    resolve_retrieval,
)
from toolcall_cli.loop import Limits, ToolPolicy
from toolcall_cli.messages import user
from toolcall_cli.models import LOCAL_MODELS, ModelConfigError
from toolcall_cli.models.base import Model, server_kind_of
from toolcall_cli.models.paced import PacedModel
from toolcall_cli.models.scripted import scripted_model
from toolcall_cli.render import RenderMode
from toolcall_cli.session import Session
from toolcall_cli.strategies import UnknownStrategy, get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.loader import LoadResult, load_tools, tool_dirs
from toolcall_cli.tools.mcp_spec import McpSpecError, ServerSpec, named_apart, server_from_flag
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.tools.retrieval import EmbedRanker
from toolcall_cli.wire import NO_SAMPLING, ContextWindow, Sampling, WireFormat

if TYPE_CHECKING:
    # asyncio and the rest: imported only when a server is configured.
    from toolcall_cli.tools.mcp_servers import McpServers


def file_config() -> FileConfig:
    try:
        return load_config(config_path())
    except ConfigError as error:
        fail(str(error))


def session_limits(options: SessionOptions, config: FileConfig) -> Limits:
    """Flags > the config file's [limits] > Limits' defaults."""
    try:
        chosen, _ = resolve_limits(options.limit_flags(), config)
    except ConfigError as error:
        fail(str(error))
    return dataclasses.replace(limits_with(chosen), last_answer=not options.no_final_answer)


def limits_with(chosen: Mapping[str, int | float]) -> Limits:
    """Limits with the given `[limits]` keys' values; the rest keep their defaults."""
    fields: dict[str, Any] = {LIMIT_FIELDS[key]: value for key, value in chosen.items()}
    return dataclasses.replace(DEFAULT_LIMITS, **fields)


def load_registry(extra: tuple[Path, ...], no_default_tools: bool) -> ToolRegistry:
    return load_plugins(extra, no_default_tools).registry


def load_plugins(extra: tuple[Path, ...], no_default_tools: bool) -> LoadResult:
    """The tools of the tools.d directories, with the files they came from (chat reloads
    them); each problem is told as one warning line."""
    dirs = tool_dirs(list(extra), include_bundled=not no_default_tools, cwd=Path.cwd())
    loaded = load_tools(dirs, explicit=list(extra))
    for problem in loaded.problems:
        warn(problem)
    return loaded


def mcp_specs(flags: tuple[str, ...], config: FileConfig) -> list[ServerSpec]:
    """The MCP servers to start: the config file's, then each --mcp; names kept apart."""
    try:
        given = [server_from_flag(text) for text in flags]
    except McpSpecError as error:
        fail(str(error))
    return named_apart([*config.mcp_servers, *given])


def add_mcp_tools(
    registry: ToolRegistry,
    flags: tuple[str, ...],
    config: FileConfig,
    call_timeout: float,
    max_result_chars: int = DEFAULT_LIMITS.max_result_chars,
) -> McpServers | None:
    """Start the MCP servers (none: nothing is imported or started) and add their tools to
    `registry`; a server that cannot be used is one warning line, and the rest go on. A message
    from a server is read as far as `max_result_chars` needs (and a little more)."""
    specs = mcp_specs(flags, config)
    if not specs:
        return None
    from toolcall_cli.tools.mcp_servers import start_servers
    from toolcall_cli.tools.mcp_spec import start_timeout

    servers, problems = start_servers(
        specs,
        registry,
        call_timeout=call_timeout,
        start_timeout=start_timeout(),
        max_result_chars=max_result_chars,
    )
    for problem in problems:
        warn(problem)
    return servers


def model_choice(
    options: SessionOptions, config: FileConfig | None = None, limits: Limits = DEFAULT_LIMITS
) -> tuple[ModelChoice, str, Sampling, SchemaMode]:
    """The model to build, the strategy name, the sampling settings and the schema mode, after
    flags > environment > config (a profile's, then [defaults]) > defaults."""
    try:
        resolved = resolve(
            flags={
                "model": options.model,
                "profile": options.profile,
                "base_url": options.base_url,
                "api_key": options.api_key,
                "strategy": options.strategy.value if options.strategy else None,
                "schema_mode": options.schema_mode.value if options.schema_mode else None,
                "temperature": options.temperature,
                "top_p": options.top_p,
                "seed": options.seed,
                "max_tokens": options.max_tokens,
            },
            config=config if config is not None else file_config(),
        )
    except ConfigError as error:
        fail(str(error))
    if options.script and resolved.model != "scripted":
        fail(f"--script is for --model scripted (the model is {resolved.model})")
    if resolved.base_url and resolved.model in LOCAL_MODELS:
        check_endpoint_has_a_model(resolved.sources)
    elif resolved.base_url:
        try:
            where = base_url_setting(resolved.sources.get("base_url", ""))
            check_base_url(resolved.base_url, where)
        except ModelConfigError as error:
            fail(str(error))
    choice = ModelChoice(
        name=resolved.model,
        # One seed for both: the offline model's own, and the one sent to a server.
        seed=resolved.sampling.seed or 0,
        script=options.script,
        base_url=resolved.base_url,
        api_key=resolved.api_key,
        connect_timeout=options.connect_timeout,
        read_timeout=options.read_timeout,
        max_response_bytes=limits.max_response_bytes,
        max_line_bytes=limits.max_line_bytes,
        request_timeout=limits.request_timeout,
        key_note=resolved.key_note,
        faults=options.faults,
        fault_rate=options.fault_rate,
        context_window=chosen_window(options.context_window, resolved),
        profile=resolved.profile,
        strategy_given=any(
            resolved.sources.get(key, "default") != "default" for key in ("strategy", "schema_mode")
        ),
    )
    return choice, resolved.strategy, resolved.sampling, SchemaMode(resolved.schema_mode)


def chosen_window(flag: int | None, resolved: Resolved) -> ContextWindow | None:
    """--context-window, else the profile's context_window, with where it came from."""
    if flag is not None:
        return ContextWindow(flag, "--context-window")
    if resolved.context_window is not None:
        return ContextWindow(resolved.context_window, f"profile {resolved.profile!r}")
    return None


def base_url_setting(source: str) -> str:
    """How a user would name the setting the base URL came from."""
    if source.startswith("env "):
        return "$" + source.removeprefix("env ")
    if source.startswith("profile "):
        return f"profile {source.removeprefix('profile ')!r}'s base_url"
    return "base_url in the config file" if source == "config" else "--base-url"


def check_endpoint_has_a_model(sources: Mapping[str, str]) -> None:
    """An endpoint the user named, with a local model: the model name was forgotten. (A
    profile's URL or $OPENAI_BASE_URL with an offline run is not a mistake: both are commonly
    set while the demo model is used.)"""
    if sources.get("base_url") == "flag":
        fail("--base-url needs --model NAME: the model's name at that endpoint")
    if sources.get("base_url") == "config" and sources.get("model") == "default":
        fail(
            'the config file\'s [defaults] base_url needs --model NAME (or model = "NAME" in '
            "[defaults]): the model's name at that endpoint"
        )


def strategy_settings(
    options: SessionOptions, sampling: Sampling = NO_SAMPLING, system_prompt: str | None = None
) -> dict[str, Any]:
    """What get_strategy takes besides the name; the session keeps it for /strategy."""
    return {
        "schema_mode": (options.schema_mode or SchemaMode.tools).value,
        "stream_mode": options.stream_mode.value,
        "dag": options.dag,
        "prompt_style": options.prompt_style.value,
        "sampling": sampling,
        "system_prompt": system_prompt,
    }


def read_system_prompt(path: Path | None) -> str | None:
    """--system-prompt FILE's text (UTF-8); a file that cannot be read, or holds nothing, is a
    usage error before anything runs."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        fail(f"cannot read the system prompt {path}: {error.strerror or error}")
    except UnicodeDecodeError as error:
        fail(f"the system prompt {path} is not UTF-8 text (a bad byte at offset {error.start})")
    if not text.strip():
        fail(f"the system prompt {path} is empty")
    return text


def tool_policy(options: SessionOptions) -> ToolPolicy:
    """How the session runs tools: --allow, --yes, --max-parallel, --isolate-tools, --dag."""
    return ToolPolicy(
        allow=options.allow.value,
        yes=options.yes,
        max_parallel=options.max_parallel,
        isolate_all=options.isolate_tools,
        dag=options.dag,
    )


def pick_strategy(
    name: str,
    options: SessionOptions,
    sampling: Sampling = NO_SAMPLING,
    system_prompt: str | None = None,
) -> Strategy:
    try:
        return get_strategy(name, **strategy_settings(options, sampling, system_prompt))
    except UnknownStrategy as error:
        fail(str(error))


def make_model(choice: ModelChoice, pace: float) -> Model:
    """The model a choice names; local models' streams are paced for the live view."""
    model = get_model(choice)
    if pace > 0 and choice.name in LOCAL_MODELS:
        return PacedModel(model, pace)
    return model


@dataclass(frozen=True)
class Settings:
    """What flags, environment and config resolve to before a session is built: compare builds
    several sessions (one per strategy and seed) from one of these."""

    options: SessionOptions
    """The options, with the schema mode resolved."""
    choice: ModelChoice
    strategy_name: str
    sampling: Sampling
    limits: Limits
    config: FileConfig


def resolve_settings(options: SessionOptions) -> Settings:
    config = file_config()
    limits = session_limits(options, config)
    choice, strategy_name, sampling, schema_mode = model_choice(options, config, limits)
    return Settings(
        options=dataclasses.replace(options, schema_mode=schema_mode),
        choice=choice,
        strategy_name=strategy_name,
        sampling=sampling,
        limits=dataclasses.replace(limits, context_window=choice.context_window),
        config=config,
    )


@dataclass(frozen=True)
class Assembled:
    """A session, with what it was built from that a command still needs."""

    session: Session
    choice: ModelChoice
    """The model choice (chat's /model starts from it)."""
    config: FileConfig
    settings: dict[str, Any]
    """The resolved settings as a trace's header records them: no key, the URL masked."""
    plugins: LoadResult | None = None
    """The plugin files the session's tools came from (chat's hot reload starts from them)."""


def build_session(options: SessionOptions, system_prompt: str | None = None) -> Assembled:
    """The session the options call for. `system_prompt`: the text that replaces the
    strategy's system prompt where --system-prompt names no file (replay's recorded one)."""
    resolved = resolve_settings(options)
    options, choice, strategy_name = resolved.options, resolved.choice, resolved.strategy_name
    sampling = resolved.sampling
    if options.system_prompt is not None:
        system_prompt = read_system_prompt(options.system_prompt)
    try:
        model = make_model(choice, options.pace)
    except ModelConfigError as error:
        fail(str(error))
    notes: tuple[str, ...] = ()
    # The server is asked what it is only when the answer could matter: a strategy chosen, and
    # not the measured one, keeps the session from asking (a window from a profile, then, means
    # no probe at all).
    chosen = (strategy_name, options.schema_mode)
    asks = not choice.strategy_given or chosen == measured_strategy()
    measured = measured_default(model) if asks else None
    if measured is not None and not choice.strategy_given:
        strategy_name = measured.strategy
        options = dataclasses.replace(options, schema_mode=measured.schema_mode)
        notes = (measured.note,)
    if measured is not None and not measured.fits(strategy_name, options.schema_mode):
        measured = None  # its sampling and retrieval were measured with its strategy only
    sampling, sampling_note = measured_sampling(sampling, measured)
    notes += (sampling_note,) if sampling_note else ()
    strategy = pick_strategy(strategy_name, options, sampling, system_prompt)
    retrieval, retrieval_note = measured_retrieval(
        session_retrieval(options, choice, resolved.config), measured
    )
    notes += (retrieval_note,) if retrieval_note else ()
    plugins = load_plugins(options.tools, options.no_default_tools)
    registry = plugins.registry
    limits = resolved.limits
    servers = add_mcp_tools(
        registry, options.mcp, resolved.config, limits.tool_timeout, limits.max_result_chars
    )
    try:
        check_recording_format(model, strategy, registry, options)
    except BaseException:
        if servers is not None:
            servers.close()
        raise
    session = Session(
        retrieval=retrieval,
        model=model,
        strategy=strategy,
        strategy_settings=strategy_settings(options, sampling, system_prompt),
        policy=tool_policy(options),
        registry=registry,
        limits=resolved.limits,
        answers=terminal_answers(),
        notes=notes,
        mcp=servers,
    )
    settings = traced_settings(options, choice, session, sampling, system_prompt)
    return Assembled(
        session=session, choice=choice, config=resolved.config, settings=settings, plugins=plugins
    )


def session_retrieval(
    options: SessionOptions, choice: ModelChoice, config: FileConfig
) -> Retrieval:
    """--retrieve and its kin > environment > [retrieval] > defaults."""
    try:
        chosen = resolve_retrieval(options.retrieval_flags(), config)
    except ConfigError as error:
        fail(str(error))
    retrieval = Retrieval(k=chosen.retrieve, over=chosen.retrieve_over)
    if chosen.retriever != "embed":
        return retrieval
    return dataclasses.replace(retrieval, ranker=embed_ranker(chosen, choice))


def embed_ranker(chosen: RetrievalSettings, choice: ModelChoice) -> EmbedRanker:
    """The embeddings ranker: the session's key goes only to the session's own endpoint."""
    from toolcall_cli.keys import url_origin
    from toolcall_cli.models.embeddings import EmbeddingClient
    from toolcall_cli.tools.embed_cache import VectorFile
    from toolcall_cli.trace.files import state_dir

    url = chosen.embed_url or choice.base_url
    if url is None:
        fail("--retriever embed needs --embed-url URL: the model has no base URL to ask")
    if not chosen.embed_model:
        fail("--retriever embed needs --embed-model NAME: the embedding model at that endpoint")
    try:
        check_base_url(url, "--embed-url" if chosen.embed_url else "--base-url")
    except ModelConfigError as error:
        fail(str(error))
    own = choice.base_url is not None and url_origin(url) == url_origin(choice.base_url)
    client = EmbeddingClient(
        url,
        chosen.embed_model,
        choice.api_key if own else None,
        timeout=choice.read_timeout,
        max_response_bytes=choice.max_response_bytes,
        request_timeout=choice.request_timeout,
    )
    store = VectorFile(state_dir() / "tool-vectors.json")
    return EmbedRanker(client, chosen.embed_model, store)


def check_recording_format(
    model: Model, strategy: Strategy, registry: ToolRegistry, options: SessionOptions
) -> None:
    """A trace played as a script can answer only requests in the format it was recorded in:
    a strategy that asks for another is one line and exit 2 before anything runs, rather than
    replies its parser cannot read."""
    script = scripted_model(model)
    recording = script.recording if script is not None else None
    if recording is None:
        return
    first = strategy.build_request([user("?")], registry.specs(), model.name).body
    asked = WireFormat.of(first)
    if asked != recording.wire:
        fail(
            f"the trace {recording.path} cannot be played back under strategy "
            f"{strategy_label(strategy, options)}: its replies came as "
            f"{recording.wire.describe()}, and this strategy asks for {asked.describe()} "
            f"(recorded with {recording.strategy})"
        )


def strategy_label(strategy: Strategy, options: SessionOptions) -> str:
    """`schema tools`, `stream native`, `regex`: the strategy named as compare names it."""
    if strategy.name == "schema":
        return f"schema {(options.schema_mode or SchemaMode.tools).value}"
    if strategy.name == "stream":
        return f"stream {options.stream_mode.value}"
    return strategy.name


def traced_settings(
    options: SessionOptions,
    choice: ModelChoice,
    session: Session,
    sampling: Sampling,
    system_prompt: str | None,
) -> dict[str, Any]:
    """What a trace's header says the session was run with (see the trace format)."""
    from toolcall_cli.keys import display_url

    return {
        "model": choice.name,
        "strategy": session.strategy.name,
        "schema_mode": (options.schema_mode or SchemaMode.tools).value,
        "stream_mode": options.stream_mode.value,
        "base_url": display_url(choice.base_url) if choice.base_url else None,
        "profile": choice.profile,
        "limits": dataclasses.asdict(session.limits),
        "sampling": sampling.fields(),
        "system_prompt": system_prompt,
        "dag": options.dag,
        "prompt_style": options.prompt_style.value,
        # What the local models were asked to do, so a replay can ask the same.
        "seed": choice.seed,
        "faults": list(choice.faults),
        "fault_rate": choice.fault_rate,
        "script": str(choice.script) if choice.script else None,
        "allow": options.allow.value,
        "max_parallel": options.max_parallel,
        "retrieval": retrieval_record(session.retrieval),
        **mcp_settings(session),
    }


def retrieval_record(retrieval: Retrieval | None) -> dict[str, Any] | None:
    """How tools were chosen, for the trace's header."""
    if retrieval is None:
        return None
    return {
        "retrieve": retrieval.k,
        "retrieve_over": retrieval.over,
        "ranker": retrieval.ranker.name,
    }


def mcp_settings(session: Session) -> dict[str, Any]:
    """The MCP servers a trace's header records (command or URL; env values masked), when the
    session has any: a header without them reads as before."""
    if session.mcp is None:
        return {}
    return {"mcp_servers": [spec.traced() for spec in session.mcp.specs]}


MEASURED_RETRIEVE = 3
"""Tools a request carries on a llama.cpp server when the user set no --retrieve: the two
ranked best for the question, and search_tools for the others. Measured with Qwen2.5-0.5B on 30
questions and 7 tools, two passes with the same seeds: 33 of 60 right against 28 with every
tool sent; the gains were the questions where the model had picked a wrong tool (get_weather
for a country's population). bench/results/realmodel_default_variants.md."""


MEASURED_TEMPERATURE = 0.0
"""The temperature sent to a llama.cpp server when the user set none (llama-server samples at
0.8 when told nothing). Measured with Qwen2.5-0.5B on the same 30 questions, two passes: 34 of
60 right at 0 against 28 at the server's 0.8, in fewer iterations (2.5 against 3.1): a tool
call's name and arguments have one right spelling, and sampling away from it only costs.
bench/results/realmodel_default_variants.md; with --retrieve 3 as well, 40 of 60
(bench/results/realmodel_30questions.md)."""


@dataclass(frozen=True)
class MeasuredDefault:
    """What the bench measured best for a kind of server, used when the user chose nothing."""

    strategy: str
    schema_mode: SchemaMode
    retrieve: int
    temperature: float
    note: str

    def fits(self, strategy: str, schema_mode: SchemaMode | None) -> bool:
        """Whether a session runs the strategy this was measured with (chosen by the user, by
        the llamacpp profile, or by this default), so its temperature and retrieval apply."""
        return strategy == self.strategy and schema_mode == self.schema_mode


def measured_strategy() -> tuple[str, SchemaMode]:
    """The strategy and schema mode measured best for a llama.cpp server (the llamacpp
    profile's)."""
    profile = BUILTIN_PROFILES["llamacpp"]
    return profile.strategy or "regex", SchemaMode(profile.schema_mode or "tools")


def measured_default(model: Model) -> MeasuredDefault | None:
    """What the bench measured best for the model's kind of server: for a llama.cpp server the
    built-in profile's strategy (bench/RESULTS.md: with a small local model, JSON-schema output
    answered far more questions right than the text protocol, which is the default elsewhere),
    used when the user chose none; and with that strategy, temperature 0 and retrieval of the
    tools that fit the question, where the user chose no temperature or --retrieve. None for any
    other model or server."""
    if server_kind_of(model) != "llama.cpp":
        return None
    strategy, mode = measured_strategy()
    note = (
        f"llama.cpp server: strategy {strategy} with --schema-mode {mode.value}, the measured "
        "default for it (bench/RESULTS.md); --strategy chooses another"
    )
    return MeasuredDefault(strategy, mode, MEASURED_RETRIEVE, MEASURED_TEMPERATURE, note)


def measured_sampling(
    sampling: Sampling, measured: MeasuredDefault | None
) -> tuple[Sampling, str | None]:
    """The session's sampling, with the measured default's temperature when nobody chose one;
    and the note that says so."""
    if measured is None or sampling.temperature is not None:
        return sampling, None
    note = (
        f"llama.cpp server: temperature {measured.temperature:g}, the measured default for it "
        "(the server's own is 0.8); --temperature chooses another"
    )
    return dataclasses.replace(sampling, temperature=measured.temperature), note


def measured_retrieval(
    retrieval: Retrieval, measured: MeasuredDefault | None
) -> tuple[Retrieval, str | None]:
    """The session's retrieval, with the measured default's K when nobody chose one; and the
    note that says so."""
    if measured is None or retrieval.k is not None:
        return retrieval, None
    note = (
        f"llama.cpp server: each request carries at most {measured.retrieve} tools, the tools "
        "ranked best for the question and search_tools for the others, the measured default "
        f"for it (--retrieve {measured.retrieve}); --retrieve 0 sends every tool"
    )
    return dataclasses.replace(retrieval, k=measured.retrieve), note


def output_mode(quiet: bool, as_json: bool) -> RenderMode:
    if quiet and as_json:
        fail("--quiet and --json cannot be used together")
    if as_json:
        return "json"
    if quiet:
        return "quiet"
    return "live" if sys.stdout.isatty() else "plain"

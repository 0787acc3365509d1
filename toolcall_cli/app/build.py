"""A session from the options: the settings resolved, the model made, the tools loaded (plugins
and MCP servers), the strategy picked, and what a trace's header records of it all."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_cli.app._measured import (
    MEASURED_TEMPERATURE,
    LocalServer,
    measured_strategy,
    server_schema_mode,
    small_model_retrieval,
    small_model_retrieves,
    small_model_sampling,
    small_model_server,
    strategy_note,
)
from toolcall_cli.app._model_choice import ModelChoice, idle_faults_note, make_model
from toolcall_cli.app.errors import AppError, usage_errors
from toolcall_cli.app.options import DEFAULT_LIMITS, SessionOptions
from toolcall_cli.app.settings import (
    Settings,
    resolve_settings,
    retrieval_settings,
    session_retrieval,
    strategy_chosen,
    strategy_settings,
)
from toolcall_cli.app.variants import Variant, all_variants, strategy_label
from toolcall_cli.config import FileConfig, Resolved
from toolcall_cli.loop import ToolPolicy
from toolcall_cli.messages import user
from toolcall_cli.models import ModelConfigError
from toolcall_cli.models.base import Model, context_window_of
from toolcall_cli.models.scripted import scripted_model
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.session import Answers, ModelSetup, Session
from toolcall_cli.strategies import UnknownStrategy, get_strategy
from toolcall_cli.strategies.base import Strategy
from toolcall_cli.tools.loader import LoadResult, load_tools, tool_dirs
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.wire import Sampling, WireFormat

if TYPE_CHECKING:
    # asyncio and the rest: imported only when a server is configured.
    from toolcall_cli.tools.mcp_servers import McpServers
    from toolcall_cli.tools.mcp_spec import ServerSpec

Warn = Callable[[str], None]
"""Where a problem that does not stop the session is told: one line each."""


def print_warning(message: str) -> None:
    print(f"toolcall: warning: {message}", file=sys.stderr, flush=True)


# --- tools ------------------------------------------------------------------------------------


@dataclass
class Toolbox:
    """The session's tools: the plugins' and the MCP servers'."""

    registry: ToolRegistry
    plugins: LoadResult
    """The plugin files the tools came from (chat's hot reload starts from them)."""
    servers: McpServers | None = None

    def close(self) -> None:
        if self.servers is not None:
            self.servers.close()


def load_plugins(
    extra: tuple[Path, ...], no_default_tools: bool, warn: Warn, *, implicit: bool = True
) -> LoadResult:
    """The tools of the tools.d directories, with the files they came from; each problem is
    told as one warning line. A --tools DIR that is no directory is a usage error, as any path
    flag's: a typo would otherwise run without the user's tools, exit 0. `implicit` False: the
    user's and ./tools.d are not looked in (see tool_dirs)."""
    for directory in extra:
        if not directory.is_dir():
            why = "is not a directory" if directory.exists() else "no such directory"
            raise AppError(f"--tools {directory}: {why}")
    dirs = tool_dirs(
        list(extra), include_bundled=not no_default_tools, cwd=Path.cwd(), implicit=implicit
    )
    loaded = load_tools(dirs)
    for problem in loaded.problems:
        warn(problem)
    return loaded


def mcp_specs(flags: tuple[str, ...], config: FileConfig) -> list[ServerSpec]:
    """The MCP servers to start: the config file's, then each --mcp; names kept apart."""
    if not flags and not config.mcp_servers:
        return []
    from toolcall_cli.tools.mcp_spec import McpSpecError, named_apart, server_from_flag

    with usage_errors(McpSpecError):
        given = [server_from_flag(text) for text in flags]
    return named_apart([*config.mcp_servers, *given])


def add_mcp_tools(
    registry: ToolRegistry,
    flags: tuple[str, ...],
    config: FileConfig,
    warn: Warn,
    call_timeout: float = DEFAULT_LIMITS.tool_timeout,
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


def load_toolbox(
    settings: Settings, warn: Warn = print_warning, *, implicit: bool = True
) -> Toolbox:
    """The plugins of the tools.d directories and the MCP servers' tools, in one registry.
    `implicit` False: only the directories named (and the bundled), see tool_dirs."""
    tools, limits = settings.options.tools, settings.limits
    plugins = load_plugins(tools.tools, tools.no_default_tools, warn, implicit=implicit)
    servers = add_mcp_tools(
        plugins.registry,
        tools.mcp,
        settings.config,
        warn,
        limits.tool_timeout,
        limits.max_result_chars,
    )
    return Toolbox(plugins.registry, plugins, servers)


def add_given(registry: ToolRegistry, tool: Tool) -> None:
    """One of ask()'s functions beside the loaded tools; a name taken is a usage error naming
    where the other came from (two tools of one name cannot both be offered)."""
    held = registry.get(tool.name)
    if held is not None:
        raise AppError(
            f"two tools are named {tool.name!r}: a function given, and one from {held.source}"
        )
    registry.add(tool)


def tool_policy(options: SessionOptions) -> ToolPolicy:
    """How the session runs tools: --allow, --yes, --max-parallel, --isolate-tools, --dag."""
    tools = options.tools
    return ToolPolicy(
        allow=tools.allow,
        yes=tools.yes,
        max_parallel=tools.max_parallel,
        isolate_all=tools.isolate_tools,
        dag=options.strategy.dag,
    )


# --- the session ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Assembled:
    """A session, with what it was built from that a command still needs."""

    session: Session
    choice: ModelChoice
    """The model choice (chat's /model starts from it)."""
    config: FileConfig
    settings: dict[str, Any]
    """The resolved settings as a trace's header records them: no key, the URL masked."""
    options: SessionOptions
    """The options the session was built from, with what was resolved for them."""
    resolved: Settings
    """What the options resolved to, before any model's defaults (chat's /model starts from
    it)."""
    chosen_retrieval: Retrieval
    """How tools are retrieved as the user chose it, before the defaults for a small model."""
    plugins: LoadResult | None = None
    """The plugin files the session's tools came from (chat's hot reload starts from them)."""

    def use_model(self, name: str) -> None:
        """Chat's /model NAME: the session goes on with another model, which gets its own
        defaults for a small model (strategy, sampling, retrieval) wherever nothing chose them,
        not the first model's; a strategy chosen by a flag or /strategy is kept, and with it a
        schema mode chosen by a flag, variable, profile or config; a mode nobody chose is the
        one the new model's server gives schema (json on llama.cpp), not the first model's.
        ModelConfigError when the model cannot be made (the session is then as it was)."""
        session, settings = self.session, self.resolved
        choice = dataclasses.replace(settings.choice, name=name)
        model = make_model(choice, self.options.local.pace)
        if session.strategy_given:
            choice = dataclasses.replace(choice, strategy_given=True)
            options = settings.options
            if not choice.schema_mode_given:
                options = options.replace(schema_mode=server_schema_mode(model))
            settings = dataclasses.replace(
                settings, strategy_name=session.strategy.name, options=options
            )
        settings = dataclasses.replace(settings, choice=choice)
        tools = len(session.registry)
        measured = with_measured(settings, model, tools, retrieval=self.chosen_retrieval)
        session.use_model(model, measured.setup())


@dataclass(frozen=True)
class Measured:
    """The session's strategy, sampling and retrieval once the defaults for a small model have
    been applied where the user chose nothing, and the notes that say so."""

    strategy: Strategy
    strategy_settings: dict[str, Any]
    """What the strategy was made with besides its name (the session keeps it for /strategy)."""
    options: SessionOptions
    sampling: Sampling
    retrieval: Retrieval
    notes: tuple[str, ...]
    chosen_retrieval: Retrieval
    """The retrieval as the user chose it, before the defaults for a small model."""

    def setup(self) -> ModelSetup:
        """What the session's model runs with."""
        return ModelSetup(self.strategy, self.strategy_settings, self.retrieval, self.notes)


def small_model_takes(resolved: Resolved, server: LocalServer) -> list[str]:
    """What a run on `server` takes for the settings nobody chose, by the tests with_measured
    makes: the measured strategy (where it was measured), temperature and max_tokens."""
    strategy, mode = measured_strategy()
    taken: list[str] = []
    if server.strategy_measured and not strategy_chosen(resolved):
        taken.append(f"strategy {strategy} {mode}")
    if resolved.sampling.temperature is None:
        taken.append(f"temperature {MEASURED_TEMPERATURE:g}")
    if resolved.sampling.max_tokens is None:
        taken.append("max_tokens fitted to the window")
    return taken


def with_measured(
    settings: Settings,
    model: Model,
    tools: int,
    variant: Variant | None = None,
    retrieval: Retrieval | None = None,
) -> Measured:
    """The session `run` would build, or with `variant`'s strategy: on a llama.cpp server, the
    measured strategy when none was chosen (never for a variant), and on a llama.cpp or Ollama
    server the defaults for a small model where the user chose none, whichever strategy runs.
    `tools`: how many are registered; `retrieval`: the session's, when it is made already."""
    options, name = settings.options, settings.strategy_name
    if variant is not None:
        options, name = variant.options(options), variant.strategy
    strategy_open = variant is None and not settings.choice.strategy_given
    sampling = settings.sampling
    if retrieval is None:
        retrieval = session_retrieval(settings)
    chosen_retrieval = retrieval
    over_given = "retrieve_over" in retrieval_settings(settings).given
    # The server is asked what it is only when a default could change something: a session
    # whose every such setting was chosen, with its window from a profile, asks nothing.
    left_open = (
        strategy_open
        or sampling.temperature is None
        or sampling.max_tokens is None
        or small_model_retrieves(retrieval, over_given, tools)
    )
    notes: tuple[str, ...] = ()
    server = small_model_server(model) if left_open else None
    if server is not None:
        if strategy_open and server.strategy_measured:
            name, mode = measured_strategy()
            options = options.replace(schema_mode=mode)
            notes = (strategy_note(name, mode),)
        window = settings.limits.context_window or context_window_of(model)
        sampling, sampling_note = small_model_sampling(sampling, window, server)
        retrieval, retrieval_note = small_model_retrieval(retrieval, over_given, tools, server)
        notes += tuple(note for note in (sampling_note, retrieval_note) if note)
    notes += idle_faults_note(
        settings.choice.faults, name, options.strategy.schema_mode, options.strategy.stream_mode
    )
    chosen = strategy_settings(options, sampling, settings.system_prompt)
    with usage_errors(UnknownStrategy):
        strategy = get_strategy(name, **chosen)
    return Measured(strategy, chosen, options, sampling, retrieval, notes, chosen_retrieval)


def build_session(
    options: SessionOptions,
    *,
    system_prompt: str | None = None,
    answers: Answers | None = None,
    warn: Warn = print_warning,
    tools: Sequence[Tool] | None = None,
) -> Assembled:
    """The session the options call for; AppError when it cannot be built. `system_prompt`:
    the text that replaces the strategy's system prompt where --system-prompt names no file
    (replay's recorded one). `answers`: who answers what a run asks (approval, --step); None:
    nobody can be asked, and a dangerous tool runs only with --yes. `tools`: ask()'s functions,
    given: they and the directories named (--tools) are the tools, not the user's or
    ./tools.d (the bundled ones only where no_default_tools is off)."""
    settings = resolve_settings(options, system_prompt)
    model = model_for(settings.choice, settings.options)
    # The tools first: whether retrieval comes on by default depends on how many there are.
    toolbox = load_toolbox(settings, warn, implicit=tools is None)
    try:
        for tool in tools or ():
            add_given(toolbox.registry, tool)
        measured = with_measured(settings, model, len(toolbox.registry))
        check_recording_format(model, measured.strategy, toolbox.registry, measured.options)
    except BaseException:
        toolbox.close()
        raise
    return assemble(settings, model, toolbox, measured, answers, owns_servers=True)


def variant_session(
    settings: Settings,
    toolbox: Toolbox,
    variant: Variant | None,
    *,
    seed: int | None = None,
    retrieval: Retrieval | None = None,
    model: Model | None = None,
) -> Assembled:
    """A session of one strategy of those compared (compare, prompt --all, eval), on tools
    loaded once for all of them: its own model (unless one is given), seeded with `seed`, and
    its own memory of approvals and rate limits. Closing it leaves the toolbox's servers
    running. `variant` None: the strategy `run` would pick. Every strategy gets the defaults for
    a small model as `run` would, where the options chose none: each is compared as a user
    would run it."""
    if seed is not None:
        choice = dataclasses.replace(settings.choice, seed=seed)
        sampling = dataclasses.replace(settings.sampling, seed=seed)
        settings = dataclasses.replace(settings, choice=choice, sampling=sampling)
    model = model if model is not None else model_for(settings.choice, settings.options)
    measured = with_measured(settings, model, len(toolbox.registry), variant, retrieval)
    return assemble(settings, model, toolbox, measured)


def assemble(
    settings: Settings,
    model: Model,
    toolbox: Toolbox,
    measured: Measured,
    answers: Answers | None = None,
    *,
    owns_servers: bool = False,
) -> Assembled:
    """The session on the toolbox's tools, and what a trace's header records of it.
    `owns_servers`: closing the session stops the MCP servers (the sessions compared share
    them, and leave them running)."""
    options, sampling = measured.options, measured.sampling
    session = Session(
        model=model,
        strategy=measured.strategy,
        strategy_settings=measured.strategy_settings,
        policy=tool_policy(options),
        registry=toolbox.registry,
        retrieval=measured.retrieval,
        limits=settings.limits,
        answers=answers,
        notes=measured.notes,
        mcp=toolbox.servers if owns_servers else None,
        strategy_given=settings.choice.strategy_given,
    )
    traced = traced_settings(options, settings.choice, session, sampling, settings.system_prompt)
    if toolbox.servers is not None:
        # The servers a header records: command or URL, env values masked.
        traced["mcp_servers"] = [spec.traced() for spec in toolbox.servers.specs]
    return Assembled(
        session,
        settings.choice,
        settings.config,
        traced,
        options,
        resolved=settings,
        chosen_retrieval=measured.chosen_retrieval,
        plugins=toolbox.plugins,
    )


def model_for(choice: ModelChoice, options: SessionOptions) -> Model:
    with usage_errors(ModelConfigError):
        return make_model(choice, options.local.pace)


def check_recording_format(
    model: Model, strategy: Strategy, registry: ToolRegistry, options: SessionOptions
) -> None:
    """A trace played as a script can answer only requests in the format it was recorded in:
    a strategy that asks for another is one line and a usage error before anything runs,
    rather than replies its parser cannot read."""
    script = scripted_model(model)
    recording = script.recording if script is not None else None
    if recording is None:
        return
    first = strategy.build_request([user("?")], registry.specs(), model.name).body
    asked = WireFormat.of(first)
    if asked != recording.wire:
        raise AppError(
            f"the trace {recording.path} cannot be played back under strategy "
            f"{session_label(strategy, options)}: its replies came as "
            f"{recording.wire.describe()}, and this strategy asks for {asked.describe()} "
            f"(recorded with {recording.strategy})"
        )


def session_label(strategy: Strategy, options: SessionOptions) -> str:
    """The session's strategy named as compare names it (`schema tools`)."""
    chosen = options.strategy
    return strategy_label(strategy.name, chosen.schema_mode or "tools", chosen.stream_mode)


def traced_settings(
    options: SessionOptions,
    choice: ModelChoice,
    session: Session,
    sampling: Sampling,
    system_prompt: str | None,
) -> dict[str, Any]:
    """What a trace's header says the session was run with (see the trace format)."""
    from toolcall_cli.keys import display_url

    strategy, tools = options.strategy, options.tools
    return {
        "model": choice.name,
        "strategy": session.strategy.name,
        "schema_mode": options.strategy.schema_mode or "tools",
        "stream_mode": strategy.stream_mode,
        "base_url": display_url(choice.base_url) if choice.base_url else None,
        "profile": choice.profile,
        "limits": dataclasses.asdict(session.limits),
        "sampling": sampling.fields(),
        "system_prompt": system_prompt,
        "dag": strategy.dag,
        "prompt_style": strategy.prompt_style,
        # What the local models were asked to do, so a replay can ask the same.
        "seed": choice.seed,
        "faults": list(choice.faults),
        "fault_rate": choice.fault_rate,
        "script": str(choice.script) if choice.script else None,
        "allow": tools.allow,
        "max_parallel": tools.max_parallel,
        "retrieval": retrieval_record(session.retrieval),
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


# --- the first request ------------------------------------------------------------------------


def first_request(session: Session, question: str) -> dict[str, Any]:
    """The body of the first request a run of `question` sends, exactly: the session's own loop
    builds it (tools retrieved, history windowed, fitted to the context window), and the run is
    stopped before the model is asked. AppError when the run refuses the question."""
    from toolcall_cli.events import IterationStarted, Notice, RunFinished

    events: Iterator[Any] = session.ask(question)
    refusal = "the run sends no request"
    try:
        for event in events:
            if isinstance(event, IterationStarted):
                body: dict[str, Any] = event.request
                return body
            if isinstance(event, Notice) and event.level == "error":
                refusal = event.message
            if isinstance(event, RunFinished):
                break
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    raise AppError(refusal)


def every_first_request(
    options: SessionOptions, question: str, warn: Warn = print_warning
) -> tuple[str, list[tuple[Variant, dict[str, Any]]]]:
    """The model's name, and the first request of each strategy as a run with that strategy
    would send it (prompt --all): the tools loaded and retrieved alike for all, one model that
    is asked nothing."""
    settings = resolve_settings(options)
    toolbox = load_toolbox(settings, warn)
    model: Model | None = None
    try:
        retrieval = session_retrieval(settings)
        model = model_for(settings.choice, settings.options)
        bodies = []
        for variant in all_variants(settings.options.strategy.stream_mode):
            assembled = variant_session(
                settings, toolbox, variant, retrieval=retrieval, model=model
            )
            bodies.append((variant, first_request(assembled.session, question)))
        return model.name, bodies
    finally:
        close = getattr(model, "close", None)  # an HTTP model's connections
        if callable(close):
            close()
        toolbox.close()

"""What the options, the environment and the config file resolve to before a session is built:
the model to make, the strategy, the sampling, the limits and how tools are retrieved."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcall_cli.app._model_choice import ModelChoice, check_base_url
from toolcall_cli.app.errors import AppError, usage_errors
from toolcall_cli.app.options import DEFAULT_LIMITS, LIMIT_FIELDS, SessionOptions
from toolcall_cli.config import (
    ConfigError,
    FileConfig,
    Resolved,
    RetrievalSettings,
    read_config,
    resolve,
    resolve_limits,
    resolve_retrieval,
)
from toolcall_cli.limits import GROUNDING_MODES, GroundingMode, Limits
from toolcall_cli.models import LOCAL_MODELS, ModelConfigError
from toolcall_cli.private_files import read_bounded
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.tools.retrieval import EmbedRanker
from toolcall_cli.wire import ContextWindow, Sampling


def file_config() -> FileConfig:
    with usage_errors(ConfigError):
        return read_config()


def session_limits(options: SessionOptions, config: FileConfig) -> Limits:
    """Flags > the config file's [limits] > Limits' defaults."""
    with usage_errors(ConfigError):
        chosen, _ = resolve_limits(options.limits.by_key(), config)
    last_answer = not options.limits.no_final_answer
    grounding = grounding_of(options.limits.grounding, config)
    return dataclasses.replace(limits_with(chosen), last_answer=last_answer, grounding=grounding)


def grounding_of(flag: str | None, config: FileConfig) -> GroundingMode:
    """--grounding > the config file's [defaults] grounding > Limits' default."""
    chosen = flag or config.defaults.get("grounding") or DEFAULT_LIMITS.grounding
    for mode in GROUNDING_MODES:
        if chosen == mode:
            return mode
    raise AppError(
        f"config {config.path}: unknown grounding {chosen!r}; choose one of "
        + ", ".join(GROUNDING_MODES)
    )


def limits_with(chosen: Mapping[str, int | float]) -> Limits:
    """Limits with the given `[limits]` keys' values; the rest keep their defaults."""
    fields: dict[str, Any] = {LIMIT_FIELDS[key]: value for key, value in chosen.items()}
    return dataclasses.replace(DEFAULT_LIMITS, **fields)


def resolved_settings(
    options: SessionOptions, config: FileConfig, *, need_model: bool = True
) -> Resolved:
    """The model, endpoint, strategy and sampling after flags > environment > config (a
    profile's, then [defaults]) > defaults. Without `need_model` an unset model is ""."""
    endpoint, choice, sampling = options.endpoint, options.strategy, options.sampling
    flags = {
        "model": endpoint.model,
        "profile": endpoint.profile,
        "base_url": endpoint.base_url,
        "api_key": endpoint.api_key,
        "strategy": choice.strategy,
        "schema_mode": choice.schema_mode,
        **dataclasses.asdict(sampling),
    }
    with usage_errors(ConfigError):
        return resolve(flags=flags, config=config, need_model=need_model)


def model_choice(
    options: SessionOptions, config: FileConfig, limits: Limits = DEFAULT_LIMITS
) -> tuple[ModelChoice, Resolved]:
    """The model to build, and the settings it was resolved from."""
    resolved = resolved_settings(options, config)
    if options.local.script and resolved.model != "scripted":
        raise AppError(f"--script is for --model scripted (the model is {resolved.model})")
    check_endpoint(resolved)
    endpoint, local = options.endpoint, options.local
    choice = ModelChoice(
        name=resolved.model,
        # One seed for both: the offline model's own, and the one sent to a server.
        seed=resolved.sampling.seed or 0,
        script=local.script,
        base_url=resolved.base_url,
        api_key=resolved.api_key,
        connect_timeout=endpoint.connect_timeout,
        read_timeout=endpoint.read_timeout,
        max_response_bytes=limits.max_response_bytes,
        max_line_bytes=limits.max_line_bytes,
        request_timeout=limits.request_timeout,
        key_note=resolved.key_note,
        faults=local.fault_names,
        fault_rate=local.fault_rate,
        context_window=chosen_window(endpoint.context_window, resolved),
        profile=resolved.profile,
        strategy_given=strategy_chosen(resolved),
        schema_mode_given=resolved.sources.get("schema_mode", "default") != "default",
    )
    return choice, resolved


def strategy_chosen(resolved: Resolved) -> bool:
    """Whether anything (flag, environment, profile or config) chose the strategy or its mode:
    a llama.cpp server's measured strategy is taken only when nothing did."""
    sources = resolved.sources
    return any(sources.get(key, "default") != "default" for key in ("strategy", "schema_mode"))


def check_endpoint(resolved: Resolved) -> None:
    """A base URL that cannot be used, or one given to a local model, is a usage error."""
    if resolved.base_url and resolved.model in LOCAL_MODELS:
        check_endpoint_has_a_model(resolved.sources)
    elif resolved.base_url:
        with usage_errors(ModelConfigError):
            where = base_url_setting(resolved.sources.get("base_url", ""))
            check_base_url(resolved.base_url, where)


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
        raise AppError("--base-url needs --model NAME: the model's name at that endpoint")
    if sources.get("base_url") == "config" and sources.get("model") == "default":
        raise AppError(
            'the config file\'s [defaults] base_url needs --model NAME (or model = "NAME" in '
            "[defaults]): the model's name at that endpoint"
        )


def strategy_settings(
    options: SessionOptions, sampling: Sampling, system_prompt: str | None
) -> dict[str, Any]:
    """What get_strategy takes besides the name; the session keeps it for /strategy."""
    strategy = options.strategy
    return {
        "schema_mode": strategy.schema_mode or "tools",
        "stream_mode": strategy.stream_mode,
        "dag": strategy.dag,
        "prompt_style": strategy.prompt_style,
        "sampling": sampling,
        "system_prompt": system_prompt,
    }


def read_system_prompt(path: Path | None) -> str | None:
    """--system-prompt FILE's text (UTF-8); a file that cannot be read, or holds nothing, is a
    usage error before anything runs."""
    if path is None:
        return None
    try:
        text = read_bounded(path).decode("utf-8")
    except OSError as error:
        raise AppError(f"cannot read the system prompt {path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise AppError(
            f"the system prompt {path} is not UTF-8 text (a bad byte at offset {error.start})"
        ) from None
    if not text.strip():
        raise AppError(f"the system prompt {path} is empty")
    return text


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
    system_prompt: str | None = None
    """The text that replaces the strategy's system prompt (--system-prompt's file), if any."""


def resolve_settings(
    options: SessionOptions, system_prompt: str | None = None, config: FileConfig | None = None
) -> Settings:
    """The settings the options call for. `system_prompt`: the text that replaces the
    strategy's where --system-prompt names no file (replay's recorded one)."""
    config = config if config is not None else file_config()
    limits = session_limits(options, config)
    choice, resolved = model_choice(options, config, limits)
    if options.strategy.system_prompt is not None:
        system_prompt = read_system_prompt(options.strategy.system_prompt)
    return Settings(
        options=options.replace(schema_mode=resolved.schema_mode),
        choice=choice,
        strategy_name=resolved.strategy,
        sampling=resolved.sampling,
        limits=dataclasses.replace(limits, context_window=choice.context_window),
        config=config,
        system_prompt=system_prompt,
    )


def retrieval_settings(settings: Settings) -> RetrievalSettings:
    """--retrieve and its kin > environment > [retrieval] > defaults, with which were given."""
    with usage_errors(ConfigError):
        return resolve_retrieval(settings.options.retrieval.by_key(), settings.config)


def session_retrieval(settings: Settings) -> Retrieval:
    """--retrieve and its kin > environment > [retrieval] > defaults."""
    chosen = retrieval_settings(settings)
    retrieval = Retrieval(k=chosen.retrieve, over=chosen.retrieve_over)
    if chosen.retriever != "embed":
        return retrieval
    return dataclasses.replace(retrieval, ranker=embed_ranker(chosen, settings.choice))


def embed_ranker(chosen: RetrievalSettings, choice: ModelChoice) -> EmbedRanker:
    """The embeddings ranker: the session's key goes only to the session's own endpoint."""
    from toolcall_cli.keys import url_origin
    from toolcall_cli.models.embeddings import EmbeddingClient
    from toolcall_cli.tools.embed_cache import VectorFile
    from toolcall_cli.trace.files import state_dir

    url = chosen.embed_url or choice.base_url
    if url is None:
        raise AppError("--retriever embed needs --embed-url URL: the model has no base URL to ask")
    if not chosen.embed_model:
        raise AppError(
            "--retriever embed needs --embed-model NAME: the embedding model at that endpoint"
        )
    with usage_errors(ModelConfigError):
        check_base_url(url, "--embed-url" if chosen.embed_url else "--base-url")
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

"""Where a run's settings come from: flags > environment > config file (TOML) > defaults. A
profile is only a base URL, the name of the variable that holds its key, and defaults."""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_cli.private_files import app_dir, read_bounded
from toolcall_cli.wire import Sampling

if TYPE_CHECKING:
    from toolcall_cli.tools.mcp_spec import ServerSpec


class ConfigError(ValueError):
    """A config file or setting that cannot be used (a usage error, exit code 2)."""


@dataclass(frozen=True)
class Profile:
    name: str
    base_url: str
    key_env: str | None = None
    model: str | None = None
    strategy: str | None = None
    note: str = ""
    schema_mode: str | None = None
    """With strategy schema: `tools`, `json` or `required`; None means `tools`."""
    context_window: int | None = None
    """The model's context window in tokens, when the server does not say (or says wrong)."""
    # Sampling defaults for the profile's endpoint. None everywhere for now: which temperature
    # gives a small local model the most right tool-use answers is for the bench to measure
    # (issue 15), and a guessed default would be worse than the server's own.
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = None


BUILTIN_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini", "schema"),
        Profile(
            "deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat", "schema"
        ),
        Profile(
            "qwen",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
            "qwen-plus",
            "schema",
            "Alibaba DashScope, OpenAI-compatible mode",
        ),
        Profile(
            "moonshot", "https://api.moonshot.cn/v1", "MOONSHOT_API_KEY", "moonshot-v1-8k", "schema"
        ),
        Profile("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", None, "schema"),
        Profile("ollama", "http://localhost:11434/v1", None, "qwen2.5:7b", "schema"),
        Profile("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", None, "schema"),
        # Measured (bench/RESULTS.md): with Qwen2.5-0.5B on llama-server, JSON-schema output
        # (a grammar the server enforces) gave by far the most right answers; the text
        # protocol (regex) the fewest, since a small model loops on calls or answers without one.
        Profile(
            "llamacpp",
            "http://localhost:8080/v1",
            None,
            "local",
            "schema",
            "llama.cpp llama-server",
            schema_mode="json",
        ),
        Profile("lmstudio", "http://localhost:1234/v1", None, None, "schema"),
    ]
}


def config_path(environ: Mapping[str, str] = os.environ) -> Path:
    override = environ.get("TOOLCALL_CONFIG")
    if override:  # `~` too: a unit file or a quoted value hands it over unexpanded
        return Path(override).expanduser()
    return app_dir() / "config.toml"


def read_config(environ: Mapping[str, str] = os.environ) -> FileConfig:
    """The config file's settings. The default file need not exist (most runs have none), but
    one TOOLCALL_CONFIG names must: a typo in it would otherwise run with no config at all, and
    say nothing."""
    path = config_path(environ)
    if environ.get("TOOLCALL_CONFIG") and not path.exists():
        missing = "is a link to nothing" if path.is_symlink() else "does not exist"
        raise ConfigError(f"config {path} (TOOLCALL_CONFIG) {missing}")
    return load_config(path)


@dataclass(frozen=True)
class FileConfig:
    """What the TOML config file says: `[defaults]`, `[limits]` and `[profiles.NAME]` tables."""

    defaults: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    path: Path | None = None
    limits: dict[str, int | float] = field(default_factory=dict)
    trace: bool = True
    """`trace = false` in [defaults]: runs and chats write no trace unless --trace asks."""
    trace_keep: int = 200
    """`trace_keep` in [defaults]: how many traces the trace directory keeps; older ones go."""
    retrieval: dict[str, Any] = field(default_factory=dict)
    """The `[retrieval]` table: retrieve, retrieve_over, retriever, embed_url, embed_model."""
    mcp_servers: tuple[ServerSpec, ...] = ()
    """`[mcp.servers.NAME]` tables: MCP servers whose tools every session loads."""


DEFAULT_KEYS = {"profile", "model", "strategy", "schema_mode", "base_url", "grounding"}
TRACE_KEYS = {"trace", "trace_keep"}
"""[defaults] keys that are not strings: whether runs are traced, and how many traces are kept."""
MAX_TRACE_KEEP = 1_000_000
PROFILE_KEYS = ("base_url", "key_env", "model", "strategy", "note", "schema_mode")
SCHEMA_MODES = ("tools", "json", "required")
"""A profile's string keys; `context_window` and the sampling keys are its others."""
MIN_CONTEXT_WINDOW = 256
MAX_CONTEXT_WINDOW = 100_000_000
SAMPLING_KEYS = ("temperature", "top_p", "seed", "max_tokens")
"""Sampling settings: a flag (--temperature, --top-p, --seed), an environment variable
(TOOLCALL_TEMPERATURE, TOOLCALL_TOP_P, TOOLCALL_SEED) or a profile's key."""
SEED_MAX = 2**63 - 1
MAX_TOKENS = 1_000_000
STRATEGIES = ("regex", "schema", "stream")


@dataclass(frozen=True)
class LimitSetting:
    """What one limit takes, in the config file's `[limits]` table and as a flag."""

    kind: type[int] | type[float]
    minimum: float

    @property
    def maximum(self) -> float:
        # A year of seconds: far beyond any run, and below what threading and time accept as a
        # timeout (--timeout 1e10 once overflowed the platform's time_t).
        return 365 * 86_400 if self.kind is float else math.inf

    @property
    def description(self) -> str:
        if self.kind is int:
            return f"a whole number ≥ {self.minimum:g}"
        return f"a number of seconds from {self.minimum:g} to {self.maximum:,.0f}"


LIMIT_SETTINGS: dict[str, LimitSetting] = {
    "max_iterations": LimitSetting(int, 1),
    "tool_timeout": LimitSetting(float, 0.01),
    "timeout": LimitSetting(float, 0.1),
    "max_result_chars": LimitSetting(int, 100),
    "max_failed_rounds": LimitSetting(int, 1),
    "max_repeated_rounds": LimitSetting(int, 1),
    "history_rounds": LimitSetting(int, 0),
    "max_calls_per_reply": LimitSetting(int, 1),
    "max_reply_chars": LimitSetting(int, 1),
    "max_response_bytes": LimitSetting(int, 1),
    "max_line_bytes": LimitSetting(int, 1),
    "request_timeout": LimitSetting(float, 0.1),
}
"""The `[limits]` keys, named like the flags (`--max-iterations` is `max_iterations`)."""


def flag_name(key: str) -> str:
    """The flag that sets the setting `key`: `max_iterations` is `--max-iterations`."""
    return "--" + key.replace("_", "-")


def limit_problem(key: str, value: Any) -> str | None:
    """Why a value cannot be the limit `key`, or None if it can."""
    setting = LIMIT_SETTINGS[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be {setting.description}, not {type(value).__name__} {value!r}"
    if setting.kind is int and not isinstance(value, int):
        return f"must be {setting.description}, not {value!r}"
    if not math.isfinite(value) or not setting.minimum <= value <= setting.maximum:
        return f"must be {setting.description}, not {value!r}"
    return None


def config_text(path: Path) -> str:
    """The config file's text, within a bound; ConfigError when it cannot be read."""
    try:
        return read_bounded(path).decode("utf-8")
    except OSError as error:
        reason = "it is a directory" if path.is_dir() else error.strerror or error
        raise ConfigError(f"cannot read config {path}: {reason}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"cannot read config {path}: {error}") from None


def load_config(path: Path) -> FileConfig:
    if not path.exists():
        return FileConfig(path=path)
    # Here, not at the top: most runs have no config file, and start-up is worth the wait.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    try:
        data = tomllib.loads(config_text(path))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config {path} is not valid TOML: {error}") from None
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ConfigError(f"config {path}: [defaults] must be a table")
    tables = {"defaults", "profiles", "limits", "retrieval", "mcp"}
    unknown = sorted(set(defaults) - DEFAULT_KEYS - TRACE_KEYS) + sorted(set(data) - tables)
    if unknown:
        raise ConfigError(
            f"config {path}: unknown setting(s) {', '.join(unknown)}; [defaults] takes "
            f"{', '.join(sorted(DEFAULT_KEYS | TRACE_KEYS))}{misplaced(unknown)}, and "
            "profiles go in [profiles.NAME] tables, MCP servers in [mcp.servers.NAME]"
        )
    trace, trace_keep = trace_settings(defaults, path)
    defaults = {key: value for key, value in defaults.items() if key not in TRACE_KEYS}
    for key, value in defaults.items():
        if not isinstance(value, str):
            raise ConfigError(f"config {path}: [defaults] {key} must be a string")
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise ConfigError(f"config {path}: profiles must be [profiles.NAME] tables")
    return FileConfig(
        defaults=defaults,
        profiles={name: profile_from(name, table, path) for name, table in profiles.items()},
        path=path,
        limits=limits_from(data.get("limits", {}), path),
        trace=trace,
        trace_keep=trace_keep,
        retrieval=retrieval_from(data.get("retrieval", {}), path),
        mcp_servers=mcp_servers_from(data.get("mcp", {}), path),
    )


def mcp_servers_from(table: Any, path: Path) -> tuple[ServerSpec, ...]:
    """`[mcp.servers.NAME]` tables, each with `command` (`args`, `env`) or `url`."""
    from toolcall_cli.tools.mcp_spec import McpSpecError, server_from_table

    if not isinstance(table, dict) or set(table) - {"servers"}:
        raise ConfigError(f"config {path}: [mcp] takes only [mcp.servers.NAME] tables")
    servers = table.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"config {path}: MCP servers go in [mcp.servers.NAME] tables")
    found: list[ServerSpec] = []
    for name, server in servers.items():
        try:
            found.append(server_from_table(name, server))
        except McpSpecError as problem:
            raise ConfigError(f"config {path}: [mcp.servers.{name}] {problem}") from None
    return tuple(found)


def trace_settings(defaults: dict[str, Any], path: Path) -> tuple[bool, int]:
    """[defaults] `trace` (true or false) and `trace_keep` (a whole number from 1)."""
    trace = defaults.get("trace", True)
    if not isinstance(trace, bool):
        raise ConfigError(f"config {path}: [defaults] trace must be true or false, not {trace!r}")
    keep = defaults.get("trace_keep", FileConfig.trace_keep)
    if isinstance(keep, bool) or not isinstance(keep, int) or not 1 <= keep <= MAX_TRACE_KEEP:
        raise ConfigError(
            f"config {path}: [defaults] trace_keep must be a whole number from 1 to "
            f"{MAX_TRACE_KEEP:,}, not {keep!r}"
        )
    return trace, keep


def misplaced(keys: list[str]) -> str:
    """Where the known settings among `keys` go: `max_iterations` in [defaults] was told only
    "[limits] takes limits", and `temperature` (a profile's) nothing at all."""
    homes = {key: "[limits]" for key in LIMIT_SETTINGS}
    homes |= {key: "[retrieval]" for key in RETRIEVAL_KEYS}
    homes |= {key: "a [profiles.NAME] table" for key in (*SAMPLING_KEYS, "context_window")}
    return "".join(f"; {key} goes in {homes[key]}" for key in keys if key in homes)


def limits_from(table: Any, path: Path) -> dict[str, int | float]:
    return checked_table(table, path, "limits", "limit", tuple(LIMIT_SETTINGS), limit_problem)


def checked_table(
    table: Any,
    path: Path,
    name: str,
    what: str,
    keys: Sequence[str],
    problem_of: Callable[[str, Any], str | None],
) -> dict[str, Any]:
    """A settings table of known keys, each value checked: the first problem is one line."""
    if not isinstance(table, dict):
        raise ConfigError(f"config {path}: {name} must be a [{name}] table")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise ConfigError(
            f"config {path}: unknown {what}(s) {', '.join(unknown)}; [{name}] takes "
            f"{', '.join(keys)}"
        )
    for key, value in table.items():
        problem = problem_of(key, value)
        if problem:
            raise ConfigError(f"config {path}: [{name}] {key} {problem}")
    return dict(table)


RETRIEVERS = ("lexical", "embed")
RETRIEVAL_KEYS = ("retrieve", "retrieve_over", "retriever", "embed_url", "embed_model")
"""The `[retrieval]` keys, named like the flags (`--retrieve-over` is `retrieve_over`)."""
RETRIEVAL_ENV = {key: f"TOOLCALL_{key.upper()}" for key in RETRIEVAL_KEYS}
MAX_RETRIEVE = 1000


@dataclass(frozen=True)
class RetrievalSettings:
    """How a session chooses the tools each request carries (see toolcall_cli.request_tools)."""

    retrieve: int | None = None
    """At most this many tools a request; None: chosen by itself; 0: off."""
    retrieve_over: int = 20
    retriever: str = "lexical"
    embed_url: str | None = None
    """None: the session's base URL."""
    embed_model: str | None = None
    given: frozenset[str] = frozenset()
    """The keys the user set (flag, environment or `[retrieval]`): a default for a small model
    changes only what nobody chose."""


def retrieval_problem(key: str, value: Any) -> str | None:
    """Why `value` cannot be the retrieval setting `key`, or None if it can."""
    if key in ("retrieve", "retrieve_over"):
        whole = isinstance(value, int) and not isinstance(value, bool)
        low = 2 if key == "retrieve" else 0
        if not whole or not (value == 0 or low <= value <= MAX_RETRIEVE):
            fit = "0 (off) or a whole number from 2" if key == "retrieve" else "a whole number"
            return f"must be {fit} to {MAX_RETRIEVE:,}, not {value!r}"
        return None
    if key == "retriever":
        if value not in RETRIEVERS:
            return f"must be one of {', '.join(RETRIEVERS)}, not {value!r}"
        return None
    if not isinstance(value, str) or not value.strip():
        return f"must be a non-empty string, not {value!r}"
    return None


def retrieval_from(table: Any, path: Path) -> dict[str, Any]:
    return checked_table(
        table, path, "retrieval", "retrieval setting", tuple(RETRIEVAL_KEYS), retrieval_problem
    )


def resolve_retrieval(
    flags: Mapping[str, Any],
    config: FileConfig,
    environ: Mapping[str, str] = os.environ,
) -> RetrievalSettings:
    """Each retrieval setting after flags (None = not given) > environment > `[retrieval]` >
    defaults, checked wherever it came from."""
    chosen: dict[str, Any] = {}
    for key in RETRIEVAL_KEYS:
        variable = RETRIEVAL_ENV[key]
        if flags.get(key) is not None:
            value, where = flags[key], flag_name(key)
        elif environ.get(variable):
            value, where = environ[variable], "$" + variable
            if key in ("retrieve", "retrieve_over"):
                value = number_from_env(value, where, whole=True)
        elif key in config.retrieval:
            value, where = config.retrieval[key], "[retrieval] " + key
        else:
            continue
        problem = retrieval_problem(key, value)
        if problem:
            raise ConfigError(f"{where} {problem}")
        chosen[key] = value
    return RetrievalSettings(**chosen, given=frozenset(chosen))


def profile_from(name: str, table: Any, path: Path) -> Profile:
    where = f"config {path}: profile {name!r}"
    if not isinstance(table, dict) or not isinstance(table.get("base_url"), str):
        raise ConfigError(f"{where} needs a base_url string")
    unknown = set(table) - {*PROFILE_KEYS, *SAMPLING_KEYS, "context_window"}
    if unknown:
        raise ConfigError(
            f"{where} has unknown keys {sorted(unknown)}; allowed: "
            f"{sorted([*PROFILE_KEYS, *SAMPLING_KEYS])} "
            "(keys go in environment variables, named by key_env)"
        )
    problem = profile_problem(table)
    if problem:
        raise ConfigError(f"{where}{problem}")
    chosen = {k: table[k] for k in (*PROFILE_KEYS, *SAMPLING_KEYS) if k in table}
    return Profile(name=name, context_window=table.get("context_window"), **chosen)


def profile_problem(table: dict[str, Any]) -> str | None:
    """What is wrong with a profile's values, as the rest of a sentence that names it."""
    for key in SAMPLING_KEYS:
        problem = sampling_problem(key, table.get(key))
        if problem:
            return f": {key} {problem}"
    for key in PROFILE_KEYS:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            return f": {key} must be a string, not {type(value).__name__}"
    if table.get("strategy", STRATEGIES[0]) not in STRATEGIES:
        return f": unknown strategy {table['strategy']!r}; choose one of {', '.join(STRATEGIES)}"
    key_env = table.get("key_env")
    if key_env is not None and not ENV_NAME.fullmatch(key_env):
        return (
            ": key_env must name an environment variable (like MY_API_KEY), not hold the key itself"
        )
    window = table.get("context_window")
    problem = context_window_problem(window) if window is not None else None
    return f": context_window {problem}" if problem else None


def context_window_problem(value: Any) -> str | None:
    """Why a value cannot be a context window in tokens, or None if it can."""
    fit = f"a whole number of tokens from {MIN_CONTEXT_WINDOW} to {MAX_CONTEXT_WINDOW:,}"
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be {fit}, not {type(value).__name__} {value!r}"
    if not MIN_CONTEXT_WINDOW <= value <= MAX_CONTEXT_WINDOW:
        return f"must be {fit}, not {value!r}"
    return None


def sampling_problem(key: str, value: Any) -> str | None:
    """Why `value` cannot be the sampling setting `key` (None if it can, or is not set)."""
    if value is None:
        return None
    if key in WHOLE_NUMBER_KEYS:
        return whole_number_problem(key, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"must be a number, not {value!r}"
    if key == "temperature" and not 0 <= value <= 2:
        return f"must be from 0 to 2, not {value!r}"
    if key == "top_p" and not 0 < value <= 1:
        return f"must be above 0 and at most 1, not {value!r}"
    return None


def whole_number_problem(key: str, value: Any) -> str | None:
    """Why `value` cannot be the seed or max_tokens (None if it can)."""
    low, high, shown = (0, SEED_MAX, "2**63-1") if key == "seed" else (1, MAX_TOKENS, None)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return f"must be a whole number from {low} to {shown or f'{high:,}'}, not {value!r}"
    return None


def number_from_env(text: str, where: str, *, whole: bool) -> float | int:
    """An environment variable's text (`where` names it) as the number a setting takes."""
    try:
        return int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{where} must be {kind}, not {text!r}") from None


SAMPLING_ENV = {key: f"TOOLCALL_{key.upper()}" for key in SAMPLING_KEYS}
WHOLE_NUMBER_KEYS = ("seed", "max_tokens")


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Resolved:
    """The settings a session is built from, each with where it came from."""

    model: str
    strategy: str
    base_url: str | None = None
    api_key: str | None = None
    profile: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    key_note: str | None = None
    """Why a key variable that is set is not sent to `base_url` (None when nothing is held)."""
    context_window: int | None = None
    """The chosen profile's context_window, if it has one (--context-window comes before it)."""
    sampling: Sampling = field(default_factory=Sampling)
    schema_mode: str = "tools"


def resolve(
    *,
    flags: Mapping[str, Any],
    environ: Mapping[str, str] = os.environ,
    config: FileConfig | None = None,
    need_model: bool = True,
) -> Resolved:
    """Combine flags (None = not given), environment, config file and defaults.

    Without `need_model` (`config show`, which only looks), a profile with no default model
    gives model "" instead of an error, so the rest of its settings can still be shown."""
    config = config or FileConfig()
    sources: dict[str, str] = {}

    def pick(key: str, env: str | None, *fallbacks: tuple[str, Any]) -> Any:
        for source, value in (
            ("flag", flags.get(key)),
            (f"env {env}", environ.get(env) if env else None),
            *fallbacks,
        ):
            if value not in (None, ""):
                sources[key] = source
                return value
        return None

    profile_name = pick("profile", "TOOLCALL_PROFILE", ("config", config.defaults.get("profile")))
    profile = find_profile(profile_name, config) if profile_name else None

    def setting(key: str, env: str | None, default: Any) -> Any:
        # A chosen profile's own defaults come before the file's [defaults]: the profile is
        # the more specific choice.
        from_profile = getattr(profile, key, None) if profile else None
        return pick(
            key,
            env,
            (f"profile {profile_name}", from_profile),
            ("config", config.defaults.get(key)),
            ("default", default),
        )

    def one_of(key: str, env: str | None, default: str, choices: Sequence[str]) -> str:
        value = setting(key, env, default)
        if value not in choices:
            raise ConfigError(
                f"unknown {key} {value!r} (from {sources.get(key, '')}); choose one of "
                + ", ".join(choices)
            )
        return str(value)

    model = setting("model", "TOOLCALL_MODEL", None if profile else "offline")
    if model is None and not need_model:
        model = ""
    elif model is None:
        raise ConfigError(f"profile {profile_name!r} has no default model; give --model NAME")
    strategy = one_of("strategy", "TOOLCALL_STRATEGY", "regex", STRATEGIES)
    schema_mode = one_of("schema_mode", None, "tools", SCHEMA_MODES)
    base_url = setting("base_url", None if profile else "OPENAI_BASE_URL", None)
    key_env, key_note = key_variable(base_url, profile, environ)
    api_key = pick("api_key", key_env)
    if api_key is not None and base_url is not None:
        check_key(api_key, "--api-key" if sources["api_key"] == "flag" else f"${key_env}")
    sampling = {key: sampling_setting(key, setting, sources) for key in SAMPLING_KEYS}
    return Resolved(
        model=str(model),
        strategy=strategy,
        base_url=base_url,
        api_key=api_key,
        profile=profile.name if profile else None,
        sources=sources,
        key_note=key_note,
        context_window=profile.context_window if profile else None,
        sampling=Sampling(**sampling),
        schema_mode=schema_mode,
    )


def sampling_setting(
    key: str, setting: Callable[[str, str | None, Any], Any], sources: dict[str, str]
) -> Any:
    """One sampling setting after flags > environment > profile > defaults (none), checked
    wherever it came from: a float flag takes `nan`, and a variable holds any text."""
    value = setting(key, SAMPLING_ENV[key], None)
    source = sources.get(key, "")
    where = flag_name(key) if source == "flag" else source.replace("env ", "$")
    if source.startswith("env ") and isinstance(value, str):
        value = number_from_env(value, where, whole=key in WHOLE_NUMBER_KEYS)
    problem = sampling_problem(key, value)
    if problem:
        said = where if where.startswith(("-", "$")) else f"{key} (from {where})"
        raise ConfigError(f"{said} {problem}")
    return value


OPENAI_URL = "https://api.openai.com/v1"


def key_variable(
    base_url: str | None, profile: Profile | None, environ: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """The variable whose key may go to `base_url`, and why a key that is set is held back.

    A key read from the environment goes only to the host its source vouches for: a profile's
    key to that profile's own host; OPENAI_API_KEY to OpenAI or to OPENAI_BASE_URL's host. A
    server named anywhere else (--base-url, the config file's [defaults]) gets a key only from
    --api-key. Hosts are compared as httpx will connect (scheme, host, port), never by
    splitting strings: `http://127.0.0.1#@api.openai.com` goes to 127.0.0.1.
    """
    if base_url is None:
        return None, None
    if profile is not None:
        variable, vouched = profile.key_env, [profile.base_url]
    else:
        variable, vouched = "OPENAI_API_KEY", [OPENAI_URL, environ.get("OPENAI_BASE_URL") or ""]
    if variable is None:
        return None, None
    from toolcall_cli.keys import display_url, url_origin

    target = url_origin(base_url)
    if target is not None and any(url and url_origin(url) == target for url in vouched):
        return variable, None
    if not environ.get(variable):
        return None, None
    hosts = " or ".join(display_url(url) for url in vouched if url)
    return None, (
        f"${variable} is set but only sent to {hosts}; "
        f"give --api-key to send a key to {display_url(base_url)}"
    )


def check_key(key: str, source: str) -> None:
    from toolcall_cli.keys import key_problem

    problem = key_problem(key)
    if problem:
        raise ConfigError(f"the API key from {source} {problem}")


def resolve_limits(
    flags: Mapping[str, Any], config: FileConfig
) -> tuple[dict[str, int | float], dict[str, str]]:
    """The limits a flag (None = not given) or the config file sets, by `[limits]` key, and
    where every limit comes from ("flag", "config" or "default"). Flag values are checked here
    as the file's are: a float flag takes `nan` and `inf`, which no limit can be."""
    chosen: dict[str, int | float] = {}
    sources: dict[str, str] = {}
    for key in LIMIT_SETTINGS:
        flag = flags.get(key)
        if flag is not None:
            problem = limit_problem(key, flag)
            if problem:
                raise ConfigError(f"{flag_name(key)} {problem}")
            chosen[key], sources[key] = flag, "flag"
        elif key in config.limits:
            chosen[key], sources[key] = config.limits[key], "config"
        else:
            sources[key] = "default"
    return chosen, sources


def find_profile(name: str, config: FileConfig) -> Profile:
    if name in config.profiles:
        return config.profiles[name]
    if name in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[name]
    known = sorted({*BUILTIN_PROFILES, *config.profiles})
    raise ConfigError(f"unknown profile {name!r}; known profiles: {', '.join(known)}")


def mask(secret: str | None) -> str:
    """A key as it may be shown: never more than its last 4 characters."""
    from toolcall_cli.keys import masked

    return masked(secret) if secret else "(not set)"

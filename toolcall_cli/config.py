"""Where a run's settings come from: flags > environment > config file (TOML) > defaults.

A profile is only a base URL, the name of the variable that holds its key, and defaults.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]


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
        Profile(
            "llamacpp", "http://localhost:8080/v1", None, "local", "regex", "llama.cpp llama-server"
        ),
        Profile("lmstudio", "http://localhost:1234/v1", None, None, "schema"),
    ]
}


def config_path(environ: Mapping[str, str] = os.environ) -> Path:
    override = environ.get("TOOLCALL_CONFIG")
    if override:
        return Path(override)
    return Path(typer.get_app_dir("toolcall")) / "config.toml"


@dataclass(frozen=True)
class FileConfig:
    """What the TOML config file says: `[defaults]` and `[profiles.NAME]` tables."""

    defaults: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    path: Path | None = None


DEFAULT_KEYS = {"profile", "model", "strategy", "base_url"}
STRATEGIES = ("regex", "schema", "stream")


def load_config(path: Path) -> FileConfig:
    if not path.exists():
        return FileConfig(path=path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config {path} is not valid TOML: {error}") from None
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ConfigError(f"config {path}: [defaults] must be a table")
    unknown = sorted(set(defaults) - DEFAULT_KEYS) + sorted(set(data) - {"defaults", "profiles"})
    if unknown:
        raise ConfigError(
            f"config {path}: unknown setting(s) {', '.join(unknown)}; [defaults] takes "
            f"{', '.join(sorted(DEFAULT_KEYS))}, and profiles go in [profiles.NAME] tables"
        )
    for key, value in defaults.items():
        if not isinstance(value, str):
            raise ConfigError(f"config {path}: [defaults] {key} must be a string")
    tables = data.get("profiles", {})
    if not isinstance(tables, dict):
        raise ConfigError(f"config {path}: profiles must be [profiles.NAME] tables")
    profiles = {name: profile_from(name, table, path) for name, table in tables.items()}
    return FileConfig(defaults=defaults, profiles=profiles, path=path)


def profile_from(name: str, table: Any, path: Path) -> Profile:
    if not isinstance(table, dict) or not isinstance(table.get("base_url"), str):
        raise ConfigError(f"config {path}: profile {name!r} needs a base_url string")
    known = {"base_url", "key_env", "model", "strategy", "note"}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(
            f"config {path}: profile {name!r} has unknown keys {sorted(unknown)}; "
            f"allowed: {sorted(known)} (keys go in environment variables, named by key_env)"
        )
    return Profile(name=name, **{k: table[k] for k in known if k in table})


@dataclass(frozen=True)
class Resolved:
    """The settings a session is built from, each with where it came from."""

    model: str
    strategy: str
    base_url: str | None = None
    api_key: str | None = None
    profile: str | None = None
    sources: dict[str, str] = field(default_factory=dict)


def resolve(
    *,
    flags: Mapping[str, Any],
    environ: Mapping[str, str] = os.environ,
    config: FileConfig | None = None,
) -> Resolved:
    """Combine flags (None = not given), environment, config file and defaults."""
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

    model = setting("model", "TOOLCALL_MODEL", None if profile else "offline")
    if model is None:
        raise ConfigError(f"profile {profile_name!r} has no default model; give --model NAME")
    strategy = setting("strategy", "TOOLCALL_STRATEGY", "regex")
    if strategy not in STRATEGIES:
        where = sources.get("strategy", "")
        raise ConfigError(
            f"unknown strategy {strategy!r} (from {where}); choose one of {', '.join(STRATEGIES)}"
        )
    # A chosen profile names its own URL and key variable. OPENAI_API_KEY goes only where
    # OPENAI_BASE_URL (or the default OpenAI host) points, so an OpenAI key is never sent to a
    # server named by --base-url or a config file: that one needs --api-key.
    base_url = setting("base_url", None if profile else "OPENAI_BASE_URL", None)
    key_env = profile.key_env if profile else None
    if profile is None and openai_key_may_go_to(base_url, sources.get("base_url", "")):
        key_env = "OPENAI_API_KEY"
    api_key = pick("api_key", key_env)
    return Resolved(
        model=str(model),
        strategy=str(strategy),
        base_url=base_url,
        api_key=api_key,
        profile=profile.name if profile else None,
        sources=sources,
    )


def openai_key_may_go_to(base_url: str | None, source: str) -> bool:
    if base_url is None or source == "env OPENAI_BASE_URL":
        return True
    host = base_url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
    return host.lower() == "api.openai.com"


def find_profile(name: str, config: FileConfig) -> Profile:
    if name in config.profiles:
        return config.profiles[name]
    if name in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[name]
    known = sorted({*BUILTIN_PROFILES, *config.profiles})
    raise ConfigError(f"unknown profile {name!r}; known profiles: {', '.join(known)}")


def mask(secret: str | None) -> str:
    """A key as it may be shown: never more than its last 4 characters."""
    if not secret:
        return "(not set)"
    return "****" + secret[-4:] if len(secret) > 8 else "****"

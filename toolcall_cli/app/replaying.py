"""What a replay runs with: the options given, and where one is not given, what the recording was
made with (its header's settings: model, profile, strategy and modes, prompt style, --dag,
sampling and seed, the offline model's faults, the limits, a --system-prompt's text), so a bare
`toolcall replay T` reproduces the run.

What a trace never holds comes from the environment and the config file as for any run: the
API key, a base URL the recording masked, the connection timeouts. The tools are those
configured now.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_cli.app.options import (
    LIMIT_FIELDS,
    Allow,
    PromptStyle,
    SchemaMode,
    SessionOptions,
    StrategyName,
    StreamMode,
    one_of,
)
from toolcall_cli.models import LOCAL_MODELS

if TYPE_CHECKING:
    from toolcall_cli.trace import Trace

RECORDED_CHOICES: dict[str, Any] = {
    "strategy": StrategyName,
    "schema_mode": SchemaMode,
    "stream_mode": StreamMode,
    "prompt_style": PromptStyle,
    "allow": Allow,
}
"""Settings a header records as the value of a flag with a closed set of choices."""
RECORDED_LIMITS = tuple(LIMIT_FIELDS.values())
"""The header's limits that have a flag of the same name (`run_timeout` is `--timeout`)."""
RECORDED_NUMBERS = ("fault_rate", "max_parallel")
SAMPLING_KEYS = ("temperature", "top_p", "seed", "max_tokens")


def recorded_settings(recording: Trace) -> dict[str, Any]:
    """The header's settings; for a trace written before it had one, what its first run says."""
    if recording.header is not None:
        settings = recording.header.get("settings")
        return dict(settings) if isinstance(settings, dict) else {}
    started = next((r for r in recording.records if r["kind"] == "run_started"), {})
    return {key: started[key] for key in ("model", "strategy") if key in started}


def replay_options(
    options: SessionOptions, given: set[str], settings: Mapping[str, Any], path: Path
) -> SessionOptions:
    """The options, with each one the user did not give taken from the recording where it
    says. `given`: the options the user gave, by field name; `path`: the recording's file."""
    flags = options.flat()
    chosen = {name: value for name, value in recorded_flags(settings).items() if name not in given}
    model = chosen.get("model", flags["model"])
    # What the recording said of its own model does not carry over to another one: the
    # offline model's faults, a server's URL.
    if model != "offline" and "faults" not in given:
        chosen.pop("faults", None)
    if model in LOCAL_MODELS or "profile" in given:
        chosen.pop("base_url", None)
    if "base_url" in given:  # another endpoint: none of the recorded one's settings
        chosen.pop("profile", None)
    if model == "scripted" and "script" not in given:
        chosen["script"] = path  # the trace's own replies, played back as they were sent
    return options.replace(**chosen)


def recorded_system_prompt(settings: Mapping[str, Any], given: set[str]) -> str | None:
    """The recording's own system prompt, where --system-prompt names no other."""
    text = settings.get("system_prompt")
    return text if isinstance(text, str) and "system_prompt" not in given else None


def recorded_flags(settings: Mapping[str, Any]) -> dict[str, Any]:
    """What the recording was made with, as the options that would choose it."""
    chosen: dict[str, Any] = {}
    model = settings.get("model")
    if isinstance(model, str) and model:
        chosen["model"] = model
    if isinstance(settings.get("profile"), str):
        chosen["profile"] = settings["profile"]
    url = settings.get("base_url")
    # A masked URL would not reach the server; the configuration supplies that one.
    if isinstance(url, str) and "****" not in url:
        chosen["base_url"] = url
    chosen.update(recorded_choices(settings))
    sampling = settings.get("sampling")
    if isinstance(sampling, dict):
        chosen.update({key: sampling[key] for key in SAMPLING_KEYS if key in sampling})
    if isinstance(settings.get("dag"), bool):
        chosen["dag"] = settings["dag"]
    if isinstance(settings.get("faults"), list):
        chosen["faults"] = ",".join(map(str, settings["faults"])) or None
    chosen.update({name: settings[name] for name in RECORDED_NUMBERS if is_number(settings, name)})
    chosen.update(recorded_limits(settings.get("limits")))
    chosen.update(recorded_retrieval(settings.get("retrieval")))
    return chosen


def recorded_choices(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The strategy, its modes and the prompt style, where the recording names a known one."""
    return {
        name: settings[name]
        for name, kind in RECORDED_CHOICES.items()
        if one_of(kind, settings.get(name))
    }


def is_number(settings: Mapping[str, Any], name: str) -> bool:
    value = settings.get(name)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def recorded_retrieval(retrieval: Any) -> dict[str, Any]:
    """--retrieve and --retrieve-over as recorded: the same tools are then chosen again. The
    ranker is not carried over: an embed ranker's endpoint and model are not recorded."""
    if not isinstance(retrieval, dict):
        return {}
    return {
        name: retrieval[name]
        for name in ("retrieve", "retrieve_over")
        if isinstance(retrieval.get(name), int) and not isinstance(retrieval[name], bool)
    }


def recorded_limits(limits: Any) -> dict[str, Any]:
    if not isinstance(limits, dict):
        return {}
    chosen = {name: limits[name] for name in RECORDED_LIMITS if limits.get(name) is not None}
    if "max_repeated_rounds" not in limits and isinstance(limits.get("max_iterations"), int):
        # Recorded before repeats had their own limit: they counted only as failed rounds. A
        # limit past the run's iterations replays the run as the engine of the day ran it.
        chosen["max_repeated_rounds"] = limits["max_iterations"] + 1
    if limits.get("last_answer") is False:
        chosen["no_final_answer"] = True
    window = limits.get("context_window")
    if isinstance(window, dict) and window.get("source") == "--context-window":
        chosen["context_window"] = window.get("tokens")
    return chosen

"""What a replay runs with: the options given, and where one is not given, what the recording was
made with (its header's settings: model, strategy and modes, prompt style, --dag, sampling and
seed, the offline model's faults, the limits, a --system-prompt's text), so a bare
`toolcall replay T` reproduces the run. Each value taken from the recording is checked as its
flag would be: a trace may have been edited.

Nothing read from a trace grants a permission: a shared trace is anybody's text. What a tool may
do (--allow, --yes), which tools and tool servers there are, where the conversation and the
tools' results are sent (the base URL or profile) and the API key come from the replaying
user's own flags, environment and config file, as for any run.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_cli.app.errors import AppError
from toolcall_cli.app.options import (
    LIMIT_FIELDS,
    Grounding,
    PromptStyle,
    SchemaMode,
    SessionOptions,
    StrategyName,
    StreamMode,
    one_of,
)
from toolcall_cli.config import (
    context_window_problem,
    limit_problem,
    retrieval_problem,
    sampling_problem,
)

if TYPE_CHECKING:
    from toolcall_cli.trace import Trace

RECORDED_CHOICES: dict[str, Any] = {
    "strategy": StrategyName,
    "schema_mode": SchemaMode,
    "stream_mode": StreamMode,
    "prompt_style": PromptStyle,
}
"""Settings a header records as the value of a flag with a closed set of choices. Not `allow`:
a trace never raises what a tool may do."""
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
    options: SessionOptions,
    given: set[str],
    settings: Mapping[str, Any],
    path: Path,
    header_line: int | None = None,
) -> SessionOptions:
    """The options, with each one the user did not give taken from the recording where it
    says. `given`: the options the user gave, by field name; `path`: the recording's file, and
    `header_line` the line of its header (for the error when a recorded value is no good)."""
    flags = options.flat()
    chosen = {name: value for name, value in recorded_flags(settings).items() if name not in given}
    model = chosen.get("model", flags["model"])
    # What the recording said of its own model does not carry over to another one: the
    # offline model's faults.
    if model != "offline" and "faults" not in given:
        chosen.pop("faults", None)
    check_recorded(chosen, path, header_line)
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
    # Never the endpoint (the base URL or a profile): whoever answers there drives the user's
    # tools and reads their results, and a profile would spend whichever key it names.
    chosen.update(recorded_choices(settings))
    sampling = settings.get("sampling")
    if isinstance(sampling, dict):
        chosen.update({key: sampling[key] for key in SAMPLING_KEYS if key in sampling})
    if isinstance(settings.get("dag"), bool):
        chosen["dag"] = settings["dag"]
    if isinstance(settings.get("faults"), list):
        chosen["faults"] = ",".join(map(str, settings["faults"])) or None
    chosen.update(
        {name: settings[name] for name in RECORDED_NUMBERS if is_number(settings.get(name))}
    )
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


def is_number(value: Any) -> bool:
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
    # Recorded before --grounding: the engine of the day checked no figures.
    chosen["grounding"] = limits.get("grounding", "off")
    window = limits.get("context_window")
    if isinstance(window, dict) and window.get("source") == "--context-window":
        chosen["context_window"] = window.get("tokens")
    return chosen


def check_recorded(chosen: Mapping[str, Any], path: Path, header_line: int | None) -> None:
    """Each value taken from the recording checked as its flag would be (a trace may have been
    edited): an AppError naming the trace's header line when one cannot be used."""
    for name, problem_of in RECORDED_CHECKS.items():
        value = chosen.get(name)
        problem = None if value is None else problem_of(value)
        if problem:
            flag = "--timeout" if name == "run_timeout" else "--" + name.replace("_", "-")
            where = f"{path} line {header_line}" if header_line is not None else str(path)
            raise AppError(
                f"{where}: the recorded {flag} {problem}; give {flag} to replay it with another"
            )


def _between(low: float, high: float) -> Callable[[Any], str | None]:
    def problem(value: Any) -> str | None:
        within = is_number(value) and low <= value <= high
        return None if within else f"must be from {low:g} to {high:g}, not {value!r}"

    return problem


def _faults_problem(names: Any) -> str | None:
    from toolcall_cli.offline import UnknownFault, make_faults

    try:
        make_faults([str(names)])
    except UnknownFault as error:
        return f"names an {error}"
    return None


def _grounding_problem(value: Any) -> str | None:
    if one_of(Grounding, value):
        return None
    return f"must be one of {', '.join(typing.get_args(Grounding))}, not {value!r}"


RECORDED_CHECKS: dict[str, Callable[[Any], str | None]] = {
    **{
        name: functools.partial(limit_problem, "timeout" if name == "run_timeout" else name)
        for name in RECORDED_LIMITS
    },
    **{name: functools.partial(sampling_problem, name) for name in SAMPLING_KEYS},
    **{name: functools.partial(retrieval_problem, name) for name in ("retrieve", "retrieve_over")},
    "context_window": context_window_problem,
    "max_parallel": _between(1, 64),
    "fault_rate": _between(0, 1),
    "faults": _faults_problem,
    "grounding": _grounding_problem,
}
"""How each value taken from a recording is checked: as its flag, or the config file, checks it."""

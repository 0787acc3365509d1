"""Which model a run gets: the offline model, a scripted one, or an OpenAI-compatible endpoint,
from the settings the flags, environment and config file resolved to."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolcall_cli.keys import base_url_problem, display_url, key_problem
from toolcall_cli.models import LOCAL_MODELS, ModelConfigError
from toolcall_cli.models.base import MAX_LINE_BYTES, MAX_RESPONSE_BYTES, REQUEST_TIMEOUT, Model
from toolcall_cli.models.paced import PacedModel
from toolcall_cli.models.scripted import load_script, read_script
from toolcall_cli.wire import ContextWindow


@dataclass(frozen=True)
class ModelChoice:
    name: str = "offline"
    seed: int = 0
    script: Path | None = None
    base_url: str | None = None
    api_key: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 2
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_line_bytes: int = MAX_LINE_BYTES
    request_timeout: float = REQUEST_TIMEOUT
    key_note: str | None = None
    """Why a key variable that is set is not sent to this endpoint (see config.resolve)."""
    faults: tuple[str, ...] = ()
    """Offline model only: the kinds of misbehaviour to inject (see `toolcall faults`)."""
    fault_rate: float = 1.0
    context_window: ContextWindow | None = None
    """The window the user gave (--context-window, or the profile's); None lets the model's
    server say."""
    profile: str | None = None
    """The profile the endpoint came from, if any (recorded in traces)."""
    strategy_given: bool = True
    """False when no flag, variable, profile or config chose the strategy or the schema mode:
    then a server whose best strategy the bench measured may have it (app/_measured.py)."""
    schema_mode_given: bool = True
    """False when nothing chose the schema mode: then a model chat's /model switches to runs
    schema in the mode its server gives it (app/_measured.py), not in a mode nobody chose."""

    def __repr__(self) -> str:  # the key (and URL credentials) must never leak through a repr
        shown = None
        if self.base_url is not None:
            shown = display_url(self.base_url)
        return f"ModelChoice(name={self.name!r}, base_url={shown!r})"


def make_model(choice: ModelChoice, pace: float | None = None) -> Model:
    """The model a choice names; local models' streams are paced for the live view."""
    model = get_model(choice)
    if pace and choice.name in LOCAL_MODELS:
        return PacedModel(model, pace)
    return model


def idle_faults_note(
    faults: Sequence[str], strategy: str, schema_mode: str | None, stream_mode: str
) -> tuple[str, ...]:
    """A note naming the --faults this strategy's wire gives no chance to fire (no tags to fence
    or split in native calls, no stream to split with regex): else a clean run would read as
    one that survived them."""
    if not faults:
        return ()
    from toolcall_cli.offline import make_faults

    native = "json" if schema_mode == "json" else "native"
    shape = native if strategy == "schema" or stream_mode == "native" else "text"
    streamed_text = strategy == "stream" and shape == "text"
    idle = [
        fault.kind
        for fault in make_faults(faults)
        if shape not in fault.shapes or (fault.kind == "split_tags" and not streamed_text)
    ]
    if not idle:
        return ()
    modes = {"schema": f" ({schema_mode or 'tools'})", "stream": f" ({stream_mode})"}
    return (
        f"--faults {', '.join(idle)}: cannot happen with strategy {strategy}"
        f"{modes.get(strategy, '')}, so the run shows none of it",
    )


def get_model(choice: ModelChoice) -> Model:
    if choice.faults and choice.name != "offline":
        raise ModelConfigError("--faults works with the offline model only (--model offline)")
    if choice.name == "offline":
        from toolcall_cli.offline import OfflineModel, UnknownFault, make_faults

        try:
            faults = make_faults(choice.faults, rate=choice.fault_rate)
        except (UnknownFault, ValueError) as error:
            raise ModelConfigError(str(error)) from None
        return OfflineModel(seed=choice.seed, faults=faults)
    if choice.name == "scripted":
        return scripted(choice.script)
    if not choice.base_url:
        raise ModelConfigError(
            f"model {choice.name!r} needs an endpoint: give --base-url URL or --profile NAME "
            "(or use --model offline)"
        )
    from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel

    check_base_url(choice.base_url)
    problem = key_problem(choice.api_key) if choice.api_key else None
    if problem:
        raise ModelConfigError(f"the API key {problem}")
    return OpenAICompatModel(
        Endpoint(
            base_url=choice.base_url,
            model=choice.name,
            api_key=choice.api_key,
            connect_timeout=choice.connect_timeout,
            read_timeout=choice.read_timeout,
            max_retries=choice.max_retries,
            max_response_bytes=choice.max_response_bytes,
            max_line_bytes=choice.max_line_bytes,
            request_timeout=choice.request_timeout,
            key_note=choice.key_note,
        ),
        probe_timeout=probe_timeout(os.environ),
    )


PROBE_TIMEOUT_ENV = "TOOLCALL_PROBE_TIMEOUT"


def probe_timeout(environ: Mapping[str, str]) -> float:
    """How long the one side request to the server (/props, /api/show: its context window and
    kind) may take: 3 s, or $TOOLCALL_PROBE_TIMEOUT for a server (or a machine) slower than that.
    A probe that takes longer only leaves the window and the kind unknown."""
    from toolcall_cli.models.openai_compat import PROBE_TIMEOUT

    text = environ.get(PROBE_TIMEOUT_ENV, "").strip()
    if not text:
        return PROBE_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= 3600:
        raise ModelConfigError(
            f"${PROBE_TIMEOUT_ENV} must be seconds above 0 (at most 3600), not {text!r}"
        )
    return seconds


def scripted(script: Path | None) -> Model:
    """The scripted model for `--script FILE`: a script of replies, or a trace whose recorded
    replies play back as they were sent."""
    path, data = read_script(script)
    from toolcall_cli.trace.script import is_trace

    if is_trace(path, data):
        from toolcall_cli.trace import TraceError
        from toolcall_cli.trace.script import script_from_trace

        try:
            return script_from_trace(path, data)
        except TraceError as error:
            raise ModelConfigError(f"bad script: {error}") from None
    return load_script(path, data)


def check_base_url(url: str, where: str = "--base-url") -> None:
    """A base URL that cannot be used is a usage error, not a connection failure. `where` names
    the setting it came from (the flag, $OPENAI_BASE_URL, a profile, the config file)."""
    problem = base_url_problem(url)
    if problem:
        raise ModelConfigError(f"{where} {display_url(url)!r} {problem}")

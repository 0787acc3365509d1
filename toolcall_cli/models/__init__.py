"""Models: the embedded offline model, a scripted replay model, and OpenAI-compatible endpoints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolcall_cli.models.base import Model

LOCAL_MODELS = ("offline", "scripted")


class ModelConfigError(ValueError):
    """The user asked for a model that cannot be set up (a usage error, exit code 2)."""


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
    faults: tuple[str, ...] = ()
    """Offline model only: the kinds of misbehaviour to inject (see `toolcall faults`)."""
    fault_rate: float = 1.0

    def __repr__(self) -> str:  # the key must never leak through a repr
        return f"ModelChoice(name={self.name!r}, base_url={self.base_url!r})"


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
        return scripted_model(choice.script)
    if not choice.base_url:
        raise ModelConfigError(
            f"model {choice.name!r} needs an endpoint: give --base-url URL or --profile NAME "
            "(or use --model offline)"
        )
    from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel

    check_base_url(choice.base_url)
    return OpenAICompatModel(
        Endpoint(
            base_url=choice.base_url,
            model=choice.name,
            api_key=choice.api_key,
            connect_timeout=choice.connect_timeout,
            read_timeout=choice.read_timeout,
            max_retries=choice.max_retries,
        )
    )


def check_base_url(url: str) -> None:
    """A base URL must be http(s) with a host and a valid port: anything else is a usage error,
    not a connection failure."""
    import httpx

    from toolcall_cli.models.openai_compat import display_url

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        shown = display_url(url)
        raise ModelConfigError(f"--base-url {shown!r} is not a valid URL: {error}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ModelConfigError(
            f"--base-url {display_url(url)!r} must be an http(s) URL, e.g. http://localhost:11434/v1"
        )
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ModelConfigError(f"--base-url {display_url(url)!r} has an invalid port {parsed.port}")


def scripted_model(script: Path | None) -> Model:
    from toolcall_cli.models.scripted import ScriptedModel

    if script is None:
        raise ModelConfigError(
            "--model scripted needs --script FILE (a JSON list or JSONL of replies)"
        )
    try:
        model = ScriptedModel.from_file(script)
    except (OSError, ValueError) as error:
        raise ModelConfigError(f"cannot read script {script}: {error}") from None
    if not model.replies:
        raise ModelConfigError(f"script {script} holds no replies")
    return model

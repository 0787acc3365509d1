"""One request answered by the offline model, as a server answers it: the objects to send (one
`chat.completion`, or the chunks of a stream, both written by the wire writer the offline model
uses) and which faults fired on the way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from toolcall_cli.offline import OfflineModel, make_faults
from toolcall_cli.wire import ModelRequest

MODEL_ID = "toolcall-offline"
"""The one model `/v1/models` lists. Any name is answered (as llama-server does): an SDK that
insists on its own default model name still gets the offline model."""


@dataclass(frozen=True)
class ServeSettings:
    """How the served model behaves: `--seed`, `--faults`, `--fault-rate`."""

    seed: int = 0
    faults: tuple[str, ...] = ()
    fault_rate: float = 1.0


@dataclass(frozen=True)
class Answer:
    """What goes back for one request."""

    objects: tuple[dict[str, Any], ...]
    """One `chat.completion`; or, for `stream: true`, the `chat.completion.chunk`s in order."""
    faults: tuple[str, ...] = ()
    """The kinds of fault that changed this reply."""
    note: str = ""
    """What the server changed in the request before the model read it, if anything."""


class FaultWatch:
    """A fault passed through to the offline model, noting when it fires. A fault that fires
    hands back a new decision or output, one that does not returns what it was given (the
    offline model's FaultBase does exactly that), so identity tells which faults fired without
    the model having to say."""

    def __init__(self, fault: Any, fired: list[str]) -> None:
        self._fault = fault
        self._fired = fired

    def alter_decision(self, decision: Any, context: Any) -> Any:
        return self._noted(decision, self._fault.alter_decision(decision, context))

    def alter_output(self, output: Any, context: Any) -> Any:
        return self._noted(output, self._fault.alter_output(output, context))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fault, name)

    def _noted(self, given: Any, altered: Any) -> Any:
        if altered is not given and self._fault.kind not in self._fired:
            self._fired.append(self._fault.kind)
        return altered


class Answerer:
    """Answers requests with a fresh offline model each (cheap: it holds only its seed and its
    faults), so that concurrent requests never share what fired."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        # Checked here, once: an unknown fault name is the user's mistake at start-up.
        self._faults: Sequence[Any] = make_faults(settings.faults, rate=settings.fault_rate)

    def answer(self, body: dict[str, Any]) -> Answer:
        fired: list[str] = []
        watched = [FaultWatch(fault, fired) for fault in self._faults]
        model = OfflineModel(seed=request_seed(body, self.settings.seed), faults=cast(Any, watched))
        read, note = as_the_model_reads(body)
        objects = tuple(model.stream(ModelRequest(read)))
        return Answer(objects, tuple(fired), note)


def request_seed(body: dict[str, Any], default: int) -> int:
    """A request's own `seed` seeds the model, as `toolcall run --seed` does; else `--seed`."""
    seed = body.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else default


def as_the_model_reads(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The body the model reads, and a note when it differs: `tool_choice` is the server's to
    enforce, as vLLM does: with "none" the model is shown no tools, with a named function only
    that one (and a call is required)."""
    choice = body.get("tool_choice")
    if choice == "none":
        read = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
        return read, "tool_choice none: the model was shown no tools"
    if isinstance(choice, dict):
        name = choice["function"]["name"]
        offered = [t for t in body["tools"] if t["function"]["name"] == name]
        read = {**body, "tools": offered, "tool_choice": "required"}
        return read, f"tool_choice {name}: the model was shown that tool only"
    return body, ""

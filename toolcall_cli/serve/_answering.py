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
    """What the request binds the model to (tool_choice, parallel_tool_calls), if anything."""


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
        objects = tuple(model.stream(ModelRequest(body)))
        return Answer(objects, tuple(fired), asked_of_the_model(body))


def request_seed(body: dict[str, Any], default: int) -> int:
    """A request's own `seed` seeds the model, as `toolcall run --seed` does; else `--seed`."""
    seed = body.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else default


def asked_of_the_model(body: dict[str, Any]) -> str:
    """What the request binds the model to, for the log. The model reads it in the body, as a
    server's model is held to it: "none" makes no call, "required" or a named function one,
    `parallel_tool_calls: false` one at most (and `max_tokens` cuts the reply: finish "length")."""
    choice, said = body.get("tool_choice"), []
    if isinstance(choice, dict):
        said.append(f"tool_choice {choice['function']['name']}: a call to it")
    elif choice in ("none", "required"):
        said.append(f"tool_choice {choice}: {'no call' if choice == 'none' else 'a call'}")
    if body.get("parallel_tool_calls") is False:
        said.append("parallel_tool_calls false: one call at most")
    return "; ".join(said)

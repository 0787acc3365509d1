"""The embedded offline model (the default) and the faults it can be asked to make.

A model like any other: it reads only the request body and answers in the chat-completions
wire format. Everything else in this package is private.

Faults make it misbehave the way real models do, so that each of the engine's recovery paths can
be seen (`--faults single_quotes,wrong_param --fault-rate 0.5`). Each kind says which wire shapes
it applies to: "text" (the tag protocol of regex and stream tags), "native" (`tool_calls`) or
"json" (JSON mode). It fires with probability `rate` on its first opportunity in a conversation.
When the engine reports the mistake back, the model corrects itself with probability 0.8, else
makes it once more, never a third time; a mistake the engine fixes silently (json-repair,
coercion) is made once. All draws come from the request's digest, so a seed and a request always
give the same reply."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall_cli.offline._bad_writing import CUTTING, WRITING
from toolcall_cli.offline._model import FaultBase, OfflineModel
from toolcall_cli.offline._wrong_calls import DECIDING

__all__ = ["FAULT_KINDS", "OfflineModel", "UnknownFault", "make_faults"]

_KINDS: dict[str, type[FaultBase]] = {k.kind: k for k in (*DECIDING, *WRITING, *CUTTING)}

FAULT_KINDS: dict[str, str] = {kind: fault.about for kind, fault in _KINDS.items()}
"""Kind name (as `--faults` takes it) → one line. The order is the order faults are applied:
what the model decides, then how the JSON is written, then framing, cutting and streaming."""


class UnknownFault(ValueError):
    """A fault name that is not one of FAULT_KINDS."""


def make_faults(names: Sequence[str], rate: float = 1.0) -> list[FaultBase]:
    """The faults called `names` (a name may also be a comma-separated list), in the order they
    apply. `rate` is the chance that each fires on a turn where it can."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault rate must be between 0 and 1, got {rate:g}")
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in FAULT_KINDS]
    if unknown:
        raise UnknownFault(
            f"unknown fault {', '.join(map(repr, unknown))}; choose from {', '.join(FAULT_KINDS)}"
        )
    return [fault(rate) for kind, fault in _KINDS.items() if kind in wanted]

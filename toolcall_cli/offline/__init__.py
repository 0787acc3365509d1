"""The embedded offline model (the default) and the faults it can be asked to make.

A model like any other: it reads only the request body and answers in the chat-completions wire
format. Faults make it misbehave as real models do, so that each of the engine's recovery paths
can be seen (`--faults single_quotes,wrong_param --fault-rate 0.5`): "text" faults apply to the
tag protocol, "native" to `tool_calls`, "json" to JSON mode. All draws come from the request's
digest, so a seed and a request always give the same reply. Everything else here is private."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall_cli.offline._faults import KINDS, FaultBase
from toolcall_cli.offline._model import OfflineModel

__all__ = ["FAULT_KINDS", "OfflineModel", "UnknownFault", "make_faults"]

FAULT_KINDS: dict[str, str] = {kind.kind: kind.about for kind in KINDS}
"""Kind name (as `--faults` takes it) → one line, in the order faults apply."""


class UnknownFault(ValueError):
    """A fault name that is not one of FAULT_KINDS."""


def make_faults(names: Sequence[str], rate: float = 1.0) -> list[FaultBase]:
    """The faults called `names` (each may be a comma-separated list), in the order they apply;
    each fires with probability `rate` where it can."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault rate must be between 0 and 1, got {rate:g}")
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in FAULT_KINDS]
    if unknown:
        raise UnknownFault(
            f"unknown fault {', '.join(map(repr, unknown))}; choose from {', '.join(FAULT_KINDS)}"
        )
    return [kind(rate) for kind in KINDS if kind.kind in wanted]

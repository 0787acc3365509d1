"""The embedded offline model (the default), a model like any other: it reads only the request
body and answers in the chat-completions wire format, deterministic for a seed and a request;
and the faults it can be asked to make (`--faults single_quotes,wrong_param --fault-rate 0.5`)."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall_cli.offline._faults import ABOUT, Fault
from toolcall_cli.offline._model import OfflineModel

__all__ = ["FAULT_KINDS", "OfflineModel", "UnknownFault", "make_faults"]

FAULT_KINDS: dict[str, str] = dict(ABOUT)
"""Kind name (as `--faults` takes it) → one line, in the order faults apply."""


class UnknownFault(ValueError):
    """A fault name that is not one of FAULT_KINDS."""


def make_faults(names: Sequence[str], rate: float = 1.0) -> list[Fault]:
    """The faults called `names` (each may be a comma-separated list), in the order they apply;
    each fires with probability `rate` where it can."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault rate must be between 0 and 1, got {rate:g}")
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = ", ".join(repr(n) for n in wanted if n not in ABOUT)
    if unknown:
        raise UnknownFault(f"unknown fault {unknown}; choose from {', '.join(ABOUT)}")
    return [Fault(kind, rate) for kind in ABOUT if kind in wanted]

"""The embedded offline model, a model like any other: it reads only the request body and answers
deterministically (for a seed) in its wire format, with the faults asked. Public: `__all__`."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall_cli.offline._faults import FAULT_KINDS, Fault
from toolcall_cli.offline._model import OfflineModel

__all__ = ["FAULT_KINDS", "OfflineModel", "UnknownFault", "make_faults"]


class UnknownFault(ValueError):
    """A fault name that is not one of FAULT_KINDS."""


def make_faults(names: Sequence[str], rate: float = 1.0) -> list[Fault]:
    """The faults called `names` (each may be a comma-separated list), in the order they apply;
    each fires with probability `rate` where it can."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"fault rate must be between 0 and 1, got {rate:g}")
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    unknown = ", ".join(repr(n) for n in wanted if n not in FAULT_KINDS)
    if unknown:
        raise UnknownFault(f"unknown fault {unknown}; choose from {', '.join(FAULT_KINDS)}")
    return [Fault(kind, rate) for kind in FAULT_KINDS if kind in wanted]

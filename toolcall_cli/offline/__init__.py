"""The embedded offline model (the default) and the faults it can be asked to make.

A model like any other: it reads only the request body and answers in the chat-completions
wire format. Everything else in this package is private."""

from __future__ import annotations

from toolcall_cli.offline._faults import FAULT_KINDS, UnknownFault, make_faults
from toolcall_cli.offline._model import OfflineModel

__all__ = ["FAULT_KINDS", "OfflineModel", "UnknownFault", "make_faults"]

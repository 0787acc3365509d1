"""Models: the scripted replay model and OpenAI-compatible endpoints (the embedded offline model
is a package of its own). Which one a run gets is decided by app/_model_choice.py.

Public here: `LOCAL_MODELS`, `ModelConfigError`, and the modules `base` (the Model protocol, all
the loop knows), `openai_compat`, `scripted`, `paced` and `embeddings`. Private: the request
reader `_conversation` (which offline/ also reads: the one declared edge), `_redact`, `_window`,
`_partner` (the test partner that repairs a call only from an error's words), and `_body`, whose
bounded HTTP reads (`Deadline`, `send_streamed`, `read_body`) are exported here for the request
kata."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcall_cli.models._body import Deadline, read_body, send_streamed

__all__ = ["LOCAL_MODELS", "Deadline", "ModelConfigError", "read_body", "send_streamed"]

LOCAL_MODELS = ("offline", "scripted")
"""Models that run in this process, without an endpoint."""


class ModelConfigError(ValueError):
    """The user asked for a model that cannot be set up (a usage error, exit code 2)."""


_BOUNDED_READS = ("Deadline", "read_body", "send_streamed")


def __getattr__(name: str) -> Any:
    # Imported on first use: they need httpx, which a run on the offline model never loads.
    if name not in _BOUNDED_READS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("toolcall_cli.models._body"), name)

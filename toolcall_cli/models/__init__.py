"""Models: the scripted replay model and OpenAI-compatible endpoints (the embedded offline model
is a package of its own). Which one a run gets is decided by app/model_choice.py."""

from __future__ import annotations

LOCAL_MODELS = ("offline", "scripted")
"""Models that run in this process, without an endpoint."""


class ModelConfigError(ValueError):
    """The user asked for a model that cannot be set up (a usage error, exit code 2)."""

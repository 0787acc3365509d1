"""toolcall: watch, learn and debug LLM tool use (function calling) live in the terminal."""

from __future__ import annotations

from toolcall_cli.tools.registry import tool

__version__ = "0.1.0"

__all__ = ["__version__", "tool"]

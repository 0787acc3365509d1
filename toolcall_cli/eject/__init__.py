"""The whiteboard answers `toolcall eject` prints: for each strategy a minimal standalone
tool-use loop (at most 90 lines, the standard library and httpx), kept here as files of the
package. They are never imported: each is a program of its own, to read and to run against
`toolcall serve` or any OpenAI-compatible endpoint.

Public here: `program` and `PROGRAMS`, and the three files by name (`regex_loop.py`,
`schema_loop.py`, `stream_loop.py`), which is why they keep public names."""

from __future__ import annotations

from importlib import resources

PROGRAMS = {"regex": "regex_loop.py", "schema": "schema_loop.py", "stream": "stream_loop.py"}
"""Strategy → the file of its program."""


def program(strategy: str) -> str:
    """The source of the strategy's program."""
    return resources.files(__name__).joinpath(PROGRAMS[strategy]).read_text(encoding="utf-8")

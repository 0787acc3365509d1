"""Katas: practise writing a tool-use engine by hand, one layer at a time, graded on built-in
cases, the offline model's faults and real models' outputs.

`toolcall kata new NAME` writes a starter file, `kata check FILE` runs it in a sandboxed
process against the kata's battery, `kata solution NAME` prints the reference solution
(`--short`: the whiteboard-sized one), and `kata interview` runs a timed mock interview
through request, parse and loop.

Public here: the names in `__all__`: the catalogue, starter and solution texts, the sandboxed
check, the battery's case sources, and the score history (read on first use: it needs the state
directory). `solutions/` holds the reference files handed to users, never imported. Every other
module is private."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from toolcall_cli.kata._battery import SOURCES
from toolcall_cli.kata._catalog import KATAS, NAMES, Kata, UnknownKata, find_kata
from toolcall_cli.kata._conformance import DIR_VARIABLE, conformance_dir
from toolcall_cli.kata._sandbox import CaseResult, CheckRun, Limits, run_check
from toolcall_cli.kata._starter import (
    Header,
    read_header,
    short_text,
    solution_text,
    starter_text,
)

if TYPE_CHECKING:
    from toolcall_cli.kata._scores import (
        Score,
        append_history,
        best_scores,
        duration,
        record_score,
    )

__all__ = [
    "DIR_VARIABLE",
    "KATAS",
    "NAMES",
    "SOURCES",
    "CaseResult",
    "CheckRun",
    "Header",
    "Kata",
    "Limits",
    "Score",
    "UnknownKata",
    "append_history",
    "best_scores",
    "conformance_dir",
    "duration",
    "find_kata",
    "read_header",
    "record_score",
    "run_check",
    "short_text",
    "solution_text",
    "starter_text",
]

_SCORE_HISTORY = ("Score", "append_history", "best_scores", "duration", "record_score")


def __getattr__(name: str) -> Any:
    # The score history is imported on first use: it finds the state directory through
    # platformdirs, which a kata check's sandboxed children never need.
    if name not in _SCORE_HISTORY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("toolcall_cli.kata._scores"), name)

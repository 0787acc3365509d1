"""Katas: practise writing a tool-use engine by hand, one layer at a time, graded on built-in
cases, the offline model's faults and real models' outputs.

`toolcall kata new NAME` writes a starter file, `kata check FILE` runs it in a sandboxed
process against the kata's battery, `kata solution NAME` prints the reference solution
(`--short`: the whiteboard-sized one), and `kata interview` runs a timed mock interview
through request, parse and loop."""

from __future__ import annotations

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

__all__ = [
    "DIR_VARIABLE",
    "KATAS",
    "NAMES",
    "CaseResult",
    "CheckRun",
    "Header",
    "Kata",
    "Limits",
    "UnknownKata",
    "conformance_dir",
    "find_kata",
    "read_header",
    "run_check",
    "short_text",
    "solution_text",
    "starter_text",
]

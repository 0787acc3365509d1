"""The real model outputs the parser tests read: the repository's own, and an outside corpus.

- **Own**: toolcall_cli/data/real_outputs.jsonl, replies a real model gave toolcall's
  strategies in this project's recordings (bench/results, made into cases by
  bench/make_real_outputs.py; see toolcall_cli/data/README.md). Always there, so every clone
  runs the tests over them (and the katas grade with them).
- **Outside** (an extra): a folder of real outputs and streams copied from public test suites,
  read only when TOOLCALL_CONFORMANCE_DIR names it. Named, a file missing from it fails the
  tests that read it (a moved folder can never turn them into silent skips); not named, the
  tests that read only it are left out of the run (conftest says how many, in the header).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolcall_cli.kata._conformance import OWN_OUTPUTS

DIR_VARIABLE = "TOOLCALL_CONFORMANCE_DIR"
OWN_CORPUS = OWN_OUTPUTS
OUTSIDE_NAMED = os.environ.get(DIR_VARIABLE, "")
OUTSIDE_DIR = Path(OUTSIDE_NAMED) if OUTSIDE_NAMED else None
MISSING_MARK = "conformance_missing"
"""The mark (`pytest.mark.conformance_missing`) of a test whose data is missing from the
folder TOOLCALL_CONFORMANCE_DIR names; conftest fails such a test."""
OUTSIDE_MARK = "outside_corpus"
"""The mark of a test that reads only the outside corpus, which is not named: conftest leaves
it out of the run (deselected, not skipped: nothing the repository needs is missing)."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def own_cases() -> list[dict[str, Any]]:
    """The repository's own real outputs (toolcall_cli/data/real_outputs.jsonl)."""
    return read_jsonl(OWN_CORPUS)


def path_of(name: str) -> Path | None:
    return OUTSIDE_DIR / name if OUTSIDE_DIR is not None else None


def missing(name: str) -> str | None:
    """Why the outside corpus's `name` cannot be read; None when it is there."""
    path = path_of(name)
    if path is None:
        return f"{DIR_VARIABLE} names no outside corpus"
    if path.is_file():
        return None
    return f"outside corpus file {path} not found ({DIR_VARIABLE} names {OUTSIDE_DIR})"


def cases(name: str) -> list[dict[str, Any]]:
    """The records of one of the outside corpus's JSONL files; none when it is not there."""
    path = path_of(name)
    if path is None or missing(name):
        return []
    return read_jsonl(path)


def needs(*names: str) -> pytest.MarkDecorator:
    """The mark for a test that reads the outside corpus's `names`: nothing when they are
    there; left out of the run when no corpus is named; a failure when a named one lacks them."""
    if OUTSIDE_DIR is None:
        return pytest.mark.outside_corpus  # OUTSIDE_MARK
    reasons = [reason for name in names if (reason := missing(name))]
    if reasons:
        return pytest.mark.conformance_missing("; ".join(reasons))  # MISSING_MARK
    return pytest.mark.conformance


def params(name: str, records: list[dict[str, Any]] | None = None) -> list[Any]:
    """Parameters for a test over the outside corpus's cases of `name` (or `records` drawn
    from them). Without them, one parameter marked by `needs(name)`, so the test is left out
    of the run, or fails saying why, rather than vanishing."""
    if missing(name):
        return [pytest.param(None, id="outside", marks=needs(name))]
    chosen = cases(name) if records is None else records
    return [pytest.param(case, id=f"outside-{case['id']}") for case in chosen]


def real_outputs(keep: Any = None) -> list[Any]:
    """Parameters for a test over every real output: the repository's own, and the outside
    corpus's corpus.jsonl when it is named. `keep(case)` chooses among them."""
    own = [c for c in own_cases() if keep is None or keep(c)]
    found = [pytest.param(case, id=str(case["id"])) for case in own]
    if OUTSIDE_DIR is None:
        return found
    outside = [c for c in cases("corpus.jsonl") if keep is None or keep(c)]
    return found + params("corpus.jsonl", outside)

"""The conformance data: real model outputs and streams from public test suites, kept outside
the repository in ../shared/conformance (or wherever TOOLCALL_CONFORMANCE_DIR points).

A clone without it skips the tests that read it, saying where the files were looked for and
how to point at them. CI has the data beside the repository and sets
TOOLCALL_REQUIRE_CONFORMANCE=1: there a missing file fails those tests instead, so a moved
folder can never turn them into silent skips.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

DIR_VARIABLE = "TOOLCALL_CONFORMANCE_DIR"
REQUIRE_VARIABLE = "TOOLCALL_REQUIRE_CONFORMANCE"
CONFORMANCE_DIR = Path(
    os.environ.get(DIR_VARIABLE)
    or Path(__file__).resolve().parents[1].parent / "shared" / "conformance"
)
MISSING_MARK = "conformance_missing"
"""The mark (`pytest.mark.conformance_missing`) of a test whose data is missing where it is
required; conftest fails such a test."""


def required() -> bool:
    return os.environ.get(REQUIRE_VARIABLE, "") not in ("", "0")


def path_of(name: str) -> Path:
    return CONFORMANCE_DIR / name


def missing(name: str) -> str | None:
    """Why `name` cannot be read, with how to get it; None when it is there."""
    path = path_of(name)
    if path.is_file():
        return None
    return (
        f"conformance data {path} not found: these tests read the shared conformance corpus, "
        f"expected in ../shared/conformance beside the repository (where CI has it); put it "
        f"there, or set {DIR_VARIABLE} to the folder holding {name}"
    )


def cases(name: str) -> list[dict[str, Any]]:
    """The records of a JSONL file, one per line; none when the file is missing."""
    if missing(name):
        return []
    text = path_of(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def needs(*names: str) -> pytest.MarkDecorator:
    """The mark for a test that reads `names`: nothing when they are there; otherwise a skip
    saying how to get them, or under TOOLCALL_REQUIRE_CONFORMANCE=1 a failure."""
    reasons = [reason for name in names if (reason := missing(name))]
    if not reasons:
        return pytest.mark.conformance
    if required():
        return pytest.mark.conformance_missing("; ".join(reasons))
    return pytest.mark.skip(reason="; ".join(reasons))


def params(name: str, records: list[dict[str, Any]] | None = None) -> list[Any]:
    """Parameters for a test over the cases of `name` (or `records` drawn from them), marked
    with `needs(name)`. A missing file still gives one parameter, so the test is reported as
    skipped (or failed) with the reason rather than vanishing from the run."""
    if missing(name):
        return [pytest.param(None, id="missing", marks=needs(name))]
    chosen = cases(name) if records is None else records
    return [pytest.param(case, id=str(case["id"])) for case in chosen]

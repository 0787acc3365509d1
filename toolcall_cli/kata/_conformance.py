"""The optional corpus of real model outputs from public test suites (wherever
TOOLCALL_CONFORMANCE_DIR or --conformance points, else beside the repository): which of them fit
a kata, or why none are used."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DIR_VARIABLE = "TOOLCALL_CONFORMANCE_DIR"
CORPUS = "corpus.jsonl"
STREAMS = "sse_streams.jsonl"

OUTSIDE_THE_RULES = frozenset({"alt_tag", "array_payload", "unescaped_quotes"})
"""Corpus categories the katas' rules leave out: tags other than <tool_call>, a JSON list of
calls in one tag, and quotes left unescaped inside a string (repairing those safely needs the
tool's schema: they are not one of the three slips the katas repair)."""

DECIDED_OTHERWISE: dict[str, str] = {
    "vllm-hermes-invalid-json-missing-brace": "a reply cut off inside a call is an error for "
    "the model, not display text",
    "sglang-hermes-not-json": "a <tool_call> that holds no call is an error for the model; "
    "its markup is not display text",
    "aisdk-totally-broken": "a <tool_call> that holds no call is an error for the model; its "
    "markup is not display text",
    "llamacpp-hermes-partial-fence-name": "a ``` fence never closed is prose, and "
    "<function_call> is not the katas' tag",
}
"""Corpus cases whose source expects what the katas' rules decide otherwise, and why."""


def default_dir() -> Path:
    """The corpus's folder beside the repository this package lives in (a checkout)."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def conformance_dir(explicit: Path | None = None) -> Path:
    return explicit or Path(os.environ.get(DIR_VARIABLE) or default_dir())


def records(folder: Path, name: str) -> tuple[list[dict[str, Any]], str | None]:
    """The records of one JSONL file, or none and why."""
    path = folder / name
    if not path.is_file():
        return [], (
            f"conformance data not found ({path}): real outputs left out; point "
            f"{DIR_VARIABLE} or --conformance at the folder holding {name}"
        )
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            problem = f"line {number} is not JSON"
            return [], f"conformance data unreadable ({path}, {problem}): real outputs left out"
        if isinstance(record, dict):
            found.append(record)
    return found, None


def tagged_outputs(folder: Path) -> tuple[list[dict[str, Any]], str]:
    """The corpus's replies written with <tool_call> tags that the katas' rules cover, and a
    line saying how many, from where."""
    found, missing = records(folder, CORPUS)
    if missing:
        return [], missing
    chosen = [
        r
        for r in found
        if r.get("format") == "hermes_tags"
        and not OUTSIDE_THE_RULES & set(r.get("categories", ()))
        and r.get("id") not in DECIDED_OTHERWISE
    ]
    return chosen, f"{len(chosen)} real model outputs from {folder / CORPUS}"


def streamed_calls(folder: Path) -> tuple[list[dict[str, Any]], str]:
    """The recorded servers' streams with calls in them, and a line saying how many."""
    found, missing = records(folder, STREAMS)
    if missing:
        return [], missing
    chosen = [r for r in found if r.get("expected_calls")]
    return chosen, f"{len(chosen)} real servers' tool-call replies from {folder / STREAMS}"

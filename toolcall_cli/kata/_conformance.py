"""The real model outputs the katas grade with, and which of them fit a kata: toolcall's own
(data/real_outputs.jsonl, replies a real model gave toolcall's strategies in the project's
recordings), and an extra corpus copied from public test suites when TOOLCALL_CONFORMANCE_DIR
or --conformance names its folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

DIR_VARIABLE = "TOOLCALL_CONFORMANCE_DIR"
OWN_OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "real_outputs.jsonl"
"""toolcall's own real outputs (made by bench/make_real_outputs.py; data/README.md)."""
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


def conformance_dir(explicit: Path | None = None) -> Path | None:
    """The folder --conformance names, else TOOLCALL_CONFORMANCE_DIR; None: no extra corpus."""
    named = explicit or os.environ.get(DIR_VARIABLE)
    return Path(named) if named else None


NOT_GIVEN = (
    "the extra corpus of public test suites' outputs is not named (an extra, not part of "
    f"toolcall: point {DIR_VARIABLE} or --conformance at its folder to grade with it too)"
)
"""Said when no extra corpus is named: nothing is missing, the rest is graded as ever."""


def records(folder: Path | None, name: str) -> tuple[list[dict[str, Any]], str | None]:
    """The records of one JSONL file, or none and why."""
    if folder is None:
        return [], NOT_GIVEN
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


def tagged_outputs(folder: Path | None) -> tuple[list[dict[str, Any]], str]:
    """The real replies that the katas' rules cover, toolcall's own and the extra corpus's
    (when named), and a line saying how many, from where."""
    own = own_outputs()
    extra, note = extra_tagged_outputs(folder)
    said = f"{len(own)} real model outputs from toolcall's own recordings ({OWN_OUTPUTS.name})"
    return own + extra, f"{said}; {note}"


def own_outputs() -> list[dict[str, Any]]:
    """toolcall's own real replies the katas' rules cover: a call in a ```json fence, or prose
    with none. A bare JSON object is left out: the katas ask for <tool_call> tags."""
    found, _ = records(OWN_OUTPUTS.parent, OWN_OUTPUTS.name)
    return [
        r
        for r in found
        if r.get("format") == "raw_json" and "no_tags" not in r.get("categories", ())
    ]


def extra_tagged_outputs(folder: Path | None) -> tuple[list[dict[str, Any]], str]:
    """The extra corpus's replies written with <tool_call> tags that the katas' rules cover,
    and a line saying how many, from where (or why none)."""
    found, missing = records(folder, CORPUS)
    if missing or folder is None:
        return [], missing or NOT_GIVEN
    chosen = [
        r
        for r in found
        if r.get("format") == "hermes_tags"
        and not OUTSIDE_THE_RULES & set(r.get("categories", ()))
        and r.get("id") not in DECIDED_OTHERWISE
    ]
    return chosen, f"{len(chosen)} real model outputs from {folder / CORPUS}"


def streamed_calls(folder: Path | None) -> tuple[list[dict[str, Any]], str]:
    """The recorded servers' streams with calls in them, and a line saying how many."""
    found, missing = records(folder, STREAMS)
    if missing or folder is None:
        return [], missing or NOT_GIVEN
    chosen = [r for r in found if r.get("expected_calls")]
    return chosen, f"{len(chosen)} real servers' tool-call replies from {folder / STREAMS}"

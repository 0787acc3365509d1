"""JSON for other programs to read: strict JSON always, and a note wherever a value had to change.

Python's json writes NaN and Infinity, which are not JSON: a reader in another language fails
on them. They can reach an output from a tool's schema (a default of float("inf")) or a
server's reply, so every JSON output goes through here.
"""

from __future__ import annotations

import json
import math
from typing import Any

NOTES_KEY = "json_notes"
"""Added to an object whose values had to change to be JSON, one line per change."""
_DEEPEST = 200


def dumps(value: Any, *, indent: int | None = None) -> str:
    """`value` as strict JSON (UTF-8 text kept as is). Non-finite numbers become the strings
    "NaN", "Infinity" and "-Infinity", and an object at the top gets a `json_notes` list saying
    where; anything else JSON cannot hold is written as its repr."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False, default=repr)
    except ValueError:  # a non-finite float somewhere (or a circular structure)
        pass
    notes: list[str] = []
    clean = _finite(value, "", notes, 0)
    if isinstance(clean, dict) and notes:
        clean = {**clean, NOTES_KEY: notes}
    return json.dumps(clean, ensure_ascii=False, indent=indent, allow_nan=False, default=repr)


def _finite(value: Any, path: str, notes: list[str], depth: int) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        notes.append(f"{path or 'the value'}: {text} is not JSON; written as the string {text!r}")
        return text
    if depth >= _DEEPEST and isinstance(value, (dict, list, tuple)):
        notes.append(f"{path}: nested too deeply; written as text")
        return repr(value)[:1000]
    if isinstance(value, dict):
        return {k: _finite(v, _join(path, str(k)), notes, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{path}[{i}]", notes, depth + 1) for i, v in enumerate(value)]
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key

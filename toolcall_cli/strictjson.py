"""JSON for other programs to read: strict JSON always (no NaN, no Infinity, no lone surrogate,
which other readers fail on), and a note wherever a value had to change."""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any

NOTES_KEY = "json_notes"
"""Added to an object whose values had to change to be JSON, one line per change."""
DEEPEST = 200
"""Lists and objects nested deeper than this are written as a marker, never walked: a value
nested hundreds deep breaks every recursive writer (Python's json, the trace's masking) and no
JSON reader here can take it back. A model's reply is refused long before (the loop takes
replies up to 100 levels deep), so only a value from elsewhere (a tool server's schema) can
reach this."""
TOO_DEEP = f"(nested more than {DEEPEST} levels deep: not written)"
_SHOWN_PATH = 80


def dumps(value: Any, *, indent: int | None = None) -> str:
    """`value` as strict JSON (UTF-8 text kept as is, a lone surrogate as its escape). Non-finite
    numbers become the strings "NaN", "Infinity" and "-Infinity", a list or object nested past
    DEEPEST becomes TOO_DEEP, and an object at the top gets a `json_notes` list saying where;
    anything else JSON cannot hold is written as its repr."""
    value = within_depth(value)
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False, default=repr)
    except ValueError:  # a non-finite float somewhere (or a circular structure)
        notes: list[str] = []
        clean = _finite(value, "", notes, 0)
        if isinstance(clean, dict) and notes:
            clean = {**clean, NOTES_KEY: [*_notes_of(clean), *notes]}
        text = json.dumps(clean, ensure_ascii=False, indent=indent, allow_nan=False, default=repr)
    return escape_surrogates(text)


SURROGATE = re.compile("[\ud800-\udfff]")
"""A surrogate code point, which no UTF-8 writer takes. JSON decodes a pair to one character,
so one found in a decoded string is a lone half."""


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate (`"\\ud800"` in a model's JSON decodes to one) written as
    its `\\uXXXX` escape: no UTF-8 writer takes it, and a stream set to replace it wrote `?`,
    which changes the data. In JSON text it can only stand inside a string, where that escape
    is what it means."""
    return SURROGATE.sub(lambda found: _escape(found.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # JSON spells a character past U+FFFF as a pair
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


STREAM_ERRORS = "toolcall.escape"
"""The `errors` of toolcall's stdout and stderr: a character the stream cannot encode (a lone
surrogate, or anything on an ASCII terminal) is written as its `\\uXXXX` escape, not as `?`.
In JSON output that escape is the same string; on screen it says which character it was."""


def _escape_unencodable(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(map(_escape, error.object[error.start : error.end])), error.end


codecs.register_error(STREAM_ERRORS, _escape_unencodable)


def within_depth(value: Any) -> Any:
    """`value` itself when no list or object in it nests deeper than DEEPEST; otherwise a copy in
    which each one that does is the string TOO_DEEP, with a `json_notes` line saying where when
    the top is an object. The depth is measured without recursion, so any value can be passed."""
    if nesting_depth(value, DEEPEST + 1) <= DEEPEST:
        return value
    notes: list[str] = []
    clean = _cut(value, "", notes, 0)
    if isinstance(clean, dict):
        clean = {**clean, NOTES_KEY: [*_notes_of(clean), *notes]}
    return clean


def nesting_depth(value: Any, stop: int) -> int:
    """How deeply lists and objects nest in `value` (a scalar is 0), counted without recursion
    and no further than `stop`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            depth += 1
            deepest = max(deepest, depth)
            if deepest >= stop:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth) for child in children)
    return deepest


def _cut(value: Any, path: str, notes: list[str], depth: int) -> Any:
    # Recursion no deeper than DEEPEST: the value is known to be nested past it.
    if not isinstance(value, (dict, list, tuple)):
        return value
    if depth >= DEEPEST:
        notes.append(f"{_shown(path)}: nested more than {DEEPEST} levels deep; not written")
        return TOO_DEEP
    if isinstance(value, dict):
        return {k: _cut(v, _join(path, str(k)), notes, depth + 1) for k, v in value.items()}
    return [_cut(v, f"{path}[{i}]", notes, depth + 1) for i, v in enumerate(value)]


def _finite(value: Any, path: str, notes: list[str], depth: int) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        notes.append(f"{path or 'the value'}: {text} is not JSON; written as the string {text!r}")
        return text
    if depth >= DEEPEST and isinstance(value, (dict, list, tuple)):
        return TOO_DEEP  # within_depth already cut it; only a circular structure gets here
    if isinstance(value, dict):
        return {k: _finite(v, _join(path, str(k)), notes, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{path}[{i}]", notes, depth + 1) for i, v in enumerate(value)]
    return value


def _notes_of(value: dict[Any, Any]) -> list[Any]:
    notes = value.get(NOTES_KEY)
    return notes if isinstance(notes, list) else []


def _shown(path: str) -> str:
    """A path cut to a readable length: a value this deep has a path hundreds of keys long."""
    return path if len(path) <= _SHOWN_PATH else f"{path[: _SHOWN_PATH - 1]}…"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),  # before int: True is an int too
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    ((list, tuple), "array"),
    (dict, "object"),
)


def json_type(value: object) -> str | None:
    """The JSON Schema type name of a Python value ("null", "boolean", "integer", "number",
    "string", "array", "object"), or None for a value JSON has no type for. A str or int mixin
    Enum is its value's type. Every part of toolcall that names a value's type asks this."""
    if value is None:
        return "null"
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return None


_IN_WORDS = {
    "null": "null",
    "boolean": "true/false",
    "integer": "a number",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "an object",
}


def json_type_in_words(value: object) -> str:
    """What a JSON value is, for a person reading a file's error ("a number", "true/false",
    "a list"): never the value itself, which may be anything."""
    return _IN_WORDS[json_type(value) or "object"]

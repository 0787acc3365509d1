"""Lenient coercion of a model's arguments, only where the intent is unambiguous.

Models often send "5" for an integer, "true" for a boolean, a lone value where a list is
expected, or "Tomorrow" for the enum value "tomorrow". Such values are converted before
validation, and each conversion is reported; anything doubtful is left for validation to
reject with a message the model can act on.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.tools.validation import json_text

MAX_RANKED_NAME_CHARS = 128
"""Names longer than this are never compared for similarity: no real tool or parameter name is
that long (OpenAI allows 64 characters for a tool), and difflib takes seconds over a huge one."""

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

SYNONYMS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "city location place town loc where cityname city_name",
        "query q search keyword keywords text question prompt",
        "expression expr formula equation math input",
        "timezone tz zone time_zone",
        "symbol ticker stock code",
        "from_unit from source_unit unit_from src_unit",
        "to_unit to target_unit unit_to dst_unit",
        "value amount number quantity val",
        "day date when",
        "path file filename file_path filepath",
        "url link uri href",
    )
)


class _Skip(Exception):
    """The value cannot be coerced without guessing."""


def coerce_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The arguments with unambiguous fixes applied, and one note per fix. Any schema a tool
    may have is read (an MCP server's is somebody else's): a part of it that is not plain
    (`true` as a subschema, say) leaves its values as they are, for validation to judge."""
    properties = spec.parameters.get("properties", {})
    if not isinstance(properties, dict):
        return dict(arguments), []
    fixed = dict(arguments)
    notes: list[str] = []
    for name, value in arguments.items():
        schema = properties.get(name)
        if schema is None:
            continue
        try:
            new = coerce_value(value, schema)
        except _Skip:
            continue
        if new != value or type(new) is not type(value):
            fixed[name] = new
            notes.append(f"`{name}`: {json_text(value)} → {json_text(new)}")
    return fixed, notes


def single_type(schema: dict[str, Any]) -> str | None:
    """The one JSON type a schema expects (a nullable type counts as that type), else None."""
    if "anyOf" in schema:
        options = _not_null(schema["anyOf"])
        return single_type(options[0]) if len(options) == 1 else None
    kind = schema.get("type")
    return kind if isinstance(kind, str) else None


def schema_of(schema: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in schema:
        options = _not_null(schema["anyOf"])
        if len(options) == 1:
            return dict(options[0])
    return schema


def _not_null(options: Any) -> list[dict[str, Any]]:
    """The anyOf options besides `null`; none when one of them is not a plain object schema
    (`true` takes any value: which one was meant is a guess)."""
    if not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
        return []
    return [option for option in options if option.get("type") != "null"]


def coerce_value(value: Any, schema: Any) -> Any:
    if value is None or not isinstance(schema, dict):
        raise _Skip
    schema = schema_of(schema)
    kind = single_type(schema)
    if "enum" in schema:
        return coerce_enum(value, schema["enum"])
    converters = {
        "integer": to_integer,
        "number": to_number,
        "boolean": to_boolean,
        "string": to_string,
    }
    if kind == "array":
        return to_array(value, schema.get("items", {}))
    if kind in converters:
        return converters[kind](value)
    raise _Skip


def to_integer(value: Any) -> int:
    if isinstance(value, bool):
        raise _Skip
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    # ValueError: over int()'s digit limit; OverflowError: an infinite float.
    with contextlib.suppress(ValueError, OverflowError):
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            return int(value.strip())
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            number = float(value.strip())
            if number.is_integer():
                return int(number)
    raise _Skip


def to_number(value: Any) -> int | float:
    if isinstance(value, bool):
        raise _Skip
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value.strip())
        if math.isfinite(number):
            try:
                return int(value.strip()) if _INTEGER.fullmatch(value.strip()) else number
            except ValueError:  # over int()'s digit limit
                return number
    raise _Skip


def to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _Skip


def to_string(value: Any) -> str:
    # A number where text is wanted (a ticker like 600519, a zip code) is unambiguous.
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise _Skip


def to_array(value: Any, items: Any) -> list[Any]:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past what Python reads
            decoded = None
        if isinstance(decoded, list):
            value = decoded
    values = value if isinstance(value, list) else [value]  # a lone value → [value]
    out = []
    for item in values:
        try:
            out.append(coerce_value(item, items) if items else item)
        except _Skip:
            out.append(item)
    return out


def coerce_enum(value: Any, allowed: Any) -> Any:
    if not isinstance(allowed, list):
        raise _Skip
    if value in allowed:
        return value
    if isinstance(value, str):
        matches = [
            a for a in allowed if isinstance(a, str) and a.casefold() == value.strip().casefold()
        ]
        if len(matches) == 1:
            return matches[0]
    for converter in (to_integer, to_number):
        try:
            number = converter(value)
        except _Skip:
            continue
        if number in allowed:
            return number
    raise _Skip


def similar_parameter(
    name: str,
    allowed: list[str],
    missing: list[str],
    descriptions: Mapping[str, str] | None = None,
) -> str | None:
    """The real parameter an unexpected name most likely meant: a synonym (`location` → `city`),
    the same words written another way (`cityName`, `CITY`, `weather_city`), a misspelling
    (`citty`), or words of one parameter's description (`town` → `city`: "a city or town")."""
    if len(name) > MAX_RANKED_NAME_CHARS:
        return None  # not a name anyone meant
    candidates = list(dict.fromkeys(missing + allowed))
    lowered = name.casefold()
    for group in SYNONYMS:
        if lowered in group:
            for candidate in candidates:
                if candidate.casefold() in group:
                    return candidate
    found = (
        same_words(name, candidates)
        or misspelt(name, candidates)
        or described_as(name, candidates, descriptions or {})
    )
    # One required argument missing and one unknown given: almost certainly a rename.
    return found or (missing[0] if len(missing) == 1 else None)


def name_words(name: str) -> list[str]:
    """`cityName`, `city_name`, `CITY-NAME` → [city, name]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [word.casefold() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def same_words(name: str, candidates: list[str]) -> str | None:
    """The candidate written with the same words, else the one whose words hold the name's or
    are held in them (`airport` → `departure_airport`, `weather_city` → `city`)."""
    words = name_words(name)
    same = [c for c in candidates if name_words(c) == words]
    held = [
        c
        for c in candidates
        if set(name_words(c)) <= set(words) or set(words) <= set(name_words(c))
    ]
    found = same or held
    return found[0] if len(found) == 1 or same else None


def misspelt(name: str, candidates: list[str]) -> str | None:
    """The closest candidate by spelling, ignoring case and separators (`citty`, `Pasengers`)."""
    folded = {"".join(name_words(c)): c for c in reversed(candidates)}
    close = difflib.get_close_matches("".join(name_words(name)), list(folded), n=1, cutoff=0.6)
    return folded[close[0]] if close else None


def described_as(name: str, candidates: list[str], descriptions: Mapping[str, str]) -> str | None:
    """The one candidate whose description uses every word of the name (plurals count)."""
    words = {word for word in name_words(name) if len(word) > 2}

    def uses(description: str) -> bool:
        found = set(re.findall(r"[a-z0-9]+", description.casefold()))
        return bool(words) and words <= found | {w.removesuffix("s") for w in found}

    matching = [c for c in candidates if uses(descriptions.get(c, ""))]
    return matching[0] if len(matching) == 1 else None

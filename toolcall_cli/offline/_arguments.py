"""Filling a tool's arguments from the question: several values give several calls."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._conversation import PlannedCall
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._tools import ParamRole, enum_values, param_role, properties, required
from toolcall_cli.offline._words import canonical_unit, spelling_positions

_IANA_RE = re.compile(r"\b(?:UTC|GMT|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b")


@dataclass(frozen=True)
class Filling:
    """A tool's calls for the question, and the required parameters nothing could fill."""

    calls: tuple[PlannedCall, ...]
    missing: tuple[str, ...]
    spec: ToolSpec | None = field(default=None, compare=False)

    @property
    def empty(self) -> bool:
        """Not one required value could be read: calling would send nothing it needs."""
        return self.spec is not None and len(self.missing) == len(set(required(self.spec)))


def fill_tool(spec: ToolSpec, reading: Reading) -> Filling:
    values = fill_values(spec, reading)
    missing = tuple(n for n in required(spec) if n not in values)
    return Filling(calls=spread_calls(spec.name, values), missing=missing, spec=spec)


def fill_values(spec: ToolSpec, reading: Reading) -> dict[str, list[Any]]:
    """Every value the question gives for each parameter (several cities give several)."""
    values: dict[str, list[Any]] = {}
    numbers = list(numbers_left(reading, spec))
    for name, schema in properties(spec).items():
        found = param_values(name, schema, reading, numbers)
        if found:
            values[name] = found
    return values


def numbers_left(reading: Reading, spec: ToolSpec) -> list[float]:
    """Numbers free for numeric parameters: those inside an expression belong to it."""
    roles = {param_role(n, s) for n, s in properties(spec).items()}
    return [] if "expression" in roles and reading.expressions else list(reading.numbers)


def spread_calls(name: str, values: dict[str, list[Any]]) -> tuple[PlannedCall, ...]:
    """One call per value of the first many-valued parameter (北京 and 上海 → two calls)."""
    spread = next((p for p, v in values.items() if len(v) > 1), None)
    shared = {p: v[0] for p, v in values.items()}
    if spread is None:
        key = next(iter(shared.items()), None)
        return (PlannedCall(name, shared, key),)
    return tuple(
        PlannedCall(name, {**shared, spread: value}, (spread, value)) for value in values[spread]
    )


def param_values(
    name: str, schema: dict[str, Any], reading: Reading, numbers: list[float]
) -> list[Any]:
    role = param_role(name, schema)
    if role == "enum":
        return enum_match(enum_values(schema), reading)
    if role == "number":
        return [as_number(numbers.pop(0), schema)] if numbers else []
    if role in ("place", "timezone"):
        return place_values(role, schema, reading)
    if role == "symbol":
        return list(reading.tickers)
    if role == "expression":
        return list(reading.expressions)
    if role == "text":
        return quoted_texts(reading.text) or [gist(reading.text)]
    if role in ("unit_from", "unit_to", "unit"):
        unit = unit_for(role, reading)
        return [tool_unit(unit, schema)] if unit else []
    if role in ("currency_from", "currency_to", "currency"):
        code = currency_for(role, reading)
        return [code] if code else []
    return []


def as_number(value: float, schema: dict[str, Any]) -> int | float:
    if not math.isfinite(value):  # a number too big for a float stays as the float it became
        return value
    return int(value) if schema.get("type") == "integer" or value.is_integer() else value


def enum_match(options: list[Any], reading: Reading) -> list[Any]:
    """The option the question names, directly or through a synonym (明天 → "tomorrow")."""
    hits: list[tuple[int, Any]] = []
    lowered = reading.text.lower()
    for option in options:
        spellings = {str(option).lower(), *lx.ENUM_SYNONYMS.get(str(option).lower(), ())}
        unit = canonical_unit(str(option))
        if unit:
            spellings |= set(lx.UNITS[unit])
        spellings |= set(lx.CURRENCIES.get(str(option).upper(), ()))
        positions = [p for s in spellings for p in spelling_positions(lowered, s.lower()) if s]
        if positions:
            hits.append((min(positions), option))
    return [option for _, option in sorted(hits, key=lambda h: h[0])][:1]


def place_values(role: ParamRole, schema: dict[str, Any], reading: Reading) -> list[str]:
    description = str(schema.get("description", ""))
    if role == "timezone":
        explicit = _IANA_RE.findall(reading.text)
        if explicit:
            return list(dict.fromkeys(explicit))
    wants_zone = role == "timezone" and ("/" in description or "iana" in description.lower())
    return [place_form(name, description, wants_zone) for name in reading.places]


def place_form(name: str, description: str, wants_zone: bool) -> str:
    """The place the way the parameter asks for it: as written, an IANA zone, or a language."""
    place = lx.place_named(name)
    if place is None:
        return name
    if wants_zone:
        return place.timezone
    lowered = description.lower()
    english = "english" in lowered or "英文" in description
    chinese = "chinese" in lowered or "中文" in description
    if english != chinese:  # "in Chinese or English" asks for no translation
        return place.en if english else place.zh
    return name


_QUOTED_TEXT_RE = re.compile(
    r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])|\"([^\"]+)\"|“([^”]+)”|「([^」]+)」"
)


def quoted_texts(text: str) -> list[str]:
    """Text the question quotes ("Echo 'hello'"): that is the text meant, not the question."""
    return [next(g for g in m.groups() if g) for m in _QUOTED_TEXT_RE.finditer(text)][:1]


def gist(text: str) -> str:
    """The question without its trailing punctuation and polite openers."""
    trimmed = re.sub(r"^(please|请问|请|帮我|麻烦你?)\s*", "", text.strip(), flags=re.IGNORECASE)
    return trimmed.rstrip("?？!！。. ")


def unit_for(role: ParamRole, reading: Reading) -> str | None:
    """The source unit is the one the number is in ("70 kg"), wherever it stands in the
    question ("How many pounds is 70 kg?"); the target is another one."""
    if not reading.units:
        return None
    if role not in ("unit_from", "unit_to"):
        return reading.units[0]
    positions = [position for position, _ in reading.unit_spans]
    return pick_direction(role == "unit_from", list(reading.units), positions, reading.text)


def pick_direction(
    source_wanted: bool, names: list[str], positions: list[int], text: str
) -> str | None:
    """From units or currencies in question order: the source (the one right after a number,
    else the first) or the target (the last other one). One alone is the source only when a
    number comes before it."""
    numbered = [i for i, position in enumerate(positions) if number_before(text, position)]
    if len(names) == 1:
        alone_is_source = bool(numbered)
        return names[0] if source_wanted == alone_is_source else None
    source = numbered[0] if numbered else 0
    if source_wanted:
        return names[source]
    return next(names[i] for i in range(len(names) - 1, -1, -1) if i != source)


def number_before(text: str, position: int) -> bool:
    return re.search(r"\d\s*$", text[:position]) is not None


def currency_for(role: ParamRole, reading: Reading) -> str | None:
    """Like units: with two currencies the first is the source and the last the target; one
    alone is the source when a number comes before it ("100 USD")."""
    codes = [code for _, code in reading.currencies]
    if not codes:
        return None
    if role == "currency":
        return codes[0]
    positions = [position for position, _ in reading.currencies]
    return pick_direction(role == "currency_from", codes, positions, reading.text)


def tool_unit(unit: str, schema: dict[str, Any]) -> str:
    """How this tool writes the unit: an enum member, a spelling its description uses, or ours."""
    for option in enum_values(schema):
        if canonical_unit(str(option)) == unit:
            return str(option)
    description = str(schema.get("description", "")).lower()
    for spelling in lx.UNITS[unit]:
        if (
            len(spelling) > 1  # "c" would match inside "°C"
            and spelling.isascii()
            and spelling.isalpha()
            and re.search(rf"\b{spelling}\b", description)
        ):
            return spelling
    return unit

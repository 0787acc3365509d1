"""Words in a text: English words, identifiers split into words, concepts, unit spellings."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from toolcall_cli.offline import _lexicon as lx

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*")


def english_words(text: str) -> set[str]:
    """Lowercase English words plus their singular forms ("units" also gives "unit")."""
    found: set[str] = set()
    for raw in _WORD_RE.findall(text):
        word = raw.lower().removesuffix("'s").strip("'-")
        if not word:
            continue
        found.add(word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            found.add(word[:-1])
    return found


def split_identifier(name: str) -> list[str]:
    """`get_weather` → [get, weather]; `lookupStock` → [lookup, stock]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [part.lower() for part in re.split(r"[^A-Za-z0-9]+", spaced) if part]


def concepts_in(text: str, words: set[str]) -> Iterable[str]:
    for concept, terms in lx.CONCEPTS.items():
        if any(term in text if lx.has_cjk(term) else term in words for term in terms):
            yield concept


def mentions(text: str, phrases: Iterable[str]) -> bool:
    lowered = text.lower()
    words = english_words(text)
    for phrase in phrases:
        if lx.has_cjk(phrase) or " " in phrase:
            if phrase in lowered:
                return True
        elif phrase in words:
            return True
    return False


def spelling_positions(lowered: str, spelling: str) -> list[int]:
    if lx.has_cjk(spelling) or not spelling[0].isalpha():
        return [m.start() for m in re.finditer(re.escape(spelling), lowered)]
    # A bare "in" or "m" is a unit only right after a number ("5 m", "12 in").
    if spelling in lx.AMBIGUOUS_UNIT_WORDS:
        pattern = rf"(?<=\d)\s*{re.escape(spelling)}(?![a-z])"
    else:
        pattern = rf"(?<![a-z]){re.escape(spelling)}(?![a-z])"
    return [m.start() for m in re.finditer(pattern, lowered)]


_UNIT_LETTERS = {"c": "celsius", "f": "fahrenheit", "k": "kelvin"}


def canonical_unit(word: str) -> str | None:
    """The canonical unit a word names; single letters count here (enum members like "C")."""
    lowered = word.strip().lower()
    if lowered in _UNIT_LETTERS:
        return _UNIT_LETTERS[lowered]
    for unit, names in lx.UNITS.items():
        if lowered in names:
            return unit
    return None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def unit_of_field(key: str) -> str | None:
    """The unit a result field's name gives its number: `temp_c` celsius, `distance_km` km."""
    lowered = key.lower()
    return next((unit for end, unit in lx.UNIT_SUFFIXES.items() if lowered.endswith(end)), None)


_LONG_DECIMAL_RE = re.compile(r"(?<![\d.])(-?\d+\.\d{3,})(?![\d.])")


def short_number(value: float) -> str:
    """Two decimals for answers (154.3235835 → 154.32); three significant digits below 1."""
    if value.is_integer():
        return str(int(value))
    if abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def round_decimals(text: str) -> str:
    """Long decimals in a sentence shortened: "37.77777778 °C" → "37.78 °C"."""
    return _LONG_DECIMAL_RE.sub(lambda m: short_number(float(m.group(1))), text)


def shown(value: Any) -> str:
    """A value as an answer shows it: floats rounded, everything else as text."""
    if isinstance(value, float):
        return short_number(value)
    return round_decimals(str(value)) if isinstance(value, str) else str(value)

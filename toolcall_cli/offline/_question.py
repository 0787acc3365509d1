"""The question as the offline model understands it: language, concepts, places, arithmetic,
numbers, tickers, units and currencies."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._arithmetic import (
    arithmetic_text,
    find_expressions,
    math_functions,
    place_text,
    without_separators,
)
from toolcall_cli.offline._places import find_places, tool_terms
from toolcall_cli.offline._words import concepts_in, english_words, spelling_positions

_NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?")
_TICKER_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,5}(?:\.[A-Z]{1,2})?(?![A-Za-z0-9])")
_NOT_TICKERS = frozenset(
    lx.words(
        "I A OK US USA UK EU UTC GMT AI CEO PM AM API JSON HTTP NYC TV ID KM MI KG LB CM FT F C RMB"
    )
) | frozenset(lx.CURRENCIES)


@dataclass(frozen=True)
class Reading:
    """The question as the brain understands it."""

    text: str
    zh: bool
    words: frozenset[str]
    concepts: frozenset[str]
    places: tuple[str, ...]
    expressions: tuple[str, ...]
    numbers: tuple[float, ...]
    tickers: tuple[str, ...]
    units: tuple[str, ...]
    """Canonical units in the order they are mentioned."""
    unit_spans: tuple[tuple[int, str], ...]
    currencies: tuple[tuple[int, str], ...] = ()
    """(position, ISO code) of each currency mentioned, in order."""


def read_question(text: str, tools: Sequence[ToolSpec] = ()) -> Reading:
    arithmetic = arithmetic_text(text)
    words = english_words(arithmetic)
    expressions = find_expressions(arithmetic, math_functions(tools))
    concepts = set(concepts_in(text, words))
    if expressions:
        concepts.add("math")
    unit_spans = find_units(text)
    return Reading(
        text=text,
        zh=lx.has_cjk(text),
        words=frozenset(words),
        concepts=frozenset(concepts),
        places=find_places(place_text(text, expressions), tool_terms(tools)),
        expressions=expressions,
        numbers=tuple(float(n) for n in _NUMBER_RE.findall(without_separators(text))),
        tickers=find_tickers(text),
        units=tuple(unit for _, unit in unit_spans),
        unit_spans=unit_spans,
        currencies=find_currencies(text),
    )


def find_tickers(text: str) -> tuple[str, ...]:
    found = [t for t in _TICKER_RE.findall(text) if t not in _NOT_TICKERS and len(t) >= 2]
    lowered = text.lower()
    words = english_words(text)
    for company, ticker in lx.TICKERS.items():
        if (
            company in lowered if lx.has_cjk(company) else company in words
        ) and ticker not in found:
            found.append(ticker)
    return tuple(found)


def find_units(text: str) -> tuple[tuple[int, str], ...]:
    """(position, canonical unit) for each unit mentioned, longest spelling first per place."""
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    spellings = sorted(
        ((s, unit) for unit, names in lx.UNITS.items() for s in names), key=lambda p: -len(p[0])
    )
    for spelling, unit in spellings:
        for start in spelling_positions(lowered, spelling):
            end = start + len(spelling)
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            found.append((start, unit))
    return tuple(sorted(found))


def find_currencies(text: str) -> tuple[tuple[int, str], ...]:
    """(position, ISO code) for each currency named: "USD" as written, or "美元", "euros"."""
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])", text):
        if match.group() in lx.CURRENCIES:
            taken.append(match.span())
            found.append((match.start(), match.group()))
    spellings = sorted(
        ((s, code) for code, names in lx.CURRENCIES.items() for s in names),
        key=lambda p: -len(p[0]),
    )
    for spelling, code in spellings:
        for start in spelling_positions(lowered, spelling):
            end = start + len(spelling)
            if not any(start < e and s < end for s, e in taken):
                taken.append((start, end))
                found.append((start, code))
    return tuple(sorted(found))

"""The question as the offline model understands it: language, concepts, places, arithmetic,
numbers, tickers, units and currencies."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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
from toolcall_cli.offline._words import concepts_in, english_words, mentions, spelling_positions

_NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?")
_TICKER_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,5}(?:\.[A-Z]{1,2})?(?![A-Za-z0-9])")
_NOT_TICKERS = frozenset(
    lx.words(
        "I A OK US USA UK EU UTC GMT AI CEO PM AM API JSON HTTP NYC TV ID KM MI KG LB CM FT F C RMB"
    )
) | frozenset(lx.CURRENCIES)


@dataclass(frozen=True)
class Reading:
    """The question as the model understands it."""

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
    extremes: tuple[str, ...] = ()
    """Which of a day's measures the question means ("high", "low"), in the order asked; none
    means the current one."""
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    """What has been worked out from this reading, for work asked for again and again."""


def read_question(text: str, tools: Sequence[ToolSpec] = ()) -> Reading:
    arithmetic = arithmetic_text(text)
    words = english_words(arithmetic)
    expressions = find_expressions(arithmetic, math_functions(tools))
    concepts = set(concepts_in(text, words))
    if expressions:
        concepts.add("math")
    unit_spans = spelled(text, lx.UNITS)  # (position, canonical unit) of each unit named
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
        extremes=find_extremes(text),
    )


def find_extremes(text: str) -> tuple[str, ...]:
    """ "最高气温", "tomorrow's high", "the low": the day's high or low, in the order asked."""
    lowered = text.lower()
    found = [
        (min(positions), extreme)
        for extreme, spellings in lx.EXTREMES.items()
        if (positions := [p for s in spellings for p in spelling_positions(lowered, s)])
    ]
    return tuple(extreme for _, extreme in sorted(found))


def find_tickers(text: str) -> tuple[str, ...]:
    found = [t for t in _TICKER_RE.findall(text) if t not in _NOT_TICKERS and len(t) >= 2]
    named = [t for name, t in lx.TICKERS.items() if mentions(text, (name,)) and t not in found]
    return (*found, *dict.fromkeys(named))


def find_currencies(text: str) -> tuple[tuple[int, str], ...]:
    """(position, ISO code) for each currency named: "USD" as written, or "美元", "euros"."""
    codes = re.finditer(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])", text)
    return spelled(text, lx.CURRENCIES, [(*m.span(), m[0]) for m in codes if m[0] in lx.CURRENCIES])


def spelled(
    text: str, table: dict[str, tuple[str, ...]], taken: Sequence[tuple[int, int, str]] = ()
) -> tuple[tuple[int, str], ...]:
    """(position, name) of each name of `table` the text spells, the longest spelling winning
    where spellings overlap; `taken` holds (start, end, name) spans found before."""
    lowered = text.lower()
    spans = list(taken)
    # Which characters a span already holds: a new span is checked over its own length, not
    # against every span found before it.
    held = bytearray(len(lowered) + 1)
    for start, end, _ in spans:
        held[start:end] = b"\x01" * (end - start)
    for spelling, name in sorted(
        ((s, n) for n, ss in table.items() for s in ss), key=lambda p: -len(p[0])
    ):
        for start in spelling_positions(lowered, spelling):
            end = start + len(spelling)
            if not any(held[start:end]):
                spans.append((start, end, name))
                held[start:end] = b"\x01" * (end - start)
    return tuple(sorted((start, name) for start, _, name in spans))

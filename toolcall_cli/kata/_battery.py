"""What a kata is graded on: cases, each a category, a source and a check of the user's code,
and the verdict a check gives (expected against got)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

Source = Literal["built-in", "offline faults", "real outputs"]
SOURCES: tuple[Source, ...] = ("built-in", "offline faults", "real outputs")

SHOWN_CHARS = 400
"""How much of an expected or a got value a verdict keeps: enough to see the difference."""


@dataclass(frozen=True)
class Verdict:
    passed: bool
    expected: str = ""
    got: str = ""


@dataclass(frozen=True)
class Case:
    category: str
    source: Source
    name: str
    check: Callable[[ModuleType], Verdict]
    """Runs the user's code (the module loaded from their file) and judges what it did."""
    time_limit: float | None = None
    """Seconds this case may take, when not the check's own --time-limit."""
    after: Callable[[], None] | None = None
    """Run once the case is over, however it ended: releases a tool left hanging on purpose."""


@dataclass(frozen=True)
class Battery:
    cases: tuple[Case, ...]
    conformance: str
    """One line: the real outputs the battery holds, or why it holds none."""
    coverage: str
    """One line: the offline model's fault kinds this kata meets, and where the others are."""


def shown(value: Any) -> str:
    """A value as one line of JSON (repr for what JSON cannot say), cut to SHOWN_CHARS."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return clipped(text)


def clipped(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def canonical(value: Any) -> str:
    """A value as JSON with sorted keys: equal only when the JSON is, so 5 is not 5.0 and
    true is not 1 (Python's == says they are)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def agree(expected: Any, got: Any) -> Verdict:
    return Verdict(canonical(expected) == canonical(got), shown(expected), shown(got))


def normal_space(text: str) -> str:
    """Whitespace runs as one space, none at the ends: where a parser keeps a newline around
    a call is not graded."""
    return " ".join(text.split())

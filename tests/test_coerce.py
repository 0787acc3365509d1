"""Lenient coercion before validation: only where the intent is unambiguous, and reported."""

from __future__ import annotations

from typing import Literal

import pytest

from toolcall_cli import tool
from toolcall_cli.messages import ToolCall
from toolcall_cli.tools.executor import execute
from toolcall_cli.tools.registry import ToolRegistry


@tool
def book(
    count: int,
    price: float = 1.0,
    urgent: bool = False,
    day: Literal["today", "tomorrow"] = "today",
    tags: list[str] | None = None,
    code: str = "",
) -> dict[str, object]:
    """Book something."""
    return {
        "count": count,
        "price": price,
        "urgent": urgent,
        "day": day,
        "tags": tags,
        "code": code,
    }


@tool
def locate(city: str) -> str:
    """Find a city."""
    return city


REGISTRY = ToolRegistry.from_functions(book, locate)


def run(name: str, arguments: dict[str, object]) -> tuple[bool, str, tuple[str, ...]]:
    result = execute(ToolCall(id="c", name=name, arguments=arguments), REGISTRY)
    return result.ok, result.content, result.coerced


@pytest.mark.parametrize(
    ("arguments", "field", "expected"),
    [
        ({"count": "5"}, '"count": 5', '`count`: "5" → 5'),
        ({"count": 3.0}, '"count": 3', "`count`: 3.0 → 3"),
        ({"count": 1, "price": "2.5"}, '"price": 2.5', '`price`: "2.5" → 2.5'),
        ({"count": 1, "urgent": "true"}, '"urgent": true', '`urgent`: "true" → true'),
        ({"count": 1, "day": "Tomorrow"}, '"day": "tomorrow"', '`day`: "Tomorrow" → "tomorrow"'),
        ({"count": 1, "tags": "vip"}, '"tags": ["vip"]', '`tags`: "vip" → ["vip"]'),
        ({"count": 1, "code": 600519}, '"code": "600519"', '`code`: 600519 → "600519"'),
    ],
)
def test_unambiguous_values_are_coerced_and_reported(
    arguments: dict[str, object], field: str, expected: str
) -> None:
    ok, content, coerced = run("book", arguments)
    assert ok, content
    assert field in content
    assert expected in coerced


@pytest.mark.parametrize(
    "arguments",
    [
        {"count": "five"},
        {"count": 2.5},
        {"count": True},
        {"count": 1, "urgent": "yes"},
        {"count": 1, "day": "monday"},
    ],
)
def test_doubtful_values_are_left_for_validation(arguments: dict[str, object]) -> None:
    ok, content, coerced = run("book", arguments)
    assert not ok and content.startswith("Error: invalid arguments")
    assert coerced == ()


def test_a_synonym_parameter_name_gets_a_rename_suggestion() -> None:
    ok, content, _ = run("locate", {"location": "Paris"})
    assert not ok
    assert "unexpected argument `location`: did you mean `city`? Rename it" in content
    assert "missing required argument `city`" in content

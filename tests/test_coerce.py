"""Lenient coercion before validation: only where the intent is unambiguous, and reported."""

from __future__ import annotations

import enum
import json
from typing import Literal

import pytest

from toolcall_cli import tool
from toolcall_cli.messages import ToolCall
from toolcall_cli.tools.pool import execute
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


@tool
def find_flight(flight_number: str, departure_airport: str = "", passengers: int = 1) -> str:
    """Find a flight.

    Args:
        flight_number: The carrier code and number, e.g. CA981.
        departure_airport: IATA code of the airport it leaves from (its origin), e.g. PEK.
        passengers: How many people travel.
    """
    return flight_number


REGISTRY = ToolRegistry.from_functions(book, locate, find_flight)


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


@pytest.mark.parametrize(
    ("wrong", "meant"),
    [
        ("DEPARTURE_AIRPORT", "departure_airport"),  # another case
        ("departureAirport", "departure_airport"),  # camelCase
        ("departure-airport", "departure_airport"),
        ("airport", "departure_airport"),  # some of its words
        ("flight_departure_airport", "departure_airport"),  # a prefix
        ("departure_airprot", "departure_airport"),  # a typo
        ("Pasengers", "passengers"),
        ("origin", "departure_airport"),  # a word of its description
        ("people", "passengers"),
    ],
)
def test_the_rename_hint_finds_names_no_table_holds(wrong: str, meant: str) -> None:
    # The required argument is given: no "one missing, one unknown" guess can help here.
    ok, content, _ = run("find_flight", {"flight_number": "CA981", wrong: "x"})
    assert not ok
    assert f"unexpected argument `{wrong}`: did you mean `{meant}`? Rename it" in content


@pytest.mark.parametrize("wrong", ["verbose", "format", "seat"])
def test_a_name_like_no_parameter_is_told_to_go(wrong: str) -> None:
    ok, content, _ = run("find_flight", {"flight_number": "CA981", wrong: "x"})
    assert not ok
    assert f"unexpected argument `{wrong}`: remove it" in content


def test_a_string_nested_past_what_json_reads_is_an_error_for_the_model_not_a_crash() -> None:
    """A list sent as a string is decoded; one nested 1,500 deep raised RecursionError out of
    the round (and, quoted in a tool result, out of the injection guard that reads calls
    there as they would run)."""

    @tool
    def total(values: list[int]) -> int:
        """Add up numbers."""
        return sum(values)

    deep = "[" * 1500 + "]" * 1500
    call = ToolCall(id="c1", name="total", arguments={"values": deep})
    result = execute(call, ToolRegistry.from_functions(total))
    assert not result.ok and "values" in result.content


def test_an_enum_a_tool_returns_is_written_as_its_value() -> None:
    import enum

    class Color(enum.Enum):
        RED = "red"

    @tool
    def paint() -> dict[str, object]:
        """Paint."""
        return {"color": Color.RED}

    result = execute(
        ToolCall(id="c1", name="paint", arguments={}), ToolRegistry.from_functions(paint)
    )
    assert result.ok and result.content == '{"color": "red"}'


class Shade(str, enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Mood(enum.Enum):
    HAPPY = "happy"


def test_a_str_mixin_enum_is_its_value_in_the_schema_and_in_results() -> None:
    """Every place toolcall writes a member: the schema's enum and defaults (nested too), the
    arguments the tool receives for a Literal of members, and what a result holds (a member as
    a key, or in a set); a plain Enum's member as a key too."""

    @tool
    def paint(
        level: Literal[Shade.LIGHT, Shade.DARK],
        tones: list[Shade] = [Shade.LIGHT],  # noqa: B006 - a default is only read here
        by_name: dict[str, Shade] = {"wall": Shade.DARK},  # noqa: B006
    ) -> dict[object, object]:
        """Paint."""
        return {
            "level": level.value,  # a member: .value works
            "seen": {Shade.DARK, Shade.LIGHT},
            Shade.DARK: 1,
            Mood.HAPPY: [level],
        }

    registry = ToolRegistry.from_functions(paint)
    schema = registry.specs()[0].parameters["properties"]
    assert schema["level"]["enum"] == ["light", "dark"]
    assert (schema["tones"]["default"], schema["by_name"]["default"]) == (
        ["light"],
        {"wall": "dark"},
    )
    for written in (schema["level"]["enum"][0], schema["tones"]["default"][0]):
        assert type(written) is str  # never the member, whose str() is "Shade.LIGHT"
    result = execute(ToolCall(id="c1", name="paint", arguments={"level": "dark"}), registry)
    assert result.ok, result.content
    assert json.loads(result.content) == {
        "level": "dark",
        "seen": ["dark", "light"],
        "dark": 1,
        "happy": ["dark"],
    }

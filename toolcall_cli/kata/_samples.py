"""The Python functions the request kata hands the user's `tool_schema` and `build_request`:
real functions, built where the user's code runs (a function cannot travel as JSON), each
named by a JSON value `{"sample function": name}` in what the judge asks. The judge knows what
a right schema of each accepts and refuses (_request_kata); nothing here decides a verdict.

Light to import: the process running the user's code loads it for every case."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Optional

MARK = "sample function"


def get_weather(city: str, day: Literal["today", "tomorrow"] = "today") -> dict[str, Any]:
    """Get the weather forecast for a city.

    Args:
        city: The city's name, e.g. Paris or 北京.
        day: Which day's forecast.
    """
    return {"city": city, "day": day}


def search_flights(
    origin: str,
    destination: str,
    max_stops: Optional[int] = None,  # noqa: UP045 - the spelling the kata asks about
    cabin: Literal["economy", "business"] = "economy",
) -> list[dict[str, Any]]:
    """Find flights between two airports.

    Args:
        origin: IATA code of the airport to leave from.
        destination: IATA code of the airport to fly to.
        max_stops: The most stops allowed; leave it out for any number.
        cabin: The cabin class.
    """
    return []


def average(values: list[int], precision: int = 2) -> float:
    """Average a list of whole numbers.

    Args:
        values: The numbers to average.
        precision: Digits kept after the decimal point.
    """
    return round(sum(values) / max(len(values), 1), precision)


def set_alarm(hour: int, minute: int = 0, label: str | None = None, repeat: bool = False) -> str:
    """Set an alarm on the user's phone.

    Args:
        hour: The hour, 0 to 23.
        minute: The minute, 0 to 59.
        label: Text shown when it rings.
        repeat: Ring every day.
    """
    return f"{hour:02}:{minute:02}"


def current_time() -> str:
    """The current time, in ISO 8601."""
    return "2025-01-01T00:00:00Z"


def convert_units(
    value: float,
    from_unit: Literal["km", "mi", "m"],
    to_unit: Literal["km", "mi", "m"],
    tags: Optional[list[str]] = None,  # noqa: UP045 - the spelling the kata asks about
) -> float:
    """Convert a distance from one unit to another.

    Args:
        value: The distance to convert.
        from_unit: The unit it is in.
        to_unit: The unit wanted.
        tags: Words to file the result under.
    """
    return value


SAMPLES: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (get_weather, search_flights, average, set_alarm, current_time, convert_units)
}


def named(name: str) -> dict[str, str]:
    """How the judge names a sample function in what it asks."""
    return {MARK: name}


def with_functions(value: Any) -> Any:
    """`value` with each `{"sample function": name}` in it turned into that function."""
    if isinstance(value, dict):
        if set(value) == {MARK} and value[MARK] in SAMPLES:
            return SAMPLES[value[MARK]]
        return {key: with_functions(item) for key, item in value.items()}
    if isinstance(value, list):
        return [with_functions(item) for item in value]
    return value

"""Unit conversion for length, mass and temperature, with English, symbol and Chinese unit names."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli import tool

Dimension = Literal["length", "mass", "temperature"]


@dataclass(frozen=True)
class Unit:
    symbol: str
    dimension: Dimension
    factor: float
    """Size in the dimension's base unit (metre, kilogram); unused for temperature."""
    names: tuple[str, ...]


UNITS: tuple[Unit, ...] = (
    Unit("m", "length", 1.0, ("meter", "metre", "米", "公尺")),
    Unit("km", "length", 1000.0, ("kilometer", "kilometre", "公里", "千米")),
    Unit("cm", "length", 0.01, ("centimeter", "centimetre", "厘米")),
    Unit("mm", "length", 0.001, ("millimeter", "millimetre", "毫米")),
    Unit("mi", "length", 1609.344, ("mile", "英里")),
    Unit("ft", "length", 0.3048, ("foot", "feet", "英尺", "呎")),
    Unit("in", "length", 0.0254, ("inch", "inches", "英寸", "吋")),
    Unit("yd", "length", 0.9144, ("yard", "码")),
    Unit("nmi", "length", 1852.0, ("nautical mile", "海里")),
    Unit("里", "length", 500.0, ("li", "市里")),
    Unit("尺", "length", 1 / 3, ("市尺",)),
    Unit("kg", "mass", 1.0, ("kilogram", "kilo", "公斤", "千克")),
    Unit("g", "mass", 0.001, ("gram", "gramme", "克")),
    Unit("mg", "mass", 0.000001, ("milligram", "毫克")),
    Unit("t", "mass", 1000.0, ("tonne", "ton", "metric ton", "吨")),
    Unit("lb", "mass", 0.45359237, ("pound", "lbs", "磅")),
    Unit("oz", "mass", 0.028349523125, ("ounce", "盎司")),
    Unit("斤", "mass", 0.5, ("jin", "市斤")),
    Unit("两", "mass", 0.05, ("liang",)),
    Unit("°C", "temperature", 1.0, ("c", "celsius", "centigrade", "℃", "摄氏度", "摄氏")),
    Unit("°F", "temperature", 1.0, ("f", "fahrenheit", "℉", "华氏度", "华氏")),
    Unit("K", "temperature", 1.0, ("kelvin", "开尔文", "开")),
)

_ABSOLUTE_ZERO_C = -273.15


def _key(name: str) -> str:
    text = " ".join(name.casefold().replace("degrees", "").replace("degree", "").split())
    return re.sub(r"^deg\s*", "", text).strip()


_BY_KEY: dict[str, Unit] = {_key(n): u for u in UNITS for n in (u.symbol, *u.names)}


def _find(name: str) -> Unit | None:
    key = _key(name)
    # Plural tolerant: "miles", "inches", "kilometers" find their singular.
    for candidate in (key, key.removesuffix("es"), key.removesuffix("s")):
        if candidate and candidate in _BY_KEY:
            return _BY_KEY[candidate]
    return None


def _known(dimension: Dimension | None) -> str:
    units = [u for u in UNITS if dimension is None or u.dimension == dimension]
    return ", ".join(f"{u.symbol} ({u.names[0]})" for u in units)


def _unknown_unit(name: str, other: Unit | None) -> ValueError:
    dimension = other.dimension if other else None
    scope = f"known {dimension} units" if dimension else "known units"
    message = f"unknown unit {name!r}. Use one of the {scope}: {_known(dimension)}."
    close = difflib.get_close_matches(_key(name), list(_BY_KEY), n=1, cutoff=0.7)
    if close:
        message += f" Did you mean {_BY_KEY[close[0]].symbol!r}?"
    return ValueError(message)


def _closest(name: str) -> Unit | None:
    found = _find(name)
    if found is not None:
        return found
    close = difflib.get_close_matches(_key(name), list(_BY_KEY), n=1, cutoff=0.7)
    return _BY_KEY[close[0]] if close else None


def _form(value: object, from_unit: str, to_unit: str) -> str:
    """The call that works, written with the caller's own value: the units as the table names
    them (the closest known one for a misspelt name); none when a unit is not known at all
    (the list above says which to pick)."""
    source, target = _closest(from_unit), _closest(to_unit)
    if source is None or target is None:
        # No form naming a unit nobody meant (km for furlong): a small model copies a form
        # whole, and converts what was not asked (get_weather's Paris for 呼和浩特, seen).
        return ""
    shown = _number(value) if isinstance(value, (int, float)) else repr(value)
    return (
        f"The form that works: convert_units(value={shown}, from_unit={source.symbol!r}, "
        f"to_unit={target.symbol!r})."
    )


def _to_celsius(value: float, unit: Unit) -> float:
    if unit.symbol == "°F":
        return (value - 32) * 5 / 9
    if unit.symbol == "K":
        return value + _ABSOLUTE_ZERO_C
    return value


def _from_celsius(value: float, unit: Unit) -> float:
    if unit.symbol == "°F":
        return value * 9 / 5 + 32
    if unit.symbol == "K":
        return value - _ABSOLUTE_ZERO_C
    return value


def _convert(value: float, source: Unit, target: Unit) -> float:
    if source.dimension != "temperature":
        return value * source.factor / target.factor
    celsius = _to_celsius(value, source)
    if celsius < _ABSOLUTE_ZERO_C - 1e-9:
        raise ValueError(f"{_number(value)} {source.symbol} is below absolute zero")
    return _from_celsius(celsius, target)


def _tidy(value: float) -> float | int:
    """10 significant digits, and whole numbers as int: 77 rather than 77.00000000000001."""
    rounded = float(f"{value:.10g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def _number(value: float | int) -> str:
    return f"{value:.10g}"


def _spaced(symbol: str) -> str:
    return symbol if symbol in ("里", "尺", "斤", "两") else f" {symbol}"


@tool(cacheable=True, permission="read")
def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert a value between units (单位换算) of length, mass (weight) or temperature.

    How many miles in kilometres, pounds in kilograms, feet and inches in metres or centimetres,
    ounces in grams, Fahrenheit in Celsius, and back (metric and imperial).

    Length: m, km, cm, mm, mi, ft, in, yd, nmi, 米, 公里/千米, 厘米, 英里, 英尺, 英寸, 里, 尺.
    Mass: kg, g, mg, t, lb, oz, 公斤/千克, 克, 吨, 磅, 盎司, 斤, 两.
    Temperature: °C (celsius, 摄氏度), °F (fahrenheit, 华氏度), K (kelvin).

    Args:
        value: The number to convert, e.g. 25.
        from_unit: The unit of the value, e.g. "°C", "km", "斤".
        to_unit: The unit to convert to, e.g. "°F", "mi", "kg".
    """
    source, target = _find(from_unit), _find(to_unit)
    if source is None or target is None:
        unknown = from_unit if source is None else to_unit
        error = _unknown_unit(unknown, target if source is None else source)
        raise ValueError(f"{error} {_form(value, from_unit, to_unit)}".rstrip())
    if source.dimension != target.dimension:
        raise ValueError(
            f"cannot convert {source.dimension} ({source.symbol}) to {target.dimension} "
            # No form naming a unit nobody asked for (mi to kg once got to_unit='m'): the
            # question says which; the list says what there is.
            f"({target.symbol}). Known {source.dimension} units: {_known(source.dimension)}."
        )
    result = _tidy(_convert(value, source, target))
    shown = _tidy(value)
    text = f"{_number(shown)}{_spaced(source.symbol)} = {_number(result)}{_spaced(target.symbol)}"
    return {
        "value": shown,
        "from_unit": source.symbol,
        "to_unit": target.symbol,
        "result": result,
        "dimension": source.dimension,
        "text": text,
    }

"""Results that report on a place: a description, the day, and a measured number with its high
and low. They are read from the words of the keys (`high_…`, a unit suffix such as `_c`), never
from one tool's field names; advice and comparisons are drawn from what they report."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._request import Exchange, decode
from toolcall_cli.offline._words import (
    PLACE_WORDS,
    field_extreme,
    is_number,
    mentions,
    shown,
    split_identifier,
    unit_of_field,
)

_WHEN_WORDS = frozenset(lx.words("day date when"))
_UNIT_SIGNS = {"celsius": "°C", "fahrenheit": "°F"}
_RAIN_SIGNS = ("雨", "rain", "shower")


@dataclass(frozen=True)
class Report:
    """What a result says about a place, in the answer's language."""

    place: str
    day: str
    description: str
    descriptions: tuple[str, ...]
    """The description in every language the result gives it in (for rain, say)."""
    unit: str
    value: float | None = None
    high: float | None = None
    low: float | None = None

    @property
    def sign(self) -> str:
        return _UNIT_SIGNS.get(self.unit, f" {self.unit}")


def read_report(data: Any, zh: bool) -> Report | None:
    """A record naming a place, describing it in words and measuring something in a known unit
    (`{"city": ..., "condition": ..., "temp_c": ...}`); None for any other result."""
    if not isinstance(data, dict):
        return None
    place = next((k for k in data if key_words(k) & PLACE_WORDS and is_text(data[k])), None)
    described = next((k for k in data if is_description(str(k), data)), None)
    unit, numbers = measured(data)
    if place is None or described is None or unit is None:
        return None
    day = next((str(data[k]) for k in data if key_words(k) & _WHEN_WORDS and is_text(data[k])), "")
    variants = (described, f"{described}_zh", f"{described}_en")
    return Report(
        place=place_name(localized(data, place, zh), zh),
        day=day,
        description=localized(data, described, zh),
        descriptions=tuple(str(data[k]) for k in variants if is_text(data.get(k))),
        unit=unit,
        **numbers,
    )


def reports_in(exchanges: Sequence[Exchange], zh: bool) -> list[Report]:
    """The reports among the results that came back, in order."""
    results = [decode(e.result or "") for e in exchanges if not e.failed]
    return [report for data in results if (report := read_report(data, zh))]


def key_words(key: Any) -> set[str]:
    return set(split_identifier(str(key)))


def is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def is_description(key: str, data: dict[str, Any]) -> bool:
    """Words that say what something is like ("Sunny"): not a place, a day, a translation of
    another field, a note, nor a reading with numbers in it ("SE 26 km/h")."""
    value = data[key]
    words = key_words(key)
    return (
        is_text(value)
        and not re.search(r"\d", value)
        and not words & (PLACE_WORDS | _WHEN_WORDS)
        and key.lower() not in lx.QUIET_FIELDS
        and not (key[-3:] in ("_zh", "_en") and key[:-3] in data)
    )


def measured(data: dict[str, Any]) -> tuple[str | None, dict[str, float]]:
    """The unit of the first field measured in one, and its numbers by role: the value, and
    its high and low when given (`temp_c`, `high_c`, `low_c`)."""
    unit: str | None = None
    numbers: dict[str, float] = {}
    for key, value in data.items():
        found = unit_of_field(str(key))
        if found is None or not is_number(value) or (unit is not None and found != unit):
            continue
        unit = found
        numbers.setdefault(field_extreme(str(key)) or "value", value)
    return unit, numbers


def localized(data: dict[str, Any], key: str, zh: bool) -> str:
    """A field in the answer's language: `condition_zh` / `condition_en`, or `condition` when
    it is already in that language."""
    plain = str(data.get(key) or "")
    if zh:
        options = [
            data.get(f"{key}_zh"),
            plain if lx.has_cjk(plain) else None,
            data.get(f"{key}_en"),
        ]
    else:
        options = [data.get(f"{key}_en"), plain if not lx.has_cjk(plain) else None]
    return next((str(o) for o in options if o), plain)


def place_name(name: str, zh: bool) -> str:
    """A place in the answer's language, when the gazetteer knows it."""
    place = lx.place_named(name)
    if place is None or lx.has_cjk(name) == zh:
        return name
    return place.zh if zh else place.en


def report_line(report: Report, reading: Reading) -> str:
    """ "北京今天：晴，10°C（3~12°C）。" / "Paris today: Sunny, 11°C (5–17°C)." and advice."""
    value, high, low = (
        None if n is None else shown(n) for n in (report.value, report.high, report.low)
    )
    sign = report.sign
    advice = clothing_advice(report, reading)
    if reading.zh:
        where = f"{report.place}{lx.DAY_NAMES_ZH.get(report.day, report.day)}"
        span = f"（{low}~{high}{sign}）" if high is not None and low is not None else ""
        number = f"，{value}{sign}{span}" if value is not None else ""
        return f"{where}：{report.description}{number}。{advice}"
    where = f"{report.place} {report.day}".strip()
    span = f" ({low}–{high}{sign})" if high is not None and low is not None else ""
    number = f", {value}{sign}{span}" if value is not None else ""
    return f"{where}: {report.description}{number}. {advice}".rstrip()


def clothing_advice(report: Report, reading: Reading) -> str:
    """Advice drawn only from the report (the day's warmest, rain), when the question asks."""
    said: list[tuple[str, str]] = []  # (Chinese, English)
    warmest = report.high if report.high is not None else report.value
    if (
        mentions(reading.text, lx.CLOTHING_WORDS)
        and report.unit == "celsius"
        and warmest is not None
    ):
        said.append(clothing_words(float(warmest)))
    rainy = any(sign in text.lower() for text in report.descriptions for sign in _RAIN_SIGNS)
    if rainy and (said or mentions(reading.text, lx.RAIN_WORDS)):
        said.append(("有雨，记得带伞。", "Rain is expected, so take an umbrella."))
    elif mentions(reading.text, lx.RAIN_WORDS):
        said.append(
            ("预报没有雨，可以不带伞。", "No rain in the forecast; you can leave the umbrella.")
        )
    return "".join(zh for zh, _ in said) if reading.zh else " ".join(en for _, en in said)


# What to wear when the day's high (°C) is at least so much, in Chinese and in English.
_CLOTHING = (
    (25.0, "适合穿短袖。", "short sleeves are fine."),
    (
        20.0,
        "白天可以穿短袖，早晚偏凉，带件薄外套。",
        "short sleeves work by day; take a light jacket for later.",
    ),
    (12.0, "不太适合穿短袖，建议长袖加外套。", "it's too cool for short sleeves: wear a jacket."),
    (-math.inf, "天冷，不适合短袖，请穿厚外套。", "it's cold: no short sleeves, wear a warm coat."),
)


def clothing_words(high: float) -> tuple[str, str]:
    least, zh, en = next((row for row in _CLOTHING if high >= row[0]), _CLOTHING[-1])
    only_zh, only_en = ("只有", " only") if least < 20 else ("", "")
    return f"最高{only_zh} {high:g}°C，{zh}", f"With a high of{only_en} {high:g}°C, {en}"


_HOTTER_RE = re.compile(r"哪.{0,6}?(?:热|暖)|比.{1,10}?(?:热|暖)")
_COLDER_RE = re.compile(r"哪.{0,6}?(?:冷|凉)|比.{1,10}?(?:冷|凉)")


def asked_comparison(reading: Reading) -> Literal["hotter", "colder"] | None:
    """Which way the question compares places, if it does: 更热 / colder / 哪个暖和."""
    text = reading.text
    if mentions(text, lx.COLDER_WORDS) or _COLDER_RE.search(text):
        return "colder"
    if mentions(text, lx.HOTTER_WORDS) or _HOTTER_RE.search(text):
        return "hotter"
    return None


def compared_temperatures(
    reading: Reading, exchanges: Sequence[Exchange]
) -> tuple[bool, str, list[tuple[str, float]]] | None:
    """(by the high?, the unit's sign, [(place, temperature)]) over the reports of temperatures,
    one per place: the day's high when every report has one (it says most about "hotter")."""
    reports = reports_in(exchanges, reading.zh)
    signs = {r.sign for r in reports}
    if len(signs) != 1 or not all(r.unit in _UNIT_SIGNS for r in reports):
        return None
    for by_high in (True, False):
        values = [
            (r.place, v) for r in reports if (v := r.high if by_high else r.value) is not None
        ]
        if len(values) == len(reports) and len({place for place, _ in values}) == len(values) >= 2:
            return by_high, signs.pop(), values
    return None


def comparison_line(reading: Reading, exchanges: Sequence[Exchange]) -> str | None:
    """Which place is hotter (or colder), when the question asks and the results can tell:
    "深圳更热（最高 28°C，广州 25°C）。" """
    direction = asked_comparison(reading)
    compared = compared_temperatures(reading, exchanges) if direction else None
    if direction is None or compared is None:
        return None
    high, sign, values = compared
    ranked = sorted(values, key=lambda cv: cv[1], reverse=direction == "hotter")
    best = f"{shown(ranked[0][1])}{sign}"
    winners = [city for city, value in ranked if value == ranked[0][1]]
    rest = [f"{city} {shown(value)}{sign}" for city, value in ranked if value != ranked[0][1]]
    if not reading.zh:
        return comparison_en(
            reading, direction, "high" if high else "temperature", winners, best, rest
        )
    word, label = ("热" if direction == "hotter" else "冷"), ("最高" if high else "气温")
    names = "和".join(winners)
    if not rest:
        return f"{names}一样{word}（{label}都是 {best}）。"
    return (
        f"{names}{'更' if len(ranked) == 2 else '最'}{word}（{label} {best}，{'，'.join(rest)}）。"
    )


def comparison_en(
    reading: Reading, direction: str, label: str, winners: list[str], best: str, rest: list[str]
) -> str:
    asked = [w for w in lx.HOTTER_WORDS + lx.COLDER_WORDS if w.isascii() and w in reading.words]
    word = asked[0] if asked else direction
    names = " and ".join(winners)
    if not rest:
        plain = {"hott": "hot", "warm": "warm", "cold": "cold", "cool": "cool", "chill": "chilly"}
        base = next((v for k, v in plain.items() if word.startswith(k)), word)
        return f"{names} are equally {base} ({label} {best} each)."
    verb = "are" if len(winners) > 1 else "is"
    if len(winners) + len(rest) > 2:
        word = "the " + superlative(word)
    return f"{names} {verb} {word} ({label} {best}; {', '.join(rest)})."


def superlative(comparative: str) -> str:
    """hotter → hottest, chillier → chilliest; a superlative stays as it is."""
    return comparative.removesuffix("er") + "est" if comparative.endswith("er") else comparative

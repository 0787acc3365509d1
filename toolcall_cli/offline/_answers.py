"""Final answers from tool results: each result as a sentence in the question's language,
and which place wins when the question compares them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._conversation import Exchange, decode
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._recovery import answerable, failure_lines
from toolcall_cli.offline._words import is_number, mentions


def final_answer(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> str:
    lines: list[str] = []
    exchanges = answerable(reading, turns, tools)
    for exchange in exchanges:
        lines += describe_exchange(exchange, reading)
    if not lines:
        return "我没能得到任何结果。" if reading.zh else "I could not get any result."
    verdict = comparison_line(reading, exchanges)
    return "\n".join([*lines, verdict] if verdict else lines)


def describe_exchange(exchange: Exchange, reading: Reading) -> list[str]:
    name = exchange.call.name
    if exchange.failed:
        return failure_lines(exchange, reading)
    data = decode(exchange.result or "")
    if isinstance(data, dict) and is_weather(data):
        return weather_lines(data, reading)
    if isinstance(data, dict) and is_conversion(data):
        return [conversion_line(data)]
    if isinstance(data, dict) and is_clock(data):
        return [clock_line(data, reading)]
    expression = next(
        (v for v in exchange.call.arguments.values() if v in reading.expressions), None
    )
    if (
        expression is not None
        and isinstance(data, (int, float, str))
        and not isinstance(data, bool)
    ):
        return [expression_line(str(expression), data)]
    return [generic_line(name, data, reading)]


def expression_line(expression: str, value: int | float | str) -> str:
    """ "12*5+3 = 63"; a rounded result says so: "10/3 ≈ 3.33"."""
    if isinstance(value, float):
        shown = short_number(value)
        exact = shown == repr(value) or float(shown) == value
        return f"{expression} {'=' if exact else '≈'} {shown}"
    return f"{expression} = {value}"


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


_TO_KEYS = lx.words("to_unit to_currency to target")
_FROM_KEYS = lx.words("from_unit from_currency from source")
_INPUT_KEYS = lx.words("value amount quantity")
_OUTPUT_KEYS = lx.words("result converted output")


def is_conversion(data: dict[str, Any]) -> bool:
    """A result that converts one quantity into another: units, currencies."""
    if isinstance(data.get("text"), str):
        return True
    return first_key(data, _TO_KEYS, str) is not None and (
        first_key(data, _OUTPUT_KEYS, (int, float)) is not None
    )


def conversion_line(data: dict[str, Any]) -> str:
    if isinstance(data.get("text"), str) and data["text"]:
        return round_decimals(str(data["text"]))
    value = data.get(first_key(data, _INPUT_KEYS, (int, float)) or "", "?")
    source = f"{shown(value)} {data.get(first_key(data, _FROM_KEYS, str) or '', '')}".strip()
    output = data[first_key(data, _OUTPUT_KEYS, (int, float)) or ""]
    return f"{source} = {shown(output)} {data[first_key(data, _TO_KEYS, str) or '']}"


def is_clock(data: dict[str, Any]) -> bool:
    return "local_time" in data or {"date", "time"} <= set(data)


def clock_line(data: dict[str, Any], reading: Reading) -> str:
    moment = data.get("local_time") or f"{data.get('date', '')} {data.get('time', '')}".strip()
    zone = data.get("timezone", "")
    weekday = localized(data, "weekday", reading.zh)
    details = [str(d) for d in (weekday, data.get("utc_offset")) if d]
    if reading.zh:
        extra = f"（{'，'.join(details)}）" if details else ""
        return f"{zone} 现在是 {moment}{extra}".strip()
    extra = f" ({', '.join(details)})" if details else ""
    return f"{zone}: {moment}{extra}".lstrip(": ")


# Fields that say what a result is about, which unit its number is in, and which are noise.
_SUBJECT_KEYS = lx.words("symbol ticker name title city location country query id code")
_UNIT_KEYS = lx.words("currency unit units to_currency to_unit to target")
_QUIET_KEYS = frozenset(lx.words("note notes source disclaimer timestamp updated as_of"))


def generic_line(name: str, data: Any, reading: Reading) -> str:
    """A result from a tool the brain has no special words for, as a short sentence."""
    if isinstance(data, dict):
        return record_sentence(name, data, reading.zh)
    if isinstance(data, list):
        items = ("、" if reading.zh else ", ").join(shown(item) for item in data[:8])
        more = "…" if len(data) > 8 else ""
        if reading.zh:
            return f"{name} 返回了 {len(data)} 项：{items}{more}。"
        return f"{name} returned {len(data)} item(s): {items}{more}."
    if isinstance(data, str):
        return f"{name} 返回：“{data}”" if reading.zh else f'{name} returned "{data}".'
    value = shown(data) if isinstance(data, (int, float)) else json.dumps(data)
    return f"{name} 的结果是 {value}。" if reading.zh else f"{name} returned {value}."


def record_sentence(name: str, data: dict[str, Any], zh: bool) -> str:
    """ "AAPL 的价格是 190.5 USD。" / "The price of AAPL is 190.5 USD.", from the keys alone:
    what it is about, its main number and that number's unit, then a few other fields."""
    scalars = {
        str(k): v for k, v in data.items() if not isinstance(v, (dict, list)) and v is not None
    }
    subject_key = first_key(scalars, _SUBJECT_KEYS, str)
    unit_key = first_key(scalars, _UNIT_KEYS, str)
    main_key = first_key(scalars, tuple(lx.FIELD_LABELS), (int, float)) or next(
        (k for k, v in scalars.items() if is_number(v)), None
    )
    used = {subject_key, unit_key, main_key}
    extras = [(k, v) for k, v in scalars.items() if k not in used and k.lower() not in _QUIET_KEYS][
        :4
    ]
    subject = str(scalars[subject_key]) if subject_key else ""
    if main_key is None:
        return fields_sentence(subject or name, extras, zh)
    english, chinese = lx.FIELD_LABELS.get(main_key.lower(), (main_key.replace("_", " "),) * 2)
    unit = f" {scalars[unit_key]}" if unit_key else ""
    value = f"{shown(scalars[main_key])}{unit}"
    detail = extras_text(extras, zh)
    if zh:
        owner = f"{subject} 的" if subject else f"{name} 返回的"
        return f"{owner}{chinese}是 {value}{detail}。"
    owner = f"The {english} of {subject}" if subject else f"The {english} from {name}"
    return f"{owner} is {value}{detail}."


def first_key(
    fields: dict[str, Any], names: Sequence[str], kind: type | tuple[type, ...]
) -> str | None:
    lowered = {k.lower(): k for k in fields}
    for name in names:
        key = lowered.get(name)
        if key is not None and isinstance(fields[key], kind) and not isinstance(fields[key], bool):
            return key
    return None


def extras_text(extras: Sequence[tuple[str, Any]], zh: bool) -> str:
    if not extras:
        return ""
    pairs = [f"{k.replace('_', ' ')}: {shown(v)}" for k, v in extras]
    return f"（{'，'.join(pairs)}）" if zh else f" ({', '.join(pairs)})"


def fields_sentence(subject: str, fields: Sequence[tuple[str, Any]], zh: bool) -> str:
    if zh:
        parts = "，".join(f"{k.replace('_', ' ')} 为 {shown(v)}" for k, v in fields)
        return f"{subject}：{parts or '没有内容'}。"
    parts = ", ".join(f"{k.replace('_', ' ')} is {shown(v)}" for k, v in fields)
    return f"{subject}: {parts or 'nothing returned'}."


def is_weather(data: dict[str, Any]) -> bool:
    return bool({"condition", "condition_en", "condition_zh", "weather"} & set(data)) and any(
        str(k).startswith("temp") or str(k).endswith("_c") for k in data
    )


def weather_lines(data: dict[str, Any], reading: Reading) -> list[str]:
    city = city_name(data, reading)
    day = str(data.get("day", ""))
    condition = localized(data, "condition", reading.zh)
    temp, high, low = (
        shown(data[k]) if data.get(k) is not None else None for k in ("temp_c", "high_c", "low_c")
    )
    known_span = high is not None and low is not None
    if reading.zh:
        where = f"{city}{lx.DAY_NAMES_ZH.get(day, day)}"
        span = f"（{low}~{high}°C）" if known_span else ""
        reading_text = f"，{temp}°C{span}" if temp is not None else ""
        return [f"{where}：{condition}{reading_text}。{clothing_advice(data, reading)}"]
    where = f"{city} {day}".strip()
    span = f" ({low}–{high}°C)" if known_span else ""
    reading_text = f", {temp}°C{span}" if temp is not None else ""
    return [f"{where}: {condition}{reading_text}. {clothing_advice(data, reading)}".rstrip()]


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


def city_name(data: dict[str, Any], reading: Reading) -> str:
    name = localized(data, "city", reading.zh)
    place = lx.place_named(name)
    if place is None or lx.has_cjk(name) == reading.zh:
        return name
    return place.zh if reading.zh else place.en


def clothing_advice(data: dict[str, Any], reading: Reading) -> str:
    """Advice derived only from the result (temperatures, rain), when the question asks for it."""
    zh: list[str] = []
    en: list[str] = []
    warmest = data.get("high_c", data.get("temp_c"))
    if mentions(reading.text, lx.CLOTHING_WORDS) and isinstance(warmest, (int, float)):
        words = clothing_words(float(warmest))
        zh.append(words[0])
        en.append(words[1])
    rainy = any(
        w in str(data.get(k, "")).lower()
        for k in ("condition", "condition_en", "condition_zh")
        for w in ("雨", "rain", "shower")
    )
    if rainy and (zh or mentions(reading.text, lx.RAIN_WORDS)):
        zh.append("有雨，记得带伞。")
        en.append("Rain is expected, so take an umbrella.")
    elif mentions(reading.text, lx.RAIN_WORDS):
        zh.append("预报没有雨，可以不带伞。")
        en.append("No rain in the forecast; you can leave the umbrella.")
    return "".join(zh) if reading.zh else " ".join(en)


def clothing_words(high: float) -> tuple[str, str]:
    if high >= 25:
        return (
            f"最高 {high:g}°C，适合穿短袖。",
            f"With a high of {high:g}°C, short sleeves are fine.",
        )
    if high >= 20:
        return (
            f"最高 {high:g}°C，白天可以穿短袖，早晚偏凉，带件薄外套。",
            f"With a high of {high:g}°C, short sleeves work by day; take a light jacket for later.",
        )
    if high >= 12:
        return (
            f"最高只有 {high:g}°C，不太适合穿短袖，建议长袖加外套。",
            f"With a high of only {high:g}°C, it's too cool for short sleeves: wear a jacket.",
        )
    return (
        f"最高只有 {high:g}°C，天冷，不适合短袖，请穿厚外套。",
        f"With a high of only {high:g}°C, it's cold: no short sleeves, wear a warm coat.",
    )


_HOTTER_RE = re.compile(r"哪.{0,6}?(?:热|暖)|比.{1,10}?(?:热|暖)")
_COLDER_RE = re.compile(r"哪.{0,6}?(?:冷|凉)|比.{1,10}?(?:冷|凉)")

# The temperature to compare by, best first: the day's high says most about "hotter".
_COMPARED_KEYS = ("high_c", "temp_c", "temperature", "temp")


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
) -> tuple[str, list[tuple[str, float]]] | None:
    """(the key compared, [(city, temperature)]) over the weather results, one per city."""
    records = [
        data
        for e in exchanges
        if not e.failed and isinstance(data := decode(e.result or ""), dict) and is_weather(data)
    ]
    for key in _COMPARED_KEYS:
        values = [(city_name(d, reading), float(d[key])) for d in records if is_number(d.get(key))]
        cities = {city for city, _ in values}
        if len(values) == len(records) and len(cities) == len(values) >= 2:
            return key, values
    return None


def comparison_line(reading: Reading, exchanges: Sequence[Exchange]) -> str | None:
    """Which place is hotter (or colder), when the question asks and the results can tell:
    "深圳更热（最高 28°C，广州 25°C）。" """
    direction = asked_comparison(reading)
    compared = compared_temperatures(reading, exchanges) if direction else None
    if direction is None or compared is None:
        return None
    key, values = compared
    ranked = sorted(values, key=lambda cv: cv[1], reverse=direction == "hotter")
    best = ranked[0][1]
    winners = [city for city, value in ranked if value == best]
    others = [(city, value) for city, value in ranked if value != best]
    high = key == "high_c"
    if reading.zh:
        return comparison_zh(direction, high, winners, best, others)
    return comparison_en(reading, direction, high, winners, best, others)


def comparison_zh(
    direction: str, high: bool, winners: list[str], best: float, others: list[tuple[str, float]]
) -> str:
    word = "热" if direction == "hotter" else "冷"
    label = "最高" if high else "气温"
    names = "和".join(winners)
    if not others:
        return f"{names}一样{word}（{label}都是 {shown(best)}°C）。"
    rest = "，".join(f"{city} {shown(value)}°C" for city, value in others)
    degree = "更" if len(winners) + len(others) == 2 else "最"
    return f"{names}{degree}{word}（{label} {shown(best)}°C，{rest}）。"


def comparison_en(
    reading: Reading,
    direction: str,
    high: bool,
    winners: list[str],
    best: float,
    others: list[tuple[str, float]],
) -> str:
    asked = [w for w in lx.HOTTER_WORDS + lx.COLDER_WORDS if w.isascii() and w in reading.words]
    word = asked[0] if asked else direction
    label = "high" if high else "temperature"
    names = " and ".join(winners)
    if not others:
        plain = {"hott": "hot", "warm": "warm", "cold": "cold", "cool": "cool", "chill": "chilly"}
        base = next((v for k, v in plain.items() if word.startswith(k)), word)
        return f"{names} are equally {base} ({label} {shown(best)}°C each)."
    rest = ", ".join(f"{city} {shown(value)}°C" for city, value in others)
    verb = "are" if len(winners) > 1 else "is"
    if len(winners) + len(others) > 2:
        word = "the " + superlative(word)
    return f"{names} {verb} {word} ({label} {shown(best)}°C; {rest})."


def superlative(comparative: str) -> str:
    """hotter → hottest, chillier → chilliest; a superlative stays as it is."""
    return comparative.removesuffix("er") + "est" if comparative.endswith("er") else comparative

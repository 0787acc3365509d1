"""Answers: from tool results, each result a sentence in the question's language (a report on a
place read from the words of its keys, with advice and comparisons drawn from what it reports);
and without tools: greetings, thanks, what tool use is, the question back when a value is
missing, saying so when no tool fits."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._question import Reading
from toolcall_cli.offline._recovery import answerable, failure_lines
from toolcall_cli.offline._request import Decision, Exchange, decode
from toolcall_cli.offline._words import (
    PLACE_WORDS,
    description_of,
    field_extreme,
    is_number,
    mentions,
    properties,
    round_decimals,
    short_number,
    shown,
    split_identifier,
    stated_values,
    unit_of_field,
)


def final_answer(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> str:
    exchanges = answerable(reading, turns, tools)
    lines = [line for e in exchanges for line in describe_exchange(e, reading, exchanges)]
    if not lines:
        return "我没能得到任何结果。" if reading.zh else "I could not get any result."
    verdict = comparison_line(reading, exchanges)
    return "\n".join([*lines, verdict] if verdict else lines)


def describe_exchange(
    exchange: Exchange, reading: Reading, others: Sequence[Exchange] = ()
) -> list[str]:
    if exchange.failed:
        return failure_lines(exchange, reading)
    data = result_values(exchange)
    report = read_report(data, reading.zh, reading.units)
    if report is not None:
        return [report_line(report, reading)]
    if isinstance(data, dict) and is_conversion(data):
        return [converted_extreme(data, reading, others) + conversion_line(data)]
    # A result telling the time: a field about time that holds a clock time ("11:04").
    if isinstance(data, dict) and field_about(data, {"time"}, _CLOCK_RE):
        return [clock_line(data, reading)]
    asked = [v for v in exchange.call.arguments.values() if v in reading.expressions]
    if asked and (is_number(data) or isinstance(data, str)):
        return [expression_line(str(asked[0]), data)]
    return [generic_line(exchange.call.name, data, reading)]


def result_values(exchange: Exchange) -> Any:
    """What a result says, as values to state (see `stated`): an answer never pastes a
    result's text. JSON with a note after it (a summary's "(the same call 2 times)") is read
    as its JSON."""
    data = decode(exchange.result or "")
    if isinstance(data, str) and data.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):
            data, _ = json.JSONDecoder().raw_decode(data.lstrip())
    return stated_values(data)


def expression_line(expression: str, value: int | float | str) -> str:
    """ "12*5+3 = 63"; a rounded result says so: "10/3 ≈ 3.33"."""
    if isinstance(value, float):
        shown = short_number(value)
        exact = shown == repr(value) or float(shown) == value
        return f"{expression} {'=' if exact else '≈'} {shown}"
    return f"{expression} = {value}"


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


def read_report(data: Any, zh: bool, wanted: Sequence[str] = ()) -> Report | None:
    """A record naming a place, describing it in words and measuring something in a known unit
    (`{"city": ..., "condition": ..., "temp_c": ...}`), in the first of the `wanted` units it
    gives (a question "in Fahrenheit" and a `temp_f` field); None for any other result."""
    if not isinstance(data, dict):
        return None
    place = next((k for k in data if key_words(k) & PLACE_WORDS and is_text(data[k])), None)
    described = next((k for k in data if is_description(str(k), data)), None)
    unit, numbers = measured(data, wanted)
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
    results = [result_values(e) for e in exchanges if not e.failed]
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


def measured(
    data: dict[str, Any], wanted: Sequence[str] = ()
) -> tuple[str | None, dict[str, float]]:
    """The first of the `wanted` units a field is measured in, else the unit of the first
    field measured in one; and its numbers by role: the value, and its high and low when
    given (`temp_c`, `high_c`, `low_c`)."""
    fields = [(str(k), v, u) for k, v in data.items() if (u := unit_of_field(str(k)))]
    units = [u for _, value, u in fields if is_number(value)]
    unit = next((u for u in wanted if u in units), units[0] if units else None)
    numbers: dict[str, float] = {}
    for key, value, found in fields:
        if found == unit and is_number(value):
            numbers.setdefault(field_extreme(key) or "value", value)
    return unit, numbers


def localized(data: dict[str, Any], key: str, zh: bool) -> str:
    """A field in the answer's language: `condition_zh` / `condition_en`, or `condition` when
    it is already in that language."""
    plain = str(data.get(key) or "")
    same = plain if lx.has_cjk(plain) == zh else None
    if zh:
        options = [data.get(f"{key}_zh"), same, data.get(f"{key}_en")]
    else:
        options = [data.get(f"{key}_en"), same]
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
    wear = mentions(reading.text, lx.CLOTHING_WORDS)
    if wear and report.unit == "celsius" and warmest is not None:
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
    most = "更" if len(ranked) == 2 else "最"
    return f"{names}{most}{word}（{label} {best}，{'，'.join(rest)}）。"


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


_TO_KEYS = lx.words("to_unit to_currency to target")
_FROM_KEYS = lx.words("from_unit from_currency from source")
_INPUT_KEYS = lx.words("value amount quantity")
_OUTPUT_KEYS = lx.words("result converted output")


def is_conversion(data: dict[str, Any]) -> bool:
    """A result that converts one quantity into another: units, currencies."""
    to_unit = first_key(data, _TO_KEYS, str)
    output = first_key(data, _OUTPUT_KEYS, (int, float))
    return isinstance(data.get("text"), str) or (to_unit is not None and output is not None)


def conversion_line(data: dict[str, Any]) -> str:
    if isinstance(data.get("text"), str) and data["text"]:
        return round_decimals(str(data["text"]))
    value = data.get(first_key(data, _INPUT_KEYS, (int, float)) or "", "?")
    source = f"{shown(value)} {data.get(first_key(data, _FROM_KEYS, str) or '', '')}".strip()
    output = data[first_key(data, _OUTPUT_KEYS, (int, float)) or ""]
    return f"{source} = {shown(output)} {data[first_key(data, _TO_KEYS, str) or '']}"


def converted_extreme(data: dict[str, Any], reading: Reading, others: Sequence[Exchange]) -> str:
    """What a conversion converted, when it is the high or low the question asked about and a
    report gave it: "北京明天的最高气温：" / "Beijing's high tomorrow: "; else ""."""
    value = data.get(first_key(data, _INPUT_KEYS, (int, float)) or "")
    if value is None or not reading.extremes:
        return ""
    for report in reports_in(others, reading.zh):
        for extreme in reading.extremes:
            if getattr(report, extreme) == value:
                return extreme_label(report.place, report.day, extreme, report.unit, reading.zh)
    return ""


def extreme_label(place: str, day: str, extreme: str, unit: str, zh: bool) -> str:
    temperature = unit in ("celsius", "fahrenheit")
    if zh:
        word = {"high": "最高", "low": "最低"}[extreme] + ("气温" if temperature else "值")
        return f"{place}{lx.DAY_NAMES_ZH.get(day, day)}的{word}："
    return f"{place}'s {extreme} {day}: ".replace("  ", " ")


_CLOCK_RE = re.compile(r"\d{1,2}:\d{2}")
_DATE_AND_TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}")


def field_about(
    data: dict[str, Any], words: set[str], pattern: re.Pattern[str] | None = None
) -> str:
    """The first text field whose name has one of `words` (and whose value matches), or ""."""
    matches = (lambda value: True) if pattern is None else pattern.search
    texts = [str(k) for k, v in data.items() if isinstance(v, str) and matches(v)]
    return next((key for key in texts if key_words(key) & words), "")


def clock_line(data: dict[str, Any], reading: Reading) -> str:
    """ "Asia/Tokyo 现在是 2025-01-02 11:04:05（星期四，+09:00）" from the fields' names alone."""
    moment = data.get(field_about(data, {"time"}, _DATE_AND_TIME_RE)) or " ".join(
        str(data[key]) for key in (field_about(data, {"date"}), field_about(data, {"time"})) if key
    )
    zone = data.get(field_about(data, {"timezone", "zone", "tz"}), "")
    weekday = field_about(data, {"weekday"})
    offset = data.get(field_about(data, {"offset"}))
    details = [
        str(d) for d in (localized(data, weekday, reading.zh) if weekday else "", offset) if d
    ]
    if reading.zh:
        extra = f"（{'，'.join(details)}）" if details else ""
        return f"{zone} 现在是 {moment}{extra}".strip()
    extra = f" ({', '.join(details)})" if details else ""
    return f"{zone}: {moment}{extra}".lstrip(": ")


# Fields that say what a result is about, which unit its number is in, and which are noise.
_SUBJECT_KEYS = lx.words("symbol ticker name title city location country query id code")
_UNIT_KEYS = lx.words("currency unit units to_currency to_unit to target")


def generic_line(name: str, data: Any, reading: Reading) -> str:
    """A result from a tool the model has no special words for, as a short sentence."""
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
    extras = [
        (k, v) for k, v in scalars.items() if k not in used and k.lower() not in lx.QUIET_FIELDS
    ][:4]
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


_TOPICS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("toolcall",),
        "toolcall 是一个终端程序，把大模型的工具调用过程逐步展示出来：发送问题和工具定义、"
        "解析模型发出的调用、校验并运行本地工具、把结果回传给模型，直到模型给出最终回答。",
        "toolcall is a terminal program that shows LLM tool use step by step: it sends the "
        "question and tool definitions, parses the calls the model emits, validates and runs "
        "local tools, feeds the results back, and loops until the model answers.",
    ),
    (
        (
            "tool use",
            "function calling",
            "function call",
            "tool call",
            "工具调用",
            "函数调用",
            "工具使用",
        ),
        "工具调用（tool use / function calling）是指：模型拿到一组工具的名字、描述和参数 schema，"
        "需要时不直接回答，而是输出一个结构化的调用（工具名 + JSON 参数）；程序执行这个工具，"
        "把结果作为消息回传，模型再根据结果继续调用或给出最终回答。模型的输出不可全信，所以每一步都要校验。",
        "Tool use (function calling) means the model is given tools — names, descriptions and "
        "JSON Schema parameters — and, instead of answering directly, emits a structured call "
        "(a tool name plus JSON arguments). The program runs the tool, sends the result back as "
        "a message, and the model either calls again or gives its final answer. A model's output "
        "can't be trusted blindly, so every step is validated.",
    ),
)


def direct_answer(reading: Reading, tools: Sequence[ToolSpec]) -> Decision:
    for phrases, zh, en in _TOPICS:
        if mentions(reading.text, phrases):
            return Decision(text=zh if reading.zh else en)
    if mentions(reading.text, lx.THANKS):
        return Decision(text="不客气！还有什么可以帮你的吗？" if reading.zh else "You're welcome!")
    abilities = ability_list(tools, reading)
    if mentions(reading.text, lx.GREETINGS):
        head = (
            "你好！我可以用这些工具帮你：" if reading.zh else "Hello! I can help with these tools:"
        )
        return Decision(text=f"{head}\n{abilities}" if tools else head.rstrip("：:") + "。")
    if reading.zh:
        head = "这个问题我的工具帮不上忙，我也不想猜。我能做的是："
    else:
        head = "None of my tools fits that question, and I'd rather not guess. They can do this:"
    return Decision(
        text=f"{head}\n{abilities}" if tools else head.split("，")[0].split(",")[0] + "."
    )


def no_currency_tool(reading: Reading, tools: Sequence[ToolSpec]) -> str:
    """Say so rather than misuse a unit converter or a calculator without exchange rates."""
    if reading.zh:
        head = "我的工具都不能换算货币，也查不到汇率，我不想乱猜。"
        return f"{head}我能做的是：\n{ability_list(tools, reading)}" if tools else head
    head = "None of my tools converts currencies or knows exchange rates, and I'd rather not guess."
    return f"{head} They can do this:\n{ability_list(tools, reading)}" if tools else head


def ask_for(spec: ToolSpec, missing: Sequence[str], reading: Reading) -> str:
    """The question back when a tool fits but the question gives none of what it requires."""
    props = properties(spec)
    described: list[str] = []
    for name in missing:
        detail = first_line(description_of(props.get(name, {}))).rstrip(".。 ")
        if not detail:
            described.append(name)
        else:
            described.append(f"{name}（{detail}）" if reading.zh else f"{name} ({detail})")
    if reading.zh:
        return f"我可以用 {spec.name} 来回答，但还需要你告诉我：{'、'.join(described)}。"
    needs = ", ".join(described)
    return f"I can answer that with {spec.name}, but I need the {needs}. Could you tell me?"


def ability_list(tools: Sequence[ToolSpec], reading: Reading) -> str:
    empty = "（无描述）" if reading.zh else "(no description)"
    return "\n".join(f"- {t.name}: {first_line(t.description) or empty}" for t in tools)


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""

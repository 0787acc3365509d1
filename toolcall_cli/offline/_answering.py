"""Answers, in the question's language: from results, each a sentence stating the values read
(a report on a place from the words of its keys, with advice and a comparison drawn from it; a
conversion; a time; a calculation; any other record), never pasting a result's text; what
failed, honestly; and without tools: greetings, thanks, what tool use is, the question back
when a value is missing, saying so when no tool fits."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._planning import fix_call, named
from toolcall_cli.offline._reading import (
    PLACE_WORDS,
    Reading,
    description_of,
    field_extreme,
    is_number,
    mentions,
    properties,
    required,
    split_identifier,
    unit_of_field,
)
from toolcall_cli.offline._request import Exchange, read_json

_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}")
_WHEN = frozenset(lx.words("day date when"))
_SIGNS = {"celsius": "°C", "fahrenheit": "°F"}


def final_answer(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> str:
    exchanges = answerable(reading, turns, tools)
    lines = [line for e in exchanges for line in described(e, reading, exchanges, tools)]
    if not lines:
        return "我没能得到任何结果。" if reading.zh else "I could not get any result."
    verdict = comparison(reading, exchanges)
    return "\n".join([*lines, verdict] if verdict else lines)


def answerable(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> list[Exchange]:
    """Each result once, and the failures no later call retried or made good."""
    kept: list[Exchange] = []
    for t, turn in enumerate(turns):
        later = [e for u in turns[t + 1 :] for e in u]
        for exchange in turn:
            if exchange.failed and made_good(exchange, later, reading, tools):
                continue
            if not exchange.failed and any(exchange.call == k.call for k in kept):
                continue
            kept.append(exchange)
    return kept


def made_good(
    failed: Exchange, later: Sequence[Exchange], reading: Reading, tools: Sequence[ToolSpec]
) -> bool:
    """A later call retried the failed one, or did what it was for: the same tool (or the one
    its error named) with the value it was given."""
    ok = [e for e in later if not e.failed]
    if failed.unparsed or failed.call.skipped:
        return any(failed.unparsed or e.call.name == failed.call.name for e in ok)
    fixed = fix_call(failed, reading, tools)
    if fixed is not None and any(e.call == fixed for e in later):
        return True
    names = {failed.call.name, fixed.name if fixed else ""}
    given = [v for v in failed.call.arguments.values() if isinstance(v, str)][:1]
    return any(
        e.call.name in names and all(v in e.call.arguments.values() for v in given) for e in ok
    )


def described(
    exchange: Exchange, reading: Reading, others: Sequence[Exchange], tools: Sequence[ToolSpec]
) -> list[str]:
    if exchange.failed:
        return failure_lines(exchange, reading, tools)
    data = stated_values(result_data(exchange.result or ""))
    report = read_report(data, reading.zh)
    if report is not None:
        return [report_line(report, reading)]
    if isinstance(data, dict) and is_conversion(data):
        return [converted_extreme(data, reading, others) + conversion_line(data)]
    if isinstance(data, dict) and any(
        isinstance(v, str) and _DATE_TIME.search(v) for v in data.values()
    ):
        return [clock_line(data, reading)]
    asked = [v for v in exchange.call.arguments.values() if v in reading.expressions]
    if asked and (is_number(data) or isinstance(data, str)):
        return [expression_line(str(asked[0]), data)]
    return [generic_line(exchange.call.name, data, reading)]


def result_data(result: str) -> Any:
    """A result as data: its JSON (the JSON before a note after it too), else its text."""
    data = read_json(result, result)
    if isinstance(data, str) and data.lstrip()[:1] in ("{", "["):
        try:
            return json.JSONDecoder().raw_decode(data.lstrip())[0]
        except (ValueError, RecursionError):
            return data
    return data


# --- stating, never pasting --------------------------------------------------------------------


def stated(text: str, limit: int = 200) -> str:
    """Words read from a result as an answer states them: up to the first tag or JSON, on one
    line, at most `limit` characters. Pasted whole, a result's text would say as the model's
    own words whatever it held (a `<tool_call>` a web page planted, say)."""
    flat = " ".join(text[: limit * 4].split())
    markup = re.search(r"[<{]", flat)
    plain = flat[: markup.start()].rstrip() if markup else flat
    if len(plain) > limit:
        return plain[: limit - 1].rstrip() + "…"
    return plain + "…" if markup or len(text) > limit * 4 else plain


def stated_values(value: Any, depth: int = 0) -> Any:
    """A decoded result with every string in it stated: the values read, not the text."""
    if isinstance(value, str):
        return stated(value)
    if isinstance(value, (dict, list)) and depth >= 16:
        return "…"
    if isinstance(value, dict):
        return {stated(str(k)): stated_values(v, depth + 1) for k, v in list(value.items())[:64]}
    if isinstance(value, list):
        return [stated_values(v, depth + 1) for v in value[:64]]
    return value


def short_number(value: float) -> str:
    """Two decimals (154.3235835 → 154.32); three significant digits below 1."""
    if not math.isfinite(value) or value.is_integer():
        return str(int(value)) if math.isfinite(value) else str(value)
    return f"{value:.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.3g}"


def shown(value: Any) -> str:
    if isinstance(value, float):
        return short_number(value)
    if isinstance(value, str):
        return re.sub(
            r"(?<![\d.])(-?\d+\.\d{3,})(?![\d.])", lambda m: short_number(float(m[1])), value
        )
    return str(value)


# --- what a result says -----------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What a result says of a place, in the answer's language."""

    place: str
    day: str
    description: str
    descriptions: tuple[str, ...]
    unit: str
    value: float | None = None
    high: float | None = None
    low: float | None = None

    @property
    def sign(self) -> str:
        return _SIGNS.get(self.unit, f" {self.unit}")


def words_of(key: Any) -> set[str]:
    return set(split_identifier(str(key)))


def read_report(data: Any, zh: bool) -> Report | None:
    """A record naming a place, describing it in words and measuring it in a known unit
    (`{"city": ..., "condition": ..., "temp_c": ...}`); None for any other."""
    if not isinstance(data, dict):
        return None
    texts = {k: v for k, v in data.items() if isinstance(v, str) and v}
    place = next((k for k in texts if words_of(k) & PLACE_WORDS), None)
    described = next((k for k in texts if is_description(k, data)), None)
    numbers: dict[str, float] = {}
    unit = None
    for key, value in data.items():
        found = unit_of_field(str(key))
        if found and is_number(value) and unit in (None, found):
            unit = found
            numbers.setdefault(field_extreme(str(key)) or "value", value)
    if place is None or described is None or unit is None:
        return None
    day = next((v for k, v in texts.items() if words_of(k) & _WHEN), "")
    variants = (described, f"{described}_zh", f"{described}_en")
    return Report(
        place_name(localized(data, place, zh), zh),
        day,
        localized(data, described, zh),
        tuple(texts[k] for k in variants if k in texts),
        unit,
        **numbers,
    )


def is_description(key: str, data: dict[str, Any]) -> bool:
    """Words of what something is like ("Sunny"): not a place, a day, a note, a translation of
    another field, nor a reading with numbers ("SE 26 km/h")."""
    return (
        not re.search(r"\d", data[key])
        and not words_of(key) & (PLACE_WORDS | _WHEN)
        and key.lower() not in lx.QUIET_FIELDS
        and not (key[-3:] in ("_zh", "_en") and key[:-3] in data)
    )


def localized(data: dict[str, Any], key: str, zh: bool) -> str:
    """A field in the answer's language: `key_zh` / `key_en`, or `key` in that language."""
    plain = str(data.get(key) or "")
    same = plain if lx.has_cjk(plain) == zh else None
    options = (
        [data.get(f"{key}_zh"), same, data.get(f"{key}_en")]
        if zh
        else [data.get(f"{key}_en"), same]
    )
    return next((str(o) for o in options if o), plain)


def place_name(name: str, zh: bool) -> str:
    place = lx.place_named(name)
    return name if place is None or lx.has_cjk(name) == zh else place.zh if zh else place.en


def report_line(report: Report, reading: Reading) -> str:
    """ "北京今天：晴，10°C（3~12°C）。" / "Paris today: Sunny, 11°C (5–17°C)." and advice."""
    value, high, low = (
        None if n is None else shown(n) for n in (report.value, report.high, report.low)
    )
    sign, advice = report.sign, clothing_advice(report, reading)
    if reading.zh:
        span = f"（{low}~{high}{sign}）" if high is not None and low is not None else ""
        number = f"，{value}{sign}{span}" if value is not None else ""
        return f"{report.place}{lx.DAY_NAMES_ZH.get(report.day, report.day)}：{report.description}{number}。{advice}"
    span = f" ({low}–{high}{sign})" if high is not None and low is not None else ""
    number = f", {value}{sign}{span}" if value is not None else ""
    return (
        f"{f'{report.place} {report.day}'.strip()}: {report.description}{number}. {advice}".rstrip()
    )


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
"""What to wear when the day's high (°C) is at least so much."""


def clothing_advice(report: Report, reading: Reading) -> str:
    """Advice drawn only from the report (the day's warmest, rain), when the question asks."""
    said: list[tuple[str, str]] = []
    warmest = report.high if report.high is not None else report.value
    if (
        mentions(reading.text, lx.CLOTHING_WORDS)
        and report.unit == "celsius"
        and warmest is not None
    ):
        least, zh, en = next(row for row in _CLOTHING if warmest >= row[0])
        only_zh, only_en = ("只有", " only") if least < 20 else ("", "")
        said.append(
            (f"最高{only_zh} {warmest:g}°C，{zh}", f"With a high of{only_en} {warmest:g}°C, {en}")
        )
    rainy = any(s in text.lower() for text in report.descriptions for s in ("雨", "rain", "shower"))
    asks_rain = mentions(reading.text, lx.RAIN_WORDS)
    if rainy and (said or asks_rain):
        said.append(("有雨，记得带伞。", "Rain is expected, so take an umbrella."))
    elif asks_rain:
        said.append(
            ("预报没有雨，可以不带伞。", "No rain in the forecast; you can leave the umbrella.")
        )
    return "".join(zh for zh, _ in said) if reading.zh else " ".join(en for _, en in said)


def comparison(reading: Reading, exchanges: Sequence[Exchange]) -> str | None:
    """Which place is hotter (or colder), when the question asks and the reports can tell:
    "深圳更热（最高 28°C，广州 25°C）。" """
    text = reading.text
    colder = mentions(text, lx.COLDER_WORDS) or re.search(
        r"哪.{0,6}?(?:冷|凉)|比.{1,10}?(?:冷|凉)", text
    )
    hotter = mentions(text, lx.HOTTER_WORDS) or re.search(
        r"哪.{0,6}?(?:热|暖)|比.{1,10}?(?:热|暖)", text
    )
    reports = [
        r
        for e in exchanges
        if not e.failed
        and (r := read_report(stated_values(result_data(e.result or "")), reading.zh))
    ]
    if (
        not (colder or hotter)
        or len({r.sign for r in reports}) != 1
        or any(r.unit not in _SIGNS for r in reports)
    ):
        return None
    for by_high in (True, False):
        values = [
            (r.place, v) for r in reports if (v := r.high if by_high else r.value) is not None
        ]
        if len(values) == len(reports) and len({p for p, _ in values}) == len(values) >= 2:
            return verdict(reading, bool(hotter and not colder), by_high, reports[0].sign, values)
    return None


def verdict(
    reading: Reading, hotter: bool, by_high: bool, sign: str, values: list[tuple[str, float]]
) -> str:
    ranked = sorted(values, key=lambda pv: pv[1], reverse=hotter)
    best = f"{shown(ranked[0][1])}{sign}"
    winners = [p for p, v in ranked if v == ranked[0][1]]
    rest = [f"{p} {shown(v)}{sign}" for p, v in ranked if v != ranked[0][1]]
    if reading.zh:
        word, label = ("热" if hotter else "冷"), ("最高" if by_high else "气温")
        if not rest:
            return f"{'和'.join(winners)}一样{word}（{label}都是 {best}）。"
        return f"{'和'.join(winners)}{'更' if len(ranked) == 2 else '最'}{word}（{label} {best}，{'，'.join(rest)}）。"
    asked = [w for w in lx.HOTTER_WORDS + lx.COLDER_WORDS if w.isascii() and w in reading.words]
    word, label, names = (
        (asked[0] if asked else "hotter" if hotter else "colder"),
        ("high" if by_high else "temperature"),
        " and ".join(winners),
    )
    if not rest:
        plain = {"hott": "hot", "warm": "warm", "cold": "cold", "cool": "cool", "chill": "chilly"}
        return f"{names} are equally {next((v for k, v in plain.items() if word.startswith(k)), word)} ({label} {best} each)."
    if len(ranked) > 2:
        word = "the " + (word.removesuffix("er") + "est" if word.endswith("er") else word)
    return (
        f"{names} {'are' if len(winners) > 1 else 'is'} {word} ({label} {best}; {', '.join(rest)})."
    )


def first_key(data: dict[str, Any], names: str, kind: type | tuple[type, ...]) -> str | None:
    lowered = {str(k).lower(): k for k in data}
    return next(
        (
            lowered[n]
            for n in names.split()
            if n in lowered
            and isinstance(data[lowered[n]], kind)
            and not isinstance(data[lowered[n]], bool)
        ),
        None,
    )


def is_conversion(data: dict[str, Any]) -> bool:
    """A result converting one quantity into another: units, currencies."""
    return isinstance(data.get("text"), str) or (
        first_key(data, "to_unit to_currency to target", str) is not None
        and first_key(data, "result converted output", (int, float)) is not None
    )


def conversion_line(data: dict[str, Any]) -> str:
    if isinstance(data.get("text"), str) and data["text"]:
        return shown(data["text"])
    value = data.get(first_key(data, "value amount quantity", (int, float)) or "", "?")
    source = f"{shown(value)} {data.get(first_key(data, 'from_unit from_currency from source', str) or '', '')}"
    output = data[first_key(data, "result converted output", (int, float)) or ""]
    return f"{source.strip()} = {shown(output)} {data[first_key(data, 'to_unit to_currency to target', str) or '']}"


def converted_extreme(data: dict[str, Any], reading: Reading, others: Sequence[Exchange]) -> str:
    """What a conversion converted, when it is the high or low asked about: "北京明天的最高气温："."""
    value = data.get(first_key(data, "value amount quantity", (int, float)) or "")
    results = [stated_values(result_data(e.result or "")) for e in others if not e.failed]
    for report in (r for data in results if (r := read_report(data, reading.zh))):
        for extreme in (
            e for e in reading.extremes if value is not None and getattr(report, e) == value
        ):
            if reading.zh:
                word = {"high": "最高", "low": "最低"}[extreme] + (
                    "气温" if report.unit in _SIGNS else "值"
                )
                return f"{report.place}{lx.DAY_NAMES_ZH.get(report.day, report.day)}的{word}："
            return f"{report.place}'s {extreme} {report.day}: ".replace("  ", " ")
    return ""


def clock_line(data: dict[str, Any], reading: Reading) -> str:
    """ "Asia/Tokyo 现在是 2025-01-02 11:04（星期四，+09:00）", from the fields' names alone."""
    moments = [k for k, v in data.items() if isinstance(v, str) and _DATE_TIME.search(v)]
    moment = data[next((k for k in moments if "time" in words_of(k)), moments[0])]
    zone = next(
        (
            v
            for k, v in data.items()
            if words_of(k) & {"timezone", "zone", "tz"} and isinstance(v, str)
        ),
        "",
    )
    weekday = next(
        (k for k in data if "weekday" in words_of(k) and not k.endswith(("_zh", "_en"))), None
    )
    offset = next(
        (v for k, v in data.items() if "offset" in words_of(k) and isinstance(v, str)), None
    )
    details = [d for d in (localized(data, weekday, reading.zh) if weekday else "", offset) if d]
    if reading.zh:
        extra = f"（{'，'.join(details)}）" if details else ""
        return f"{zone} 现在是 {moment}{extra}".strip()
    extra = f" ({', '.join(details)})" if details else ""
    return f"{zone}: {moment}{extra}".lstrip(": ")


def expression_line(expression: str, value: Any) -> str:
    """ "12*5+3 = 63"; a rounded result says so: "10/3 ≈ 3.33"."""
    number = read_json(value, value) if isinstance(value, str) else value
    if isinstance(number, float):
        text = short_number(number)
        return f"{expression} {'=' if float(text) == number else '≈'} {text}"
    return f"{expression} = {value}"


def generic_line(name: str, data: Any, reading: Reading) -> str:
    """A result of a tool the model has no words for, as a short sentence."""
    zh = reading.zh
    if isinstance(data, dict):
        return record_sentence(name, data, zh)
    if isinstance(data, list):
        items = ("、" if zh else ", ").join(shown(item) for item in data[:8]) + (
            "…" if len(data) > 8 else ""
        )
        return (
            f"{name} 返回了 {len(data)} 项：{items}。"
            if zh
            else f"{name} returned {len(data)} item(s): {items}."
        )
    if isinstance(data, str):
        return f"{name} 返回：“{data}”" if zh else f'{name} returned "{data}".'
    value = shown(data) if is_number(data) else json.dumps(data)
    return f"{name} 的结果是 {value}。" if zh else f"{name} returned {value}."


def record_sentence(name: str, data: dict[str, Any], zh: bool) -> str:
    """ "The price of AAPL is 190.5 USD.", from the keys alone: what it is about, its main
    number and that number's unit, then a few other fields (yes/no flags left out)."""
    scalars = {
        str(k): v
        for k, v in data.items()
        if isinstance(v, (str, int, float)) and not isinstance(v, bool)
    }
    subject_key = first_key(
        scalars, "symbol ticker name title city location country query id code", str
    )
    unit_key = first_key(scalars, "currency unit units to_currency to_unit to target", str)
    main_key = first_key(scalars, " ".join(lx.FIELD_LABELS), (int, float)) or next(
        (k for k, v in scalars.items() if is_number(v)), None
    )
    extras = [
        (k, v)
        for k, v in scalars.items()
        if k not in (subject_key, unit_key, main_key) and k.lower() not in lx.QUIET_FIELDS
    ][:4]
    subject = str(scalars[subject_key]) if subject_key else ""
    if main_key is None:
        joiner, word, nothing = (
            ("，", " 为 ", "没有内容") if zh else (", ", " is ", "nothing returned")
        )
        parts = joiner.join(f"{k.replace('_', ' ')}{word}{shown(v)}" for k, v in extras)
        return f"{subject or name}{'：' if zh else ': '}{parts or nothing}{'。' if zh else '.'}"
    english, chinese = lx.FIELD_LABELS.get(main_key.lower(), (main_key.replace("_", " "),) * 2)
    value = f"{shown(scalars[main_key])}{f' {scalars[unit_key]}' if unit_key else ''}"
    pairs = [f"{k.replace('_', ' ')}: {shown(v)}" for k, v in extras]
    if zh:
        detail = f"（{'，'.join(pairs)}）" if pairs else ""
        return f"{f'{subject} 的' if subject else f'{name} 返回的'}{chinese}是 {value}{detail}。"
    detail = f" ({', '.join(pairs)})" if pairs else ""
    return f"{f'The {english} of {subject}' if subject else f'The {english} from {name}'} is {value}{detail}."


# --- what failed --------------------------------------------------------------------------------


def failure_lines(exchange: Exchange, reading: Reading, tools: Sequence[ToolSpec]) -> list[str]:
    """What failed, its error stated line by line, and what to tell me to try again."""
    name = exchange.call.name or "?"
    if exchange.call.skipped:  # why what it waited for failed is said on that call's line
        waited = "、".join(exchange.call.depends_on) or "?"
        if reading.zh:
            return [f"{name} 没有运行：它依赖的调用（{waited}）失败了。"]
        return [f"{name} did not run: the call it depends on ({waited}) failed."]
    error = exchange.result or "no result"
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    head = re.sub(r"^error:?\s*", "", lines[0] if lines else "", flags=re.I) or "unknown error"
    items = [f"  - {stated(line.lstrip('- '), 160)}" for line in lines[1:] if line.startswith("-")]
    spec = next((t for t in tools if t.name == exchange.call.name), None)
    missing = [
        p
        for p in (required(spec) if spec else [])
        if p not in exchange.call.arguments and named(error, p)
    ]
    head = stated(head, 160)
    if reading.zh:
        ask = f"请告诉我 {'、'.join(missing)}，我再试一次。" if missing else ""
        failed = f"抱歉，{name} 调用失败：{head.rstrip(':：' if items else '.。')}"
        lines = [f"{failed}：", *items] if items else [f"{failed}。{ask}"]
    else:
        ask = f"Tell me the {', '.join(missing)} and I'll try again." if missing else ""
        failed = f"Sorry, {name} failed: {head.rstrip(':' if items else '.')}"
        lines = [f"{failed}:", *items] if items else [f"{failed}. {ask}".rstrip()]
    return [*lines, ask] if items and ask else lines


def short_error(error: str) -> str:
    """An error on one line, stated: its first line and its items."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    head = re.sub(r"^error:?\s*", "", lines[0] if lines else "", flags=re.I)
    items = [line.lstrip("- ") for line in lines[1:] if line.startswith("-")]
    return stated(f"{head} {'; '.join(items)}".strip(), 160)


# --- without tools -------------------------------------------------------------------------------

_TOPICS = (
    (
        ("toolcall",),
        "toolcall 是一个终端程序，把大模型的工具调用过程逐步展示出来：发送问题和工具定义、解析模型发出的调用、"
        "校验并运行本地工具、把结果回传给模型，直到模型给出最终回答。",
        "toolcall is a terminal program that shows LLM tool use step by step: it sends the question "
        "and tool definitions, parses the calls the model emits, validates and runs local tools, feeds "
        "the results back, and loops until the model answers.",
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
        "工具调用（tool use / function calling）是指：模型拿到一组工具的名字、描述和参数 schema，需要时不直接"
        "回答，而是输出一个结构化的调用（工具名 + JSON 参数）；程序执行这个工具，把结果作为消息回传，模型再根据"
        "结果继续调用或给出最终回答。模型的输出不可全信，所以每一步都要校验。",
        "Tool use (function calling) means the model is given tools — names, descriptions and JSON "
        "Schema parameters — and, instead of answering directly, emits a structured call (a tool name "
        "plus JSON arguments). The program runs the tool, sends the result back as a message, and the "
        "model either calls again or gives its final answer. A model's output can't be trusted "
        "blindly, so every step is validated.",
    ),
)


def direct_answer(reading: Reading, tools: Sequence[ToolSpec]) -> str:
    zh = reading.zh
    topic = next(
        (
            zh_text if zh else en
            for phrases, zh_text, en in _TOPICS
            if mentions(reading.text, phrases)
        ),
        None,
    )
    if topic:
        return topic
    if mentions(reading.text, lx.THANKS):
        return "不客气！还有什么可以帮你的吗？" if zh else "You're welcome!"
    if mentions(reading.text, lx.GREETINGS):
        head = "你好！我可以用这些工具帮你：" if zh else "Hello! I can help with these tools:"
        return f"{head}\n{abilities(tools, zh)}" if tools else head.rstrip("：:") + "。"
    if zh:
        head = "这个问题我的工具帮不上忙，我也不想猜。我能做的是："
    else:
        head = "None of my tools fits that question, and I'd rather not guess. They can do this:"
    return f"{head}\n{abilities(tools, zh)}" if tools else head.split("，")[0].split(",")[0] + "."


def no_currency_tool(reading: Reading, tools: Sequence[ToolSpec]) -> str:
    """Say so, rather than misuse a unit converter or a calculator without exchange rates."""
    if reading.zh:
        head = "我的工具都不能换算货币，也查不到汇率，我不想乱猜。"
        return f"{head}我能做的是：\n{abilities(tools, True)}" if tools else head
    head = "None of my tools converts currencies or knows exchange rates, and I'd rather not guess."
    return f"{head} They can do this:\n{abilities(tools, False)}" if tools else head


def ask_for(spec: ToolSpec, missing: Sequence[str], reading: Reading) -> str:
    """The question back, when a tool fits but the question gives none of what it requires."""
    props = properties(spec)
    described = []
    for name in missing:
        detail = first_line(description_of(props.get(name, {}))).rstrip(".。 ")
        described.append(
            name if not detail else f"{name}（{detail}）" if reading.zh else f"{name} ({detail})"
        )
    if reading.zh:
        return f"我可以用 {spec.name} 来回答，但还需要你告诉我：{'、'.join(described)}。"
    return f"I can answer that with {spec.name}, but I need the {', '.join(described)}. Could you tell me?"


def abilities(tools: Sequence[ToolSpec], zh: bool) -> str:
    empty = "（无描述）" if zh else "(no description)"
    return "\n".join(f"- {t.name}: {first_line(t.description) or empty}" for t in tools)


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""

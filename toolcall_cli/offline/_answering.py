"""Answers in the question's language: the values results hold, stated (never pasted), what
failed, honestly; without tools, what tool use is, thanks, hello, or the question back."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models import _conversation as rq
from toolcall_cli.models._conversation import Exchange, named, read_json
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline import _reading as rd
from toolcall_cli.offline._planning import Tools, fix_call, measures

_SIGNS = {"celsius": "°C", "fahrenheit": "°F"}
_WEAR = (  # what to wear when the day's high (°C) is at least so much
    (25.0, "适合穿短袖。", "short sleeves are fine."),
    (20.0, "白天可以穿短袖，早晚偏凉，带件薄外套。", "short sleeves by day, a jacket for later."),
    (12.0, "不太适合穿短袖，建议长袖加外套。", "it's too cool for short sleeves: wear a jacket."),
    (-math.inf, "天冷，不适合短袖，请穿厚外套。", "it's cold: no short sleeves, wear a warm coat."),
)


def final_answer(reading: rd.Reading, turns: Sequence[Sequence[Exchange]], tools: Tools) -> str:
    """Each result once, and each failure no later call retried or made good."""
    said: list[Exchange] = []
    for t, turn in enumerate(turns):
        later = [e for u in turns[t + 1 :] for e in u]
        for e in turn:
            done = e.call in [s.call for s in said]
            said += [] if (made_good(e, later, reading, tools) if e.failed else done) else [e]
    lines = [line for e in said for line in described(e, reading, said, tools)]
    return "\n".join(lines) or lx.phrase("nothing", reading.zh)


def made_good(failed: Exchange, later: list[Exchange], reading: rd.Reading, tools: Tools) -> bool:
    """A later call retried the failed one, or the same tool (or the one it meant) worked."""
    done = [e.call.name for e in later if not e.failed]
    if failed.unparsed or failed.call.skipped:
        return bool(done) and (failed.unparsed or failed.call.name in done)
    fixed = fix_call(failed, reading, tools)
    names = {failed.call.name, fixed.name if fixed else ""}
    return any(e.call == fixed for e in later) or bool(names & set(done))


def described(e: Exchange, reading: rd.Reading, said: list[Exchange], tools: Tools) -> list[str]:
    if e.failed:
        return failure(e, reading, tools)
    data = values_of(e.result or "")
    kinds = (report_line, conversion_line, expression_line)
    line = next((line for kind in kinds if (line := kind(data, reading, said, e))), "")
    return [line or record(e.call.name, data, reading.zh)]


def values_of(result: str) -> Any:
    """A result's values (its JSON, a note after it aside), each string stated, never pasted."""
    data = read_json(result, result)
    if isinstance(data, str) and data.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):
            data = json.JSONDecoder().raw_decode(data.lstrip())[0]
    return stated_values(data)


def stated(text: str, limit: int = 200) -> str:
    """Words from a result as an answer states them: to the first tag or JSON, on one line, at
    most `limit` characters. Pasted whole, a result would say as the model's own words
    whatever it held (a `<tool_call>` a web page planted, say)."""
    flat = " ".join(text[: limit * 4].split())
    markup = re.search(r"[<{]", flat)
    plain = flat[: markup.start()].rstrip() if markup else flat
    if len(plain) > limit:  # whole sentences, so that a long error is not cut mid-word
        ends = [m.end() for m in re.finditer(r"[.?!](?=\s)|[。？！]", plain[:limit])]
        return plain[: ends[-1]] if ends and ends[-1] >= limit // 2 else plain[: limit - 1] + "…"
    return plain + "…" if markup or len(text) > limit * 4 else plain


def stated_values(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return stated(value)
    if isinstance(value, (dict, list)) and depth >= 16:
        return "…"
    if isinstance(value, dict):
        return {stated(str(k)): stated_values(v, depth + 1) for k, v in list(value.items())[:64]}
    return [stated_values(v, depth + 1) for v in value[:64]] if isinstance(value, list) else value


def shown(value: Any) -> str:
    """A number as an answer shows it: 154.3235835 → 154.32, 0.0123456 → 0.0123."""
    if isinstance(value, str):
        return re.sub(r"(?<![\d.])(-?\d+\.\d{3,})(?![\d.])", lambda m: shown(float(m[1])), value)
    if not isinstance(value, float) or not math.isfinite(value) or value.is_integer():
        return str(int(value) if isinstance(value, float) and value.is_integer() else value)
    return f"{value:.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.3g}"


def words_of(key: Any) -> set[str]:
    return set(rd.split_identifier(str(key)))


def localized(data: dict[str, Any], key: str, zh: bool) -> str:
    """A field in the answer's language: `key_zh` / `key_en`, or `key` when in it."""
    plain = str(data.get(key) or "")
    same = plain if lx.has_cjk(plain) == zh else None
    options = [data.get(f"{key}_zh"), same, data.get(f"{key}_en")]
    return next((str(o) for o in (options if zh else options[:0:-1]) if o), plain)


def report(data: Any, zh: bool, wanted: Sequence[str] = ()) -> dict[str, Any] | None:
    """A place's report: a record naming it, in words and numbers (`city, condition, temp_c`),
    in the first unit `wanted` it gives (a question "in Fahrenheit" and a `temp_f` field)."""
    data = data if isinstance(data, dict) else {}
    texts = {str(k): v for k, v in data.items() if isinstance(v, str) and v}
    place = next((k for k in texts if words_of(k) & rd.PLACE_WORDS), None)
    about = next((k for k in texts if is_description(k, texts)), None)
    found = numbers_of(data, wanted)
    if place is None or about is None or "unit" not in found:
        return None
    where = place_in(localized(texts, place, zh), zh)
    return found | {"place": where, "about": localized(texts, about, zh)} | day_of(texts, about)


def day_of(texts: dict[str, str], about: str) -> dict[str, Any]:
    """Which day a report is for, and whether its words (`condition`, `condition_en`) say rain."""
    day = next((v for k, v in texts.items() if words_of(k) & {"day", "date", "when"}), "")
    words = [v.lower() for k, v in texts.items() if k.startswith(about)]
    return {"day": day, "rain": any(w in v for v in words for w in ("雨", "rain"))}


def numbers_of(data: dict[str, Any], wanted: Sequence[str]) -> dict[str, Any]:
    """The numbers of a report in a unit wanted, else its first: its value, high and low."""
    units = [unit for _, unit, _ in measures(data)]
    unit = next((u for u in wanted if u in units), units[0] if units else None)
    numbers = {rd.field_extreme(k) or "value": v for v, u, k in measures(data)[::-1] if u == unit}
    return {"unit": unit, **numbers} if units else {}


def place_in(name: str, zh: bool) -> str:
    """A place as the answer's language writes it, when the gazetteer knows it."""
    known = lx.place_named(name)
    return name if not known or lx.has_cjk(name) == zh else known.zh if zh else known.en


def is_description(key: str, texts: dict[str, str]) -> bool:
    """Words of what it is like ("Sunny"): no place, day, note, translation, nor "SE 26 km/h"."""
    translated = key[-3:] in ("_zh", "_en") and key[:-3] in texts
    other = words_of(key) & (rd.PLACE_WORDS | {"day", "date", "when"}) or key in lx.WORDS["quiet"]
    return not (re.search(r"\d", texts[key]) or other or translated)


def report_line(data: Any, reading: rd.Reading, *_: Any) -> str:
    """ "北京今天：晴，10°C（3~12°C）。" / "Paris today: Sunny, 11°C (5–17°C)." and advice."""
    found = report(data, reading.zh, [unit for _, unit in reading.units])
    if found is None:
        return ""
    sign = _SIGNS.get(found["unit"], f" {found['unit']}")
    value, high, low = (shown(found[k]) if k in found else None for k in ("value", "high", "low"))
    span = high is not None and low is not None
    place, day, about, tip = found["place"], found["day"], found["about"], advice(found, reading)
    if reading.zh:
        number = f"，{value}{sign}" + (f"（{low}~{high}{sign}）" if span else "") if value else ""
        return f"{place}{lx.DAYS_ZH.get(day, day)}：{about}{number}。{tip}"
    number = f", {value}{sign}" + (f" ({low}–{high}{sign})" if span else "") if value else ""
    return f"{f'{place} {day}'.strip()}: {about}{number}. {tip}".rstrip()


def advice(found: dict[str, Any], reading: rd.Reading) -> str:
    """What to wear, drawn only from the report (the day's warmest, rain), when asked."""
    high = found.get("high", found.get("value"))
    asked = rd.mentions(reading.text, lx.WORDS["clothing"])
    if not asked or found["unit"] != "celsius" or high is None:
        return ""
    least, zh, en = next(row for row in _WEAR if high >= row[0])
    only = ("只有", " only") if least < 20 else ("", "")
    rain = ("有雨，记得带伞。", " It may rain: take an umbrella.") if found["rain"] else ("", "")
    if reading.zh:
        return f"最高{only[0]} {high:g}°C，{zh}{rain[0]}"
    return f"With a high of{only[1]} {high:g}°C, {en}{rain[1]}"


def field(data: dict[str, Any], names: str, kind: type | tuple[type, ...] = (int, float)) -> Any:
    lowered = {str(k).lower(): v for k, v in data.items()}
    found = (lowered[n] for n in names.split() if n in lowered)
    return next((v for v in found if isinstance(v, kind) and not isinstance(v, bool)), None)


def conversion_line(data: Any, reading: rd.Reading, said: list[Exchange], *_: Any) -> str:
    """ "18 °C = 64.4 °F", after the high or low it converted, when asked ("北京的最高气温：")."""
    data = data if isinstance(data, dict) else {}
    value, output = field(data, "value amount quantity"), field(data, "result converted output")
    target, source = (field(data, f"{w}_unit {w}_currency {w}", str) for w in ("to", "from"))
    if isinstance(data.get("text"), str) and data["text"]:
        line = shown(data["text"])
    elif output is not None and target is not None:
        line = f"{shown(value)} {source or ''}".strip() + f" = {shown(output)} {target}"
    else:
        return ""
    return extreme_label(value, reading, said) + line


def extreme_label(value: Any, reading: rd.Reading, said: list[Exchange]) -> str:
    """ "北京明天的最高气温：" when the value converted is a high or low a report gave."""
    results = [values_of(e.result or "") for e in said if not e.failed]
    for found in (r for data in results if (r := report(data, reading.zh))):
        for x in (x for x in reading.extremes if value is not None and found.get(x) == value):
            day = lx.DAYS_ZH.get(found["day"], found["day"]) if reading.zh else found["day"]
            word, place = {"high": "最高", "low": "最低"}[x], found["place"]
            label = lx.phrase("extreme", reading.zh, place=place, day=day, word=word, extreme=x)
            return label.replace("  ", " ")
    return ""


def expression_line(data: Any, reading: rd.Reading, said: Any, e: Exchange) -> str:
    """ "12*5+3 = 63"; a rounded result says so: "10/3 ≈ 3.33"."""
    asked = [v for v in e.call.arguments.values() if v in reading.expressions]
    if not asked or not (rq.is_number(data) or isinstance(data, str)):
        return ""
    exact = not isinstance(data, float) or float(shown(data)) == data
    return f"{asked[0]} {'=' if exact else '≈'} {shown(data) if isinstance(data, float) else data}"


def record(name: str, data: Any, zh: bool) -> str:
    """Any other result, stated: a few of its values ("lookup_stock: price 154.32, currency
    USD"), its text ('echo returned "hi".') or its value ("process_id returned 4242.")."""
    if isinstance(data, str):
        return f"{name} 返回：“{data}”" if zh else f'{name} returned "{data}".'
    if not isinstance(data, (dict, list)):
        value = shown(data) if rq.is_number(data) else json.dumps(data)
        return f"{name} 的结果是 {value}。" if zh else f"{name} returned {value}."
    items = data.items() if isinstance(data, dict) else (("", v) for v in data)
    facts = [(str(k), v) for k, v in items if type(v) in (str, int, float)]
    quiet = lx.WORDS["quiet"]
    kept = [f"{k.replace('_', ' ')} {shown(v)}".strip() for k, v in facts if k not in quiet][:6]
    return f"{name}：{'，'.join(kept)}。" if zh else f"{name}: {', '.join(kept)}."


def failure(e: Exchange, reading: rd.Reading, tools: Tools) -> list[str]:
    """What failed, its error stated line by line, and what to tell me to try again."""
    name, zh = e.call.name or "?", reading.zh
    if e.call.skipped:  # why what it waited for failed is said on that call's line
        return [lx.phrase("skipped", zh, name=name, waited="、".join(e.call.depends_on) or "?")]
    head, items = error_lines(e.result or "no result")
    ask = ask_back(e, zh, tools)
    failed = lx.phrase("failed", zh, name=name, why=head.rstrip(":：" if items else ".。"))
    if items:
        listed = [f"  - {item}" for item in items]
        return [failed + ("：" if zh else ":"), *listed, *([ask] if ask else [])]
    closed = head.endswith(("?", "？", "!", "！"))  # an error asking "… 'X'?" takes no full stop
    end = "" if closed and zh else " " if closed else "。" if zh else ". "
    return [f"{failed}{end}{ask}".rstrip()]


def ask_back(e: Exchange, zh: bool, tools: Tools) -> str:
    """What to tell me to try again: the required values the error names and the call lacked."""
    spec = rd.tool_named(tools, e.call.name)
    needed = [p for p in rq.required(spec) if p not in e.call.arguments]
    missing = [p for p in needed if named(e.result or "", p)]
    return lx.phrase("tell", zh, names=("、" if zh else ", ").join(missing)) if missing else ""


def error_lines(error: str) -> tuple[str, list[str]]:
    """An error's first line and its listed items, stated (an error is a tool's text too)."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    head = re.sub(r"^error:?\s*", "", lines[0] if lines else "", flags=re.I) or "unknown error"
    return stated(head, 160), [stated(line[1:].strip(), 160) for line in lines if line[0] == "-"]


_TOOL_USE = (
    "工具调用（function calling）：模型拿到工具的名字、描述和参数 schema，需要时输出结构化的"
    "调用（工具名 + JSON 参数）；程序运行工具、回传结果，模型再调用或回答。每一步都要校验。",
    "Tool use (function calling): given tools (names, descriptions, JSON Schema parameters), a "
    "model may emit a call (a tool name and JSON arguments) instead of an answer; the program runs "
    "it and sends the result back, and the model calls again or answers. Every step is checked.",
)


def direct_answer(reading: rd.Reading, tools: Tools, money: bool = False) -> str:
    """What tool use is, you're welcome, or hello; else that no tool fits, and what they do."""
    text, zh = reading.text, reading.zh
    if rd.mentions(text, lx.WORDS["tool_use"]) and not money:
        return _TOOL_USE[0 if zh else 1]
    if rd.mentions(text, lx.WORDS["thanks"]) and not money:
        return lx.phrase("thanks", zh)
    hello = rd.mentions(text, lx.WORDS["greetings"]) and not money
    head = lx.phrase("money" if money else "hello" if hello else "none", zh)
    listed = [f"- {t.name}: {first_line(t.description) or '(no description)'}" for t in tools]
    end = "。" if zh else "."
    return "\n".join([head, *listed]) if tools else re.split(r"[，,:：]", head)[0] + end


def ask_for(spec: ToolSpec, missing: Sequence[str], reading: rd.Reading) -> str:
    """The question back, when a tool fits but the question gives none of what it requires."""
    zh, props = reading.zh, rq.properties(spec)
    abouts = [(n, first_line(rq.description_of(props.get(n, {}))).rstrip(".。 ")) for n in missing]
    needs = [n + ((f"（{a}）" if zh else f" ({a})") if a else "") for n, a in abouts]
    return lx.phrase("ask", zh, tool=spec.name, needs=("、" if zh else ", ").join(needs))


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""

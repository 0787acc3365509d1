"""Planning calls: which tools a question needs and their arguments (several values, several
calls); follow-ups in a chat; what is left once results come back (a conversion asked for), or
with --dag in the same reply through a placeholder; and a failed call put right from what its
error says, read as any model reads it: the names, values and types it mentions."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._reading import (
    Reading,
    Role,
    canonical_unit,
    description_of,
    english_words,
    enum_values,
    field_extreme,
    is_number,
    mentions,
    param_role,
    param_roles,
    positions,
    properties,
    read_question,
    required,
    split_identifier,
    unit_of_field,
)
from toolcall_cli.offline._request import Call, Exchange, read_json


def tool_score(spec: ToolSpec, reading: Reading) -> float:
    """How clearly a tool is about the question: its concepts and words the question shares
    (its name weighs most, then its description, then its parameters), and values it takes."""
    sources = [(" ".join(split_identifier(spec.name)), 3.0), (spec.description[:2000], 2.0)]
    sources += [
        (" ".join(split_identifier(n)) + " " + description_of(s), 1.0)
        for n, s in properties(spec).items()
    ]
    weights: dict[str, float] = {}
    for text, weight in sources:
        words = english_words(text)
        concepts = {
            c
            for c, ts in lx.CONCEPTS.items()
            if any(t in text if lx.has_cjk(t) else t in words for t in ts)
        }
        keys = {f"c:{c}" for c in concepts} | {
            f"w:{w}" for w in words if len(w) > 2 and w not in lx.NOISE_WORDS
        }
        weights |= {k: max(weights.get(k, 0.0), weight) for k in keys}
    score = sum(
        w * (0.5 if k == "c:date" else 1.0)
        for k, w in weights.items()
        if (k[2:] in reading.concepts if k[0] == "c" else k[2:] in reading.words)
    )
    roles = param_roles(spec)
    bonuses: list[tuple[bool, set[Role], float]] = [
        (bool(reading.expressions), {"expression"}, 3.0),
        (bool(reading.tickers), {"symbol"}, 2.0),
        (bool(reading.unit_spans), {"unit_from", "unit_to", "unit"}, 1.0),
        (bool(reading.currencies), {"currency_from", "currency_to", "currency"}, 1.0),
        (bool(reading.places), {"place", "timezone"}, 0.5),
    ]
    return score + sum(bonus for asked, wanted, bonus in bonuses if asked and roles & wanted)


@dataclass(frozen=True)
class Filling:
    """A tool's calls for the question, and the required parameters nothing could fill."""

    calls: tuple[Call, ...]
    missing: tuple[str, ...]
    spec: ToolSpec = field(compare=False)

    @property
    def empty(self) -> bool:
        """Not one required value could be read: a call would send nothing it needs."""
        return len(self.missing) == len(set(required(self.spec)))


@dataclass(frozen=True)
class Plan:
    calls: tuple[Call, ...] = ()
    complete: bool = True
    """False: the best tool's partial attempt (some values are missing)."""
    wanted: Filling | None = None
    """When nothing can be called: the tool that would answer, and what it lacks."""


def make_plan(reading: Reading, tools: Sequence[ToolSpec]) -> Plan:
    """Every call the question needs now, from the tools clearly about it. A tool that lacks a
    value only another's result gives waits for a later turn ("巴黎现在多少华氏度")."""
    scored = sorted(
        ((tool_score(s, reading), i, s) for i, s in enumerate(tools)), key=lambda t: (-t[0], t[1])
    )
    chosen = [(score, fill_tool(spec, reading)) for score, _, spec in scored if score >= 2.0]
    if not chosen:
        return Plan()
    best_score, best = chosen[0]
    ready = [(s, f) for s, f in chosen if not f.missing and (best.missing or s >= best_score / 2)]
    if ready:
        return Plan(tuple(call for _, filling in ready for call in filling.calls))
    # Nothing can be filled: the best tool with what it has (its error says what is missing),
    # never with none of what it requires.
    return Plan(() if best.empty else best.calls, complete=False, wanted=best)


def fill_tool(spec: ToolSpec, reading: Reading) -> Filling:
    values: dict[str, list[Any]] = {}
    # Numbers inside an expression belong to it, not to numeric parameters.
    numbers = (
        [] if reading.expressions and "expression" in param_roles(spec) else list(reading.numbers)
    )
    for name, schema in properties(spec).items():
        found = param_values(param_role(name, schema), schema, reading, numbers)
        if found:
            values[name] = found
    missing = tuple(n for n in required(spec) if n not in values)
    return Filling(spread_calls(spec.name, values), missing, spec)


def spread_calls(name: str, values: dict[str, list[Any]]) -> tuple[Call, ...]:
    """One call per value of the first many-valued parameter (北京 and 上海: two calls)."""
    shared = {p: v[0] for p, v in values.items()}
    spread = next((p for p, v in values.items() if len(v) > 1), None)
    if spread is None:
        return (Call(name, shared, next(iter(shared.items()), None)),)
    return tuple(Call(name, {**shared, spread: v}, (spread, v)) for v in values[spread])


def param_values(
    role: Role, schema: dict[str, Any], reading: Reading, numbers: list[float]
) -> list[Any]:
    if role == "enum":
        return enum_match(enum_values(schema), reading)
    if role == "number":
        return [as_number(numbers.pop(0), schema)] if numbers else []
    if role in ("place", "timezone"):
        return place_values(role, schema, reading)
    if role in ("unit_from", "unit_to", "unit"):
        unit = direction(role, reading.unit_spans, reading.text)
        return [tool_unit(unit, schema)] if unit else []
    if role in ("currency_from", "currency_to", "currency"):
        code = direction(role, reading.currencies, reading.text)
        return [code] if code else []
    if role == "text":
        return quoted_texts(reading.text)[:1] or [gist(reading.text)]
    return {"symbol": list(reading.tickers), "expression": list(reading.expressions)}.get(role, [])


def as_number(value: float, schema: dict[str, Any]) -> int | float:
    if not math.isfinite(value):
        return value
    return int(value) if schema.get("type") == "integer" or value.is_integer() else value


def enum_match(options: list[Any], reading: Reading) -> list[Any]:
    """The option the question names, itself or by a synonym (明天 → "tomorrow")."""
    lowered, hits = reading.text.lower(), []
    for option in options:
        word = str(option).lower()
        spellings = {
            word,
            *lx.ENUM_SYNONYMS.get(word, ()),
            *lx.UNITS.get(canonical_unit(word) or "", ()),
        }
        spellings |= set(lx.CURRENCIES.get(str(option).upper(), ()))
        found = [p for s in spellings if s for p in positions(lowered, s.lower())]
        if found:
            hits.append((min(found), option))
    return [option for _, option in sorted(hits, key=lambda h: h[0])][:1]


def place_values(role: Role, schema: dict[str, Any], reading: Reading) -> list[str]:
    description = description_of(schema)
    if role == "timezone":
        zones = re.findall(
            r"\b(?:UTC|GMT|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b", reading.text
        )
        if zones:
            return list(dict.fromkeys(zones))
    wants_zone = role == "timezone" and ("/" in description or "iana" in description.lower())
    english = "english" in description.lower() or "英文" in description
    chinese = "chinese" in description.lower() or "中文" in description
    found = []
    for name in reading.places:
        place = lx.place_named(name)
        if place is not None and wants_zone:
            name = place.timezone
        elif place is not None and english != chinese:  # "in Chinese or English": as written
            name = place.en if english else place.zh
        found.append(name)
    return found


def quoted_texts(text: str) -> list[str]:
    """Text the question quotes ("Echo 'hello'"): the text meant, not the question."""
    pattern = r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])|\"([^\"]+)\"|“([^”]+)”|「([^」]+)」"
    return [next(g for g in m.groups() if g) for m in re.finditer(pattern, text)]


def gist(text: str) -> str:
    trimmed = re.sub(r"^(please|请问|请|帮我|麻烦你?)\s*", "", text.strip(), flags=re.I)
    return trimmed.rstrip("?？!！。. ")


def direction(role: Role, spans: Sequence[tuple[int, str]], text: str) -> str | None:
    """The unit or currency a parameter wants: a source is the one right after a number ("How
    many pounds is 70 kg?": kg), else the first; a target the last other one."""
    names = [name for _, name in spans]
    numbered = [
        i for i, (at, _) in enumerate(spans) if text[max(0, at - 3) : at].rstrip()[-1:].isdigit()
    ]
    if not names or role in ("unit", "currency"):
        return names[0] if names else None
    source_wanted = role.endswith("_from")
    if len(names) == 1:
        return names[0] if source_wanted == bool(numbered) else None
    source = numbered[0] if numbered else 0
    return (
        names[source]
        if source_wanted
        else next(names[i] for i in range(len(names) - 1, -1, -1) if i != source)
    )


def tool_unit(unit: str, schema: dict[str, Any]) -> str:
    """How the tool writes the unit: an enum member, a spelling its description uses, or ours."""
    options = [str(o) for o in enum_values(schema) if canonical_unit(str(o)) == unit]
    described = description_of(schema).lower()
    spelled = [
        s
        for s in lx.UNITS[unit]
        if len(s) > 1 and s.isascii() and s.isalpha() and re.search(rf"\b{s}\b", described)
    ]
    return (options or spelled or [unit])[0]


# --- a chat, and what is left to do ------------------------------------------------------------


def context_calls(
    reading: Reading, tools: Sequence[ToolSpec], earlier: Sequence[tuple[str, tuple[Exchange, ...]]]
) -> list[Call]:
    """Calls for a question that leans on the chat: "Paris" answers the question back about a
    missing city, "And in Fahrenheit?" converts a result, "那上海呢？" asks again for another."""
    if not earlier:
        return []
    question, made = earlier[-1]
    if not made:
        combined = make_plan(read_question(f"{question}\n{reading.text}", tools), tools)
        if combined.complete and combined.calls:
            return list(combined.calls)
    for _, exchanges in reversed(earlier):
        done = [e for e in exchanges if not e.failed]
        if done:
            converted = conversion_calls(reading, tools, done)
            return converted or (
                ellipsis_calls(reading, tools, done) if elliptical(reading) else []
            )
    return []


def elliptical(reading: Reading) -> bool:
    """ "那上海呢？", "And Tokyo?", "What about tomorrow?": a question leaning on the last one."""
    leaning = r"^\s*(?:and|what about|how about|also|same for|now|那么?|还有|换成|改成)(?![a-z])|呢\s*[?？。.!！]*\s*$"
    courtesy = mentions(reading.text, (*lx.THANKS, *lx.GREETINGS))
    return not courtesy and re.search(leaning, reading.text, re.I) is not None


def ellipsis_calls(
    reading: Reading, tools: Sequence[ToolSpec], done: Sequence[Exchange]
) -> list[Call]:
    """The earlier calls again, with the values this question gives in their place."""
    by_name = {spec.name: spec for spec in tools}
    calls: list[Call] = []
    for exchange in done:
        spec = by_name.get(exchange.call.name)
        if spec is None:
            continue
        values = fill_tool(spec, reading).calls[0].arguments
        given = {
            n: [v]
            for n, v in values.items()
            if param_role(n, properties(spec)[n]) != "text" and v != exchange.call.arguments.get(n)
        }
        if given:
            calls += spread_calls(
                spec.name, {**{n: [v] for n, v in exchange.call.arguments.items()}, **given}
            )
    return distinct(calls)


def pending_calls(
    reading: Reading, tools: Sequence[ToolSpec], history: Sequence[Exchange]
) -> list[Call]:
    """The question's calls not made yet (a partial attempt is made once, never again)."""
    planned = make_plan(reading, tools)
    items = planned.calls if planned.complete else ()
    return [item for item in items if not attempted(item, history, items)]


def attempted(item: Call, history: Sequence[Exchange], items: Sequence[Call]) -> bool:
    """Some earlier call stands for this planned one (maybe corrected)."""
    alone = sum(1 for p in items if p.name == item.name) == 1
    return any(
        e.call.name == item.name
        and not e.unparsed
        and (
            e.call.arguments == item.arguments
            or alone
            or bool(item.key and e.call.arguments.get(item.key[0]) == item.key[1])
        )
        for e in history
    )


@dataclass(frozen=True)
class Measure:
    value: int | float | str
    """A number; with --dag, a placeholder for one another call returns."""
    unit: str
    key: str = ""
    """The result field it is read from (`high_c`)."""


def measures_in(result: str) -> list[Measure]:
    """Numbers with a known unit in a result: fields like temp_c, or text like "18°C"."""
    data = read_json(result, result)
    if isinstance(data, dict):
        return [
            Measure(v, u, str(k))
            for k, v in data.items()
            if (u := unit_of_field(str(k))) and is_number(v)
        ]
    if not isinstance(data, str):
        return []
    found = re.findall(r"(?<![\d.])(-?\d+(?:\.\d+)?)\s*(°C|°F|℃|℉|km|kg|lb)", data[:2000])
    return [Measure(float(n), u) for n, w in found if (u := canonical_unit(w))]


def converter_tool(tools: Sequence[ToolSpec]) -> ToolSpec | None:
    return next((s for s in tools if {"number", "unit_from", "unit_to"} <= param_roles(s)), None)


def conversion_calls(
    reading: Reading, tools: Sequence[ToolSpec], history: Sequence[Exchange]
) -> list[Call]:
    """The question wants a unit no result is in yet: each result's number converted."""
    converter = converter_tool(tools)
    if converter is None or not reading.unit_spans:
        return []
    results = [e for e in history if not e.failed and e.call.name != converter.name]
    have = {m.unit for e in results for m in measures_in(e.result or "")}
    calls = [
        conversion_call(converter, source, target)
        for target in dict.fromkeys(reading.units)
        if target not in have
        for exchange in results
        for source in meant(measures_in(exchange.result or ""), target, reading.extremes)
    ]
    # A conversion that could not be read (cut off, broken) was not made: made again.
    return distinct(
        calls, [e.call for e in history if e.call.name == converter.name and not e.unparsed]
    )


def meant(measures: Sequence[Measure], unit: str, extremes: Sequence[str]) -> list[Measure]:
    """What the question asks to convert into `unit`: the high or low it names, else the value
    now, else the first that converts."""
    convertible = [m for m in measures if lx.DIMENSIONS.get(m.unit) == lx.DIMENSIONS.get(unit)]
    named = [
        next(m for m in convertible if field_extreme(m.key) == e)
        for e in extremes
        if any(field_extreme(m.key) == e for m in convertible)
    ]
    now = [m for m in convertible if field_extreme(m.key) is None]
    return named or now[:1] or convertible[:1]


def distinct(calls: Sequence[Call], made: Sequence[Call] = ()) -> list[Call]:
    fresh: list[Call] = []
    for call in calls:
        if call not in made and call not in fresh:
            fresh.append(call)
    return fresh


def conversion_call(converter: ToolSpec, source: Measure, target: str) -> Call:
    arguments: dict[str, Any] = {}
    valued = False
    for name, schema in properties(converter).items():
        role = param_role(name, schema)
        if role == "number" and not valued:
            arguments[name], valued = source.value, True
        elif role in ("unit_from", "unit_to"):
            arguments[name] = tool_unit(source.unit if role == "unit_from" else target, schema)
    return Call(converter.name, arguments)


def chained_calls(
    calls: Sequence[Call], reading: Reading, tools: Sequence[ToolSpec]
) -> tuple[Call, ...]:
    """With --dag, the question's calls and the conversions of their results it asks for, in
    one reply: the conversion's value a placeholder for the field the first tool's description
    says its result holds (`temp_c`, `high_c`). () when nothing chains."""
    converter = converter_tool(tools)
    if converter is None or not reading.unit_spans:
        return ()
    by_name = {spec.name: spec for spec in tools}
    taken: set[str] = set()
    firsts: list[Call] = []
    seconds: list[Call] = []
    for call in calls:
        spec = by_name.get(call.name)
        described = re.findall(
            r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?!\w)",
            spec.description if spec else "",
        )
        measures = (
            [Measure(0, u, k) for k in dict.fromkeys(described) if (u := unit_of_field(k))]
            if spec is not converter
            else []
        )
        wanted = [u for u in dict.fromkeys(reading.units) if u not in {m.unit for m in measures}]
        sources = [(t, m) for t in wanted for m in meant(measures, t, reading.extremes)]
        if not sources:
            firsts.append(call)
            continue
        ref = fresh_ref(call.name, taken)
        firsts.append(replace(call, ref=ref))
        for target, measure in sources:
            placeholder = replace(measure, value="{{" + f"{ref}.{measure.key}" + "}}")
            second = conversion_call(converter, placeholder, target)
            seconds.append(replace(second, ref=fresh_ref(converter.name, taken), depends_on=(ref,)))
    return (*firsts, *seconds) if seconds else ()


def fresh_ref(tool: str, taken: set[str]) -> str:
    """A short name for a call, unique in the reply: `weather`, `weather2`, `units`."""
    base = (split_identifier(tool) or ["call"])[-1]
    ref, number = base, 1
    while ref in taken:
        number += 1
        ref = f"{base}{number}"
    taken.add(ref)
    return ref


def asks_currency_conversion(reading: Reading) -> bool:
    """Money from one currency into another, or an exchange rate (two currencies inside
    arithmetic, "I won 100 dollars, 100*3?", are no such question)."""
    codes = {code for _, code in reading.currencies}
    return bool(codes) and (
        (len(codes) >= 2 and not reading.expressions) or mentions(reading.text, lx.EXCHANGE_WORDS)
    )


def handles_currencies(spec: ToolSpec) -> bool:
    words = english_words(f"{' '.join(split_identifier(spec.name))} {spec.description[:2000]}")
    money = {"currency_from", "currency_to", "currency"}
    return bool(param_roles(spec) & money) or bool(words & set(lx.CONCEPTS["currency"]))


# --- putting a failed call right ----------------------------------------------------------------

_TRANSIENT = ("timed out", "timeout", "try again", "temporar", "unavailable", "rate limit", "later")
"""Words any error says of a failure that may pass: an identical call may then be tried once."""


def fix_call(exchange: Exchange, reading: Reading, tools: Sequence[ToolSpec]) -> Call | None:
    """The call put right where its error points: a tool it names for an unknown one, an
    argument it names moved or filled, a value it says is wrong made one it allows."""
    error, call = exchange.result or "", exchange.call
    by_name = {spec.name: spec for spec in tools}
    spec = by_name.get(call.name)
    if spec is None:
        meant_tool = closest(call.name, [n for n in by_name if named(error, n)])
        return Call(meant_tool, call.arguments, call.key) if meant_tool else None
    props, needed = properties(spec), required(spec)
    pointed = [p for p in props if named(error, p)]
    arguments = suggested(dict(call.arguments), error)
    for wrong in [a for a in call.arguments if a not in props and named(error, a)]:
        value = arguments.pop(wrong)
        free = [p for p in pointed if p not in arguments]
        target = closest(wrong, [p for p in free if p in needed]) or closest(wrong, free, 0.5)
        if target:
            arguments[target] = value
    missing = [p for p in needed if p in pointed and p not in arguments]
    fresh = fill_tool(spec, reading).calls if missing else ()
    source = next(
        (c for c in fresh if call.key and c.arguments.get(call.key[0]) == call.key[1]),
        fresh[0] if fresh else None,
    )
    arguments |= {p: source.arguments[p] for p in missing if source and p in source.arguments}
    fixed = {
        n: fitted(v, props[n], error, reading) if n in pointed else v for n, v in arguments.items()
    }
    return Call(call.name, fixed, call.key)


def named(text: str, word: str) -> bool:
    """`word` stands in `text` as a name of its own, not inside a longer one."""
    return bool(word) and re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None


def closest(word: str, candidates: Sequence[str], cutoff: float = 0.0) -> str | None:
    scored = [
        (difflib.SequenceMatcher(None, word.casefold(), c.casefold()).ratio(), c)
        for c in candidates
    ]
    best = max(scored, default=None, key=lambda s: s[0])
    return best[1] if best is not None and best[0] >= cutoff else None


def suggested(arguments: dict[str, Any], error: str) -> dict[str, Any]:
    """A value the error quotes beside one of ours, alike enough to be what was meant ("unknown
    city 'Pari' ... 'Paris'"), in its place."""
    quoted = [
        next(g for g in m.groups() if g)
        for m in re.finditer(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"", error[:2000])
    ]
    fixed = dict(arguments)
    for name, value in arguments.items():
        if isinstance(value, str) and value in quoted:
            better = closest(
                value, [q for q in quoted if q != value and q not in arguments.values()], 0.6
            )
            fixed[name] = better or value
    return fixed


def fitted(value: Any, schema: dict[str, Any], error: str, reading: Reading) -> Any:
    """A value the error points at, as the schema allows: one of its enum values (the same
    unit, the one the question names, or the closest), or of its type."""
    options = enum_values(schema)
    if options and value not in options:
        same_unit = [
            o for o in options if canonical_unit(str(o)) == canonical_unit(str(value)) is not None
        ]
        return (
            same_unit
            or enum_match(options, reading)
            or [closest(str(value), [str(o) for o in options])]
        )[0]
    kind = schema.get("type")
    if kind in ("number", "integer") and named(error, kind) and isinstance(value, str):
        found = re.search(r"-?\d+(?:\.\d+)?", value)
        return as_number(float(found[0]), schema) if found else value
    return value


def retry_allowed(fixed: Call, failed: Exchange, history: Sequence[Exchange]) -> bool:
    """Never a call that already failed, but for one identical retry of an error that may pass."""
    same = [e for e in history if e.failed and e.call == fixed]
    if fixed != failed.call:
        return not same
    error = (failed.result or "").lower()
    return any(word in error for word in _TRANSIENT) and len(same) < 2

"""Planning calls: the tools a question needs and their arguments (several values, several calls);
a conversion of results the question asks for (with --dag, in the same reply); a call put right."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models import _conversation as rq
from toolcall_cli.models._conversation import Call, Exchange, read_json
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline import _reading as rd

Tools = Sequence[ToolSpec]
History = Sequence[Exchange]
Schema = dict[str, Any]  # a parameter's JSON Schema
Measure = tuple[Any, str, str]  # a number (or a placeholder for one), its unit, its field
_BONUSES = lx.table("""
expressions: 3 expression ; tickers: 2 symbol ; units: 1 unit_from unit_to unit
currencies: 1 currency_from currency_to currency ; places: 0.5 place timezone
""")
"""What a question holds (a Reading's field) → what a tool gains that takes it, and its roles."""


def tool_score(spec: ToolSpec, reading: rd.Reading) -> float:
    """How clearly a tool is about the question: shared concepts and words, and values it takes."""
    weights, roles = tool_terms(spec), rd.roles_of(spec)
    places = {w for place in reading.places for w in rd.english_words(place)}  # not a topic
    asked = {f"c:{c}" for c in reading.concepts} | {f"w:{w}" for w in reading.words - places}
    score = sum(w / 2 if k == "c:date" else w for k, w in weights.items() if k in asked)
    gains = [float(b[0]) for k, b in _BONUSES.items() if getattr(reading, k) and roles & set(b[1:])]
    return score + sum(gains)


def tool_terms(spec: ToolSpec) -> dict[str, float]:
    """The concepts (`c:`) and words (`w:`) a tool is about, weighed by where it says them:
    its name, its description, a parameter's name and description."""
    texts = [(" ".join(rd.split_identifier(spec.name)), 3.0), (spec.description[:2000], 2.0)]
    texts += [(f"{n} {rq.description_of(s)}", 1.0) for n, s in rq.properties(spec).items()]
    weights: dict[str, float] = {}
    for text, weight in texts:
        words = {w for w in rd.english_words(text) if len(w) > 2 and w not in lx.WORDS["noise"]}
        for key in {*(f"c:{c}" for c in rd.concepts_of(text)), *(f"w:{w}" for w in words)}:
            weights[key] = max(weights.get(key, 0.0), weight)
    return weights


@dataclass(frozen=True)
class Plan:
    """The calls; whether they are all (else the best tool's attempt without some of what it
    requires); and when nothing can be called, the tool that would answer and what it lacks."""

    calls: tuple[Call, ...] = ()
    complete: bool = True
    wanted: tuple[ToolSpec, tuple[str, ...]] | None = None


def make_plan(reading: rd.Reading, tools: Tools) -> Plan:
    """The calls the question needs now, one tool for each need (two clocks answer no two
    questions) but the tools as much about it as the best, which it cannot tell apart. A tool
    lacking a value only another's result gives waits for a later turn."""
    scores = [tool_score(t, reading) for t in tools]
    ranked = sorted(range(len(tools)), key=lambda i: (-scores[i], i))
    chosen = [(scores[i], tools[i], *filled(tools[i], reading)) for i in ranked if scores[i] >= 2]
    if not chosen:
        return Plan()
    top, best, first_calls, lacking = chosen[0]
    calls: list[Call] = []
    needs: list[tuple[set[str], float]] = []
    for score, spec, found, missing in chosen:
        about = f"{spec.name.replace('_', ' ')} {spec.description[:2000]}"
        need = rd.concepts_of(about) & reading.concepts
        met = any(need and need == n and score < s for n, s in needs)
        if not missing and (lacking or score >= top / 2) and not met:
            calls, needs = [*calls, *found], [*needs, (need, score)]
    if calls:
        return Plan(tuple(calls))
    # Nothing fully filled: the best tool with what it has (its error says what is missing),
    # never with none of what it requires.
    attempt = () if len(lacking) == len(set(rq.required(best))) else tuple(first_calls)
    return Plan(attempt, complete=False, wanted=(best, lacking))


def filled(spec: ToolSpec, reading: rd.Reading) -> tuple[list[Call], tuple[str, ...]]:
    """A tool's calls (北京 and 上海: two) and the required parameters nothing fills."""
    values: dict[str, list[Any]] = {}
    # Numbers inside an expression belong to it, not to numeric parameters.
    inside = reading.expressions and "expression" in rd.roles_of(spec)
    numbers = [] if inside else list(reading.numbers)
    for name, schema in rq.properties(spec).items():
        found = param_values(rd.param_role(name, schema), schema, reading, numbers)
        values |= {name: found} if found else {}
    shared = {p: v[0] for p, v in values.items()}
    many = next((p for p, v in values.items() if len(v) > 1), None)
    calls = [Call(spec.name, {**shared, many: v}, (many, v)) for v in values[many]] if many else []
    missing = tuple(n for n in rq.required(spec) if n not in values)
    return calls or [Call(spec.name, shared, next(iter(shared.items()), None))], missing


def param_values(role: str, schema: Schema, reading: rd.Reading, numbers: list[float]) -> list[Any]:
    if role == "enum":
        return enum_match(rq.enum_values(schema), reading)
    if role == "number":
        return [rq.whole(numbers.pop(0), schema.get("type"))] if numbers else []
    if role in ("place", "timezone"):
        return place_values(role == "timezone", rq.description_of(schema).lower(), reading)
    if role.startswith(("unit", "currency")):
        spans = reading.units if role.startswith("unit") else reading.currencies
        found = direction(role, spans, reading.text)
        return [in_schema(found, schema)] if found else []
    if role == "text":  # what the question quotes, else the question itself
        gist = re.sub(r"^(please|请问|请|帮我)\s*", "", reading.text.strip(), flags=re.I)
        return [rq.quoted(reading.text) or gist.rstrip("?？!！。. ")]
    return {"symbol": list(reading.tickers), "expression": list(reading.expressions)}.get(role, [])


def in_schema(unit: str, schema: Schema) -> str:
    """A unit as the tool writes it: its enum's member for it, else ours."""
    options = [str(o) for o in rq.enum_values(schema) if rd.canonical_unit(str(o)) == unit]
    return (options or [unit])[0]


def enum_match(options: list[Any], reading: rd.Reading) -> list[Any]:
    """The option the question names, as itself or in other words (明天 → "tomorrow")."""
    lowered, hits = reading.text.lower(), []
    for option in options:
        word = str(option).lower()
        unit = lx.UNITS.get(rd.canonical_unit(word) or "", ())
        names = {word, *lx.SYNONYMS.get(word, ()), *unit, *lx.CURRENCIES.get(word.upper(), ())}
        found = [p for name in names for p in rd.positions(lowered, name)]
        hits += [(min(found), option)] if found else []
    return [option for _, option in sorted(hits, key=lambda h: h[0])][:1]


def place_values(zone: bool, described: str, reading: rd.Reading) -> list[str]:
    """The places named, a known one as an IANA zone when the parameter wants one."""
    zoned = zone and ("/" in described or "iana" in described)
    known = [lx.place_named(name) for name in reading.places]
    return [p.timezone if p and zoned else n for n, p in zip(reading.places, known, strict=True)]


def direction(role: str, spans: rd.Spans, text: str) -> str | None:
    """A unit or currency: the source right after a number ("pounds in 70 kg": kg), else the
    first; the target the last other one."""
    names = [name for _, name in spans]
    numbered = [
        i for i, (at, _) in enumerate(spans) if text[max(0, at - 3) : at].rstrip()[-1:].isdigit()
    ]
    source, wants_source = (numbered or [0])[0], role.endswith("_from")
    if len(names) < 2 or role in ("unit", "currency"):
        alone = role in ("unit", "currency") or wants_source == bool(numbered)
        return names[0] if names and alone else None
    return names[source] if wants_source else [n for i, n in enumerate(names) if i != source][-1]


def pending_calls(reading: rd.Reading, tools: Tools, history: History) -> list[Call]:
    """The question's calls no earlier call stands for (a partial attempt is made once)."""
    plan = make_plan(reading, tools)
    items = plan.calls if plan.complete else ()
    made = [e.call for e in history if not e.unparsed]
    alone = {i.name for i in items if sum(p.name == i.name for p in items) == 1}
    return [i for i in items if not any(c.name == i.name and attempted(c, i, alone) for c in made)]


def attempted(made: Call, item: Call, alone: set[str]) -> bool:
    """An earlier call stands for the planned one: the only one of its tool, or the same."""
    key, value = item.key or ("", None)
    return item.name in alone or made == item or made.arguments.get(key) == value


def measures(data: Any) -> list[Measure]:
    """The measures in a result's fields, in order: `temp_c`, `high_f`, `distance_km`."""
    fields = data.items() if isinstance(data, dict) else ()
    found = [(v, rd.unit_of_field(str(k)), str(k)) for k, v in fields if rq.is_number(v)]
    return [(v, u, k) for v, u, k in found if u]


def converter(tools: Tools, reading: rd.Reading) -> ToolSpec | None:
    """A tool that converts a number between units, when the question names a unit."""
    if not reading.units:
        return None
    return next((t for t in tools if {"number", "unit_from", "unit_to"} <= rd.roles_of(t)), None)


def conversion_calls(reading: rd.Reading, tools: Tools, history: History) -> list[Call]:
    """Each result's measure converted into a unit the question wants and no result is in."""
    tool = converter(tools, reading)
    if tool is None:
        return []
    done = [read_json(e.result or "") for e in history if not e.failed and e.call.name != tool.name]
    made = [e.call for e in history if e.call.name == tool.name and not e.unparsed]
    pairs = to_convert([measures(data) for data in done], reading)
    wanted = [conversion(tool, measure, target) for target, measure in pairs]
    return [c for i, c in enumerate(wanted) if c not in made and c not in wanted[:i]]


def to_convert(results: list[list[Measure]], reading: rd.Reading) -> list[tuple[str, Measure]]:
    """(unit, measure): each result's measure meant for each unit asked that no result is in."""
    have = {unit for found in results for _, unit, _ in found}
    targets = dict.fromkeys(u for _, u in reading.units if u not in have)
    return [(t, m) for t in targets for r in results for m in meant(r, t, reading.extremes)]


def meant(found: Sequence[Measure], unit: str, extremes: Sequence[str]) -> list[Measure]:
    """What to convert into `unit`: the high or low asked for, else the value now, else any."""
    alike = [m for m in found if lx.DIMENSIONS.get(m[1]) == lx.DIMENSIONS.get(unit)]
    which = {e: [m for m in alike if rd.field_extreme(m[2]) == e][:1] for e in (*extremes, None)}
    named = [m for e in extremes for m in which[e]]
    return named or which[None] or alike[:1]


def conversion(tool: ToolSpec, source: Measure, target: str) -> Call:
    arguments: dict[str, Any] = {}
    for name, schema in rq.properties(tool).items():
        role = rd.param_role(name, schema)
        if role == "number" and source[0] not in arguments.values():
            arguments[name] = source[0]
        elif role in ("unit_from", "unit_to"):
            arguments[name] = in_schema(source[1] if role == "unit_from" else target, schema)
    return Call(tool.name, arguments)


def chained_calls(calls: Sequence[Call], reading: rd.Reading, tools: Tools) -> tuple[Call, ...]:
    """With --dag, the question's calls and the conversions it asks of their results in one reply,
    the value a placeholder for a field its description names (`high_c`); () when none chains."""
    tool = converter(tools, reading)
    if tool is None:
        return ()
    refs: list[str] = []
    firsts, seconds = [], []
    for call in calls:
        spec = next((t for t in tools if t.name == call.name and t is not tool), None)
        sources = convertible(spec.description if spec else "", reading)
        ref = fresh_ref(call.name, refs) if sources else None
        firsts.append(replace(call, ref=ref))
        for target, (_, unit, key) in sources:
            second = conversion(tool, ("{{" + f"{ref}.{key}" + "}}", unit, key), target)
            seconds.append(replace(second, ref=fresh_ref(tool.name, refs), depends_on=(str(ref),)))
    return (*firsts, *seconds) if seconds else ()


def convertible(description: str, reading: rd.Reading) -> list[tuple[str, Measure]]:
    """(unit wanted, field) for each field a tool's description says it returns (`high_c`)
    that the question wants in another unit."""
    fields = re.findall(r"(?<![\w.])[A-Za-z]+(?:_[A-Za-z0-9]+)+", description)
    return to_convert([measures(dict.fromkeys(fields, 0))], reading)  # a field's value unknown


def fresh_ref(tool: str, refs: list[str]) -> str:
    """A short name for a call, unique in the reply: `weather`, `weather2`, `units`."""
    base = (rd.split_identifier(tool) or ["call"])[-1]
    taken = sum(r.rstrip("0123456789") == base for r in refs)
    refs.append(f"{base}{taken + 1}" if taken else base)
    return refs[-1]


def asks_currency_conversion(reading: rd.Reading) -> bool:
    """Money into another currency, or a rate (not two currencies named inside arithmetic)."""
    codes = {code for _, code in reading.currencies}
    two = len(codes) > 1 and not reading.expressions
    return bool(codes) and (two or rd.mentions(reading.text, lx.WORDS["exchange"]))


def handles_currencies(spec: ToolSpec) -> bool:
    money = rd.roles_of(spec) & {"currency_from", "currency_to", "currency"}
    return bool(money) or "currency" in rd.concepts_of(f"{spec.name} {spec.description}")


def forced(c: rq.Conversation) -> tuple[Call, ...]:
    """The call tool_choice requires when none is planned: the best tool's (the first of equals)."""
    reading = rd.read_question(c.question, c.tools)
    return tuple(filled(max(c.tools, key=lambda t: tool_score(t, reading)), reading)[0])


def fix_call(exchange: Exchange, reading: rd.Reading, tools: Tools) -> Call | None:
    """The call put right from what its error names, a value it lacks from the question."""
    spec = rd.tool_named(tools, exchange.call.name)
    values = filled(spec, reading)[0][0].arguments  # its first call's values
    return rq.repaired(exchange.call, exchange.result or "", tools, lambda n, _: values.get(n))


def retry_allowed(fixed: Call, failed: Exchange, history: History, tools: Tools) -> bool:
    """Never a call that already failed; but the same call once more when its error names none
    of its values nor its tool's parameters (it was not the call: a timeout, a busy service),
    unless it says that someone or something refused it (the user, a permission)."""
    same = [e for e in history if e.failed and e.call == fixed]
    if fixed != failed.call:
        return not same
    spec = rd.tool_named(tools, fixed.name)
    words = [*map(str, fixed.arguments.values()), *fixed.arguments, *rq.properties(spec)]
    told = failed.result or ""
    refused = rd.mentions(told, lx.WORDS["refusal"])  # a person or a rule stopped it
    return len(same) < 2 and not refused and not any(rq.named(told, w) for w in words)

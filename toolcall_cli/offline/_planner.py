"""Planning calls: which tools the question needs, follow-up questions in a chat, and what is
still to do once results come back (a conversion the question asked for)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._arguments import Filling, fill_tool, fill_values, spread_calls, tool_unit
from toolcall_cli.offline._conversation import (
    EarlierQuestion,
    Exchange,
    PlannedCall,
    decode,
    same_call,
)
from toolcall_cli.offline._question import Reading, read_question
from toolcall_cli.offline._tools import param_role, properties
from toolcall_cli.offline._words import (
    canonical_unit,
    concepts_in,
    english_words,
    is_number,
    mentions,
    split_identifier,
    unit_of_field,
)

_THRESHOLD = 2.0
_RELATIVE = 0.5
_CONCEPT_FACTOR = {"date": 0.5}


def tool_vocabulary(spec: ToolSpec) -> dict[str, float]:
    """Concepts and content words a tool is about, each with how strongly (name > description)."""
    sources: list[tuple[str, float]] = [(" ".join(split_identifier(spec.name)), 3.0)]
    sources.append((spec.description, 2.0))
    for name, schema in properties(spec).items():
        sources.append(
            (" ".join(split_identifier(name)) + " " + str(schema.get("description", "")), 1.0)
        )
    vocabulary: dict[str, float] = {}
    for text, weight in sources:
        words = english_words(text)
        keys = {f"c:{c}" for c in concepts_in(text, words)}
        keys |= {f"w:{w}" for w in words if len(w) > 2 and w not in lx.NOISE_WORDS}
        for key in keys:
            vocabulary[key] = max(vocabulary.get(key, 0.0), weight)
    return vocabulary


def tool_score(spec: ToolSpec, reading: Reading) -> float:
    vocabulary = tool_vocabulary(spec)
    score = sum(
        weight * _CONCEPT_FACTOR.get(key[2:], 1.0)
        for key, weight in vocabulary.items()
        if (key[2:] in reading.concepts if key.startswith("c:") else key[2:] in reading.words)
    )
    roles = {param_role(n, s) for n, s in properties(spec).items()}
    if reading.expressions and "expression" in roles:
        score += 3.0
    if reading.tickers and "symbol" in roles:
        score += 2.0
    if reading.units and roles & {"unit_from", "unit_to", "unit"}:
        score += 1.0
    if reading.currencies and roles & {"currency_from", "currency_to", "currency"}:
        score += 1.0
    if reading.places and roles & {"place", "timezone"}:
        score += 0.5
    return score


def choose_tools(reading: Reading, tools: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    """Tools clearly about the question with their scores, best first; [] when none is."""
    scored = [(tool_score(spec, reading), i, spec) for i, spec in enumerate(tools)]
    chosen = sorted((t for t in scored if t[0] >= _THRESHOLD), key=lambda t: (-t[0], t[1]))
    return [(score, spec) for score, _, spec in chosen]


@dataclass(frozen=True)
class Plan:
    """The calls for a question, whether they are all it needs, and when nothing can be called,
    the tool that would answer it with what it lacks."""

    calls: tuple[PlannedCall, ...] = ()
    complete: bool = True
    """False when the calls are the best tool's partial attempt (some values are missing)."""
    wanted: Filling | None = None


def make_plan(reading: Reading, tools: Sequence[ToolSpec]) -> Plan:
    """Every call the question needs now, from the tools clearly about it.

    When the best tool lacks a value only another tool's result can give ("巴黎现在多少华氏度"
    needs the temperature before converting), the tools that can run now go first, even weaker
    ones; the waiting tool is left for a later turn.
    """
    chosen = [(score, fill_tool(spec, reading)) for score, spec in choose_tools(reading, tools)]
    if not chosen:
        return Plan()
    best_score, best = chosen[0]
    ready = [(s, f) for s, f in chosen if not f.missing]
    if not best.missing:
        ready = [(s, f) for s, f in ready if s >= best_score * _RELATIVE]
    if ready:
        return Plan(tuple(call for _, filling in ready for call in filling.calls))
    # Nothing fully fillable: try the best tool with what it has (its error says what is
    # missing), but never with none of the values it requires.
    if best.empty:
        return Plan(complete=False, wanted=best)
    return Plan(best.calls, complete=False, wanted=best)


def plan(reading: Reading, tools: Sequence[ToolSpec]) -> tuple[PlannedCall, ...]:
    return make_plan(reading, tools).calls


def context_calls(
    reading: Reading, tools: Sequence[ToolSpec], earlier: Sequence[EarlierQuestion]
) -> list[PlannedCall]:
    """Calls for a question that only makes sense after the earlier ones: "And in Fahrenheit?"
    converts an earlier result, "那上海呢？" asks the previous question again for another
    entity, and "Paris" answers the question back about a missing city."""
    if not earlier:
        return []
    if not earlier[-1].exchanges:
        combined = read_question(f"{earlier[-1].question}\n{reading.text}", tools)
        combined_plan = make_plan(combined, tools)
        if combined_plan.complete and combined_plan.calls:
            return list(combined_plan.calls)
    for question in reversed(earlier):
        done = [e for e in question.exchanges if not e.failed]
        if done:
            converted = conversion_calls(reading, tools, done)
            return converted or (
                ellipsis_calls(reading, tools, done) if elliptical(reading) else []
            )
    return []


_ELLIPSIS_RE = re.compile(
    r"^\s*(?:and|what about|how about|also|same for|now|那么?|还有|换成|改成)(?![a-z])"
    r"|呢\s*[?？。.!！]*\s*$",
    re.I,
)


def elliptical(reading: Reading) -> bool:
    """ "那上海呢？", "And Tokyo?", "What about tomorrow?": a question leaning on the last one."""
    courtesy = mentions(reading.text, (*lx.THANKS, *lx.GREETINGS))
    return not courtesy and _ELLIPSIS_RE.search(reading.text) is not None


def ellipsis_calls(
    reading: Reading, tools: Sequence[ToolSpec], done: Sequence[Exchange]
) -> list[PlannedCall]:
    """The earlier calls again, with the values this question gives put in their place."""
    by_name = {spec.name: spec for spec in tools}
    calls: list[PlannedCall] = []
    for exchange in done:
        spec = by_name.get(exchange.call.name)
        if spec is None:
            continue
        roles = {n: param_role(n, s) for n, s in properties(spec).items()}
        given = {
            n: v
            for n, v in fill_values(spec, reading).items()
            if roles.get(n) != "text" and v != [exchange.call.arguments.get(n)]
        }
        if not given:
            continue
        previous = {n: [v] for n, v in exchange.call.arguments.items()}
        for call in spread_calls(spec.name, {**previous, **given}):
            if not any(same_call(call, other) for other in calls):
                calls.append(call)
    return calls


def attempted(
    item: PlannedCall, history: Sequence[Exchange], plan_items: Sequence[PlannedCall]
) -> bool:
    """Whether some earlier call stands for this planned one (maybe in a corrected form)."""
    siblings = sum(1 for p in plan_items if p.name == item.name)
    for exchange in history:
        call = exchange.call
        if call.name != item.name or exchange.unparsed:
            continue
        if call.arguments == item.arguments or siblings == 1:
            return True
        if item.key and call.arguments.get(item.key[0]) == item.key[1]:
            return True
    return False


def pending_calls(
    reading: Reading, tools: Sequence[ToolSpec], history: Sequence[Exchange]
) -> list[PlannedCall]:
    planned = make_plan(reading, tools)
    # A partial attempt is made once, in the first turn, and never again.
    items = planned.calls if planned.complete else ()
    return [item for item in items if not attempted(item, history, items)]


_DIMENSIONS = {
    "celsius": "temperature",
    "fahrenheit": "temperature",
    "kelvin": "temperature",
    "km": "length",
    "mile": "length",
    "m": "length",
    "cm": "length",
    "ft": "length",
    "inch": "length",
    "kg": "mass",
    "lb": "mass",
    "g": "mass",
    "l": "volume",
    "gallon": "volume",
}


@dataclass(frozen=True)
class Measure:
    value: int | float
    unit: str


def measures_in(result: str) -> list[Measure]:
    """Numbers with a known unit in a result: dict fields like temp_c, or text like "18°C"."""
    data = decode(result)
    found: list[Measure] = []
    if isinstance(data, dict):
        for key, value in data.items():
            unit = unit_of_field(str(key))
            if unit and is_number(value):
                found.append(Measure(value, unit))
    elif isinstance(data, str):
        for number, word in re.findall(r"(-?\d+(?:\.\d+)?)\s*(°C|°F|℃|℉|km|kg|lb)", data):
            unit = canonical_unit(word)
            if unit:
                found.append(Measure(float(number), unit))
    return found


def converter_tool(tools: Sequence[ToolSpec]) -> ToolSpec | None:
    """A tool with value / from-unit / to-unit style parameters."""
    for spec in tools:
        roles = {param_role(n, s) for n, s in properties(spec).items()}
        if {"number", "unit_from", "unit_to"} <= roles:
            return spec
    return None


def conversion_calls(
    reading: Reading, tools: Sequence[ToolSpec], history: Sequence[Exchange]
) -> list[PlannedCall]:
    """The question wants a unit no result is in yet: convert each result's main number."""
    converter = converter_tool(tools)
    if converter is None or not reading.units:
        return []
    results = [e for e in history if not e.failed and e.call.name != converter.name]
    have = {m.unit for e in results for m in measures_in(e.result or "")}
    wanted = [u for u in dict.fromkeys(reading.units) if u not in have]
    calls: list[PlannedCall] = []
    for target in wanted:
        for exchange in results:
            source = next(
                (
                    m
                    for m in measures_in(exchange.result or "")
                    if _DIMENSIONS.get(m.unit) == _DIMENSIONS.get(target)
                ),
                None,
            )
            if source is not None:
                calls.append(conversion_call(converter, source, target))
    done = [e.call for e in history if e.call.name == converter.name]
    fresh: list[PlannedCall] = []
    for call in calls:
        if not any(same_call(call, other) for other in [*done, *fresh]):
            fresh.append(call)
    return fresh


def conversion_call(converter: ToolSpec, source: Measure, target: str) -> PlannedCall:
    arguments: dict[str, Any] = {}
    value_given = False
    for name, schema in properties(converter).items():
        role = param_role(name, schema)
        if role == "number" and not value_given:
            arguments[name], value_given = source.value, True
        elif role == "unit_from":
            arguments[name] = tool_unit(source.unit, schema)
        elif role == "unit_to":
            arguments[name] = tool_unit(target, schema)
    return PlannedCall(converter.name, arguments)


def asks_currency_conversion(reading: Reading) -> bool:
    """Money from one currency into another ("100美元等于多少人民币"), or an exchange rate.
    Two currency names inside arithmetic ("I won 100 dollars, 100*3?") are no such question."""
    codes = {code for _, code in reading.currencies}
    if not codes:
        return False
    return mentions(reading.text, lx.EXCHANGE_WORDS) or (
        len(codes) >= 2 and not reading.expressions
    )


def handles_currencies(spec: ToolSpec) -> bool:
    """A tool with a currency parameter, or one whose name or description is about money."""
    roles = {param_role(n, s) for n, s in properties(spec).items()}
    return bool(roles & {"currency", "currency_from", "currency_to"}) or (
        "c:currency" in tool_vocabulary(spec)
    )

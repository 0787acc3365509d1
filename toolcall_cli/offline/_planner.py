"""Planning calls: which tools the question needs and their arguments (several values give several
calls), follow-up questions in a chat, and what is still to do once results come back (a
conversion the question asked for), or with --dag in the same reply, through a placeholder."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._question import Reading, read_question
from toolcall_cli.offline._request import (
    EarlierQuestion,
    Exchange,
    PlannedCall,
    call_key,
    decode,
    frozen,
)
from toolcall_cli.offline._words import (
    ParamRole,
    canonical_unit,
    concepts_in,
    description_of,
    english_words,
    enum_values,
    field_extreme,
    first_spelled,
    is_number,
    lowercase,
    mentions,
    param_role,
    param_roles,
    properties,
    required,
    split_identifier,
    unit_of_field,
)

_THRESHOLD = 2.0
_RELATIVE = 0.5
_CONCEPT_FACTOR = {"date": 0.5}


def tool_vocabulary(spec: ToolSpec) -> dict[str, float]:
    """Concepts and content words a tool is about, each with how strongly (name > description)."""
    sources = [(" ".join(split_identifier(spec.name)), 3.0), (spec.description, 2.0)]
    for name, schema in properties(spec).items():
        sources.append((" ".join(split_identifier(name)) + " " + description_of(schema), 1.0))
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
    roles = param_roles(spec)
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
    return Plan(() if best.empty else best.calls, complete=False, wanted=best)


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
    r"|呢[\s?？。.!！]*$",
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
        calls += spread_calls(spec.name, {**previous, **given})
    return distinct(calls)


class Attempts:
    """The calls made so far (those read back whole), kept so that whether one stands for a
    planned call is found without going through them all for each planned call."""

    def __init__(self, history: Iterable[Exchange] = ()) -> None:
        self._made: Counter[str] = Counter()  # calls made, by tool
        self._calls: set[Hashable] = set()
        self._values: set[tuple[str, str, Hashable]] = set()  # (tool, argument, value)
        self._given: Counter[tuple[str, str]] = Counter()  # calls with the argument not None
        for exchange in history:
            self.add(exchange)

    def add(self, exchange: Exchange) -> None:
        if exchange.unparsed:
            return
        call = exchange.call
        self._made[call.name] += 1
        self._calls.add(call_key(call))
        for name, value in call.arguments.items():
            self._values.add((call.name, name, frozen(value)))
            self._given[call.name, name] += value is not None

    def stand_for(self, item: PlannedCall, siblings: int) -> bool:
        """Whether some call made stands for this planned one (maybe in a corrected form): one
        to the same tool when the plan has no other call to it, else one with the same
        arguments, or with the same value where this call differs from its siblings."""
        if not self._made[item.name]:
            return False
        if siblings == 1 or call_key(item) in self._calls:
            return True
        if item.key is None:
            return False
        name, value = item.key
        if value is None:  # a call without that argument reads as None there too
            return self._made[item.name] > self._given[item.name, name]
        return (item.name, name, frozen(value)) in self._values


def pending_calls(
    reading: Reading, tools: Sequence[ToolSpec], history: Sequence[Exchange]
) -> list[PlannedCall]:
    planned = make_plan(reading, tools)
    # A partial attempt is made once, in the first turn, and never again.
    items = planned.calls if planned.complete else ()
    made, siblings = Attempts(history), Counter(item.name for item in items)
    return [item for item in items if not made.stand_for(item, siblings[item.name])]


_DIMENSIONS = {
    unit: dimension
    for dimension, units in (
        ("temperature", "celsius fahrenheit kelvin"),
        ("length", "km mile m cm ft inch"),
        ("mass", "kg lb g"),
        ("volume", "l gallon"),
    )
    for unit in units.split()
}


@dataclass(frozen=True)
class Measure:
    value: int | float | str
    """The number; with --dag, a placeholder for a number another call will return."""
    unit: str
    key: str = ""
    """The result field it is read from (`high_c`); "" when read from text."""


_MEASURE_RE = re.compile(r"(?<!\d)(-?\d+(?:\.\d+)?)\s*(°C|°F|℃|℉|km|kg|lb)")
"""A number with its unit in a result's text; it starts where a number does (tried inside a long
run of digits as well, it would read the run once per digit)."""


def measures_in(result: str) -> list[Measure]:
    """Numbers with a known unit in a result: dict fields like temp_c, or text like "18°C"."""
    data = decode(result)
    found: list[Measure] = []
    if isinstance(data, dict):
        for key, value in data.items():
            unit = unit_of_field(str(key))
            if unit and is_number(value):
                found.append(Measure(value, unit, str(key)))
    elif isinstance(data, str):
        for number, word in _MEASURE_RE.findall(data):
            unit = canonical_unit(word)
            if unit:
                found.append(Measure(float(number), unit))
    return found


def converter_tool(tools: Sequence[ToolSpec]) -> ToolSpec | None:
    """A tool with value / from-unit / to-unit style parameters."""
    return next((s for s in tools if {"number", "unit_from", "unit_to"} <= param_roles(s)), None)


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
    calls = [
        conversion_call(converter, source, target)
        for target in wanted
        for exchange in results
        for source in meant(measures_in(exchange.result or ""), target, reading.extremes)
    ]
    # A conversion that could not be read (cut off, broken) was not made: it is made again.
    made = [e.call for e in history if e.call.name == converter.name and not e.unparsed]
    return distinct(calls, made)


def meant(measures: Sequence[Measure], unit: str, extremes: Sequence[str]) -> list[Measure]:
    """The measures the question asks to convert into `unit` (a temperature into °F): those
    whose field holds the high or low it names ("最高气温": `high_c`), else the current one (a
    field that is neither high nor low), else the first that can be converted."""
    convertible = [m for m in measures if _DIMENSIONS.get(m.unit) == _DIMENSIONS.get(unit)]
    named = [
        next(m for m in convertible if field_extreme(m.key) == extreme)
        for extreme in extremes
        if any(field_extreme(m.key) == extreme for m in convertible)
    ]
    current = [m for m in convertible if field_extreme(m.key) is None]
    return named or current[:1] or convertible[:1]


def distinct(calls: Sequence[PlannedCall], made: Sequence[PlannedCall] = ()) -> list[PlannedCall]:
    """The calls without repeats, leaving out any already made."""
    fresh: list[PlannedCall] = []
    seen = {call_key(call) for call in made}
    for call in calls:
        if call_key(call) not in seen:
            seen.add(call_key(call))
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


_FIELD_RE = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w])")


def described_measures(spec: ToolSpec) -> list[Measure]:
    """The measured fields a tool's description says its result has (`temp_c`, `high_c`), as a
    model reads "Returns JSON with city, temp_c, high_c ..."; the value is not known yet."""
    fields = dict.fromkeys(_FIELD_RE.findall(spec.description))
    return [Measure(0, unit, key) for key in fields if (unit := unit_of_field(key))]


def chained_calls(
    calls: Sequence[PlannedCall], reading: Reading, tools: Sequence[ToolSpec]
) -> tuple[PlannedCall, ...]:
    """The question's calls with the conversions of their results that it asks for, all in one
    reply (--dag): "tomorrow's high in Beijing, in Fahrenheit" is get_weather with a name, then
    convert_units with a placeholder for the field its description says holds the high. () when
    nothing chains (no converter, no unit asked, no field known: then the next round converts)."""
    converter = converter_tool(tools)
    if converter is None or not reading.units:
        return ()
    by_name = {spec.name: spec for spec in tools}
    taken: set[str] = set()
    firsts: list[PlannedCall] = []
    seconds: list[PlannedCall] = []
    for call in calls:
        spec = by_name.get(call.name)
        measures = described_measures(spec) if spec and spec is not converter else []
        have = {m.unit for m in measures}
        wanted = [u for u in dict.fromkeys(reading.units) if u not in have]
        sources = [(t, m) for t in wanted for m in meant(measures, t, reading.extremes)]
        if not sources:
            firsts.append(call)
            continue
        ref = fresh_ref(call.name, taken)
        firsts.append(replace(call, ref=ref))
        for target, measure in sources:
            value = "{{" + f"{ref}.{measure.key}" + "}}"  # the --dag prompt's placeholder
            second = conversion_call(converter, replace(measure, value=value), target)
            seconds.append(replace(second, ref=fresh_ref(converter.name, taken), depends_on=(ref,)))
    return (*firsts, *seconds) if seconds else ()


def fresh_ref(tool: str, taken: set[str]) -> str:
    """A short name for a call, unique in the reply: `weather`, `weather2`, `units`."""
    base = (split_identifier(tool) or ["call"])[-1]
    ref = base
    number = 1
    while ref in taken:
        number += 1
        ref = f"{base}{number}"
    taken.add(ref)
    return ref


def asks_currency_conversion(reading: Reading) -> bool:
    """Money from one currency into another ("100美元等于多少人民币"), or an exchange rate.
    Two currency names inside arithmetic ("I won 100 dollars, 100*3?") are no such question."""
    codes = {code for _, code in reading.currencies}
    named_two = len(codes) >= 2 and not reading.expressions
    return bool(codes) and (named_two or mentions(reading.text, lx.EXCHANGE_WORDS))


def handles_currencies(spec: ToolSpec) -> bool:
    """A tool with a currency parameter, or one whose name or description is about money."""
    money = {"currency", "currency_from", "currency_to"}
    return bool(param_roles(spec) & money) or "c:currency" in tool_vocabulary(spec)


_IANA_RE = re.compile(r"\b(?:UTC|GMT|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b")


@dataclass(frozen=True)
class Filling:
    """A tool's calls for the question, and the required parameters nothing could fill."""

    calls: tuple[PlannedCall, ...]
    missing: tuple[str, ...]
    spec: ToolSpec | None = field(default=None, compare=False)

    @property
    def empty(self) -> bool:
        """Not one required value could be read: calling would send nothing it needs."""
        return self.spec is not None and len(self.missing) == len(set(required(self.spec)))


def fill_tool(spec: ToolSpec, reading: Reading) -> Filling:
    values = fill_values(spec, reading)
    missing = tuple(n for n in required(spec) if n not in values)
    return Filling(calls=spread_calls(spec.name, values), missing=missing, spec=spec)


def fill_values(spec: ToolSpec, reading: Reading) -> dict[str, list[Any]]:
    """Every value the question gives for each parameter (several cities give several). Once
    per tool and question: each failed call to a tool asks it again."""
    cached = reading.memo.get(("values", id(spec)))
    if cached is not None and cached[0] is spec:
        return cached[1]  # type: ignore[no-any-return]
    values = question_values(spec, reading)
    reading.memo["values", id(spec)] = (spec, values)
    return values


def question_values(spec: ToolSpec, reading: Reading) -> dict[str, list[Any]]:
    values: dict[str, list[Any]] = {}
    # Numbers inside an expression belong to it, not to numeric parameters.
    takes_expression = "expression" in param_roles(spec)
    numbers = [] if takes_expression and reading.expressions else list(reading.numbers)
    for name, schema in properties(spec).items():
        found = param_values(name, schema, reading, numbers)
        if found:
            values[name] = found
    return values


def spread_calls(name: str, values: dict[str, list[Any]]) -> tuple[PlannedCall, ...]:
    """One call per value of the first many-valued parameter (北京 and 上海 → two calls)."""
    spread = next((p for p, v in values.items() if len(v) > 1), None)
    shared = {p: v[0] for p, v in values.items()}
    if spread is None:
        key = next(iter(shared.items()), None)
        return (PlannedCall(name, shared, key),)
    return tuple(
        PlannedCall(name, {**shared, spread: value}, (spread, value)) for value in values[spread]
    )


def param_values(
    name: str, schema: dict[str, Any], reading: Reading, numbers: list[float]
) -> list[Any]:
    role = param_role(name, schema)
    if role == "enum":
        return enum_match(enum_values(schema), reading)
    if role == "number":
        return [as_number(numbers.pop(0), schema)] if numbers else []
    if role in ("place", "timezone"):
        return place_values(role, schema, reading)
    if role == "symbol":
        return list(reading.tickers)
    if role == "expression":
        return list(reading.expressions)
    if role == "text":
        return quoted_texts(reading.text) or [gist(reading.text)]
    if role in ("unit_from", "unit_to", "unit"):
        unit = direction(role, reading.unit_spans, reading.text)
        return [tool_unit(unit, schema)] if unit else []
    if role in ("currency_from", "currency_to", "currency"):
        code = direction(role, reading.currencies, reading.text)
        return [code] if code else []
    return []


def as_number(value: float, schema: dict[str, Any]) -> int | float:
    if not math.isfinite(value):  # a number too big for a float stays as the float it became
        return value
    return int(value) if schema.get("type") == "integer" or value.is_integer() else value


def enum_match(options: list[Any], reading: Reading) -> list[Any]:
    """The option the question names, directly or through a synonym (明天 → "tomorrow")."""
    hits: list[tuple[int, Any]] = []
    lowered = lowercase(reading.text)
    for option in options:
        spellings = {str(option).lower(), *lx.ENUM_SYNONYMS.get(str(option).lower(), ())}
        spellings |= set(lx.UNITS.get(canonical_unit(str(option)) or "", ()))
        spellings |= set(lx.CURRENCIES.get(str(option).upper(), ()))
        firsts = [first_spelled(lowered, s.lower()) for s in spellings if s]
        positions = [p for p in firsts if p is not None]
        if positions:
            hits.append((min(positions), option))
    return [option for _, option in sorted(hits, key=lambda h: h[0])][:1]


def place_values(role: ParamRole, schema: dict[str, Any], reading: Reading) -> list[str]:
    description = str(schema.get("description", ""))
    if role == "timezone":
        explicit = _IANA_RE.findall(reading.text)
        if explicit:
            return list(dict.fromkeys(explicit))
    wants_zone = role == "timezone" and ("/" in description or "iana" in description.lower())
    return [place_form(name, description, wants_zone) for name in reading.places]


def place_form(name: str, description: str, wants_zone: bool) -> str:
    """The place the way the parameter asks for it: as written, an IANA zone, or a language."""
    place = lx.place_named(name)
    if place is None:
        return name
    if wants_zone:
        return place.timezone
    lowered = description.lower()
    english = "english" in lowered or "英文" in description
    chinese = "chinese" in lowered or "中文" in description
    if english != chinese:  # "in Chinese or English" asks for no translation
        return place.en if english else place.zh
    return name


_QUOTED_TEXT_RE = re.compile(
    r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])|\"([^\"]+)\"|“([^“”]+)”|「([^「」]+)」"
)


def quoted_texts(text: str) -> list[str]:
    """Text the question quotes ("Echo 'hello'"): that is the text meant, not the question."""
    return [next(g for g in m.groups() if g) for m in _QUOTED_TEXT_RE.finditer(text)][:1]


def gist(text: str) -> str:
    """The question without its trailing punctuation and polite openers."""
    trimmed = re.sub(r"^(please|请问|请|帮我|麻烦你?)\s*", "", text.strip(), flags=re.IGNORECASE)
    return trimmed.rstrip("?？!！。. ")


def direction(role: ParamRole, spans: Sequence[tuple[int, str]], text: str) -> str | None:
    """The unit or currency a parameter wants, from those the question names in order. A
    source is the one right after a number ("How many pounds is 70 kg?": kg), else the first;
    a target is the last other one. One alone is the source only when a number comes before it."""
    names = [name for _, name in spans]
    numbered = [i for i, (at, _) in enumerate(spans) if number_before(text, at)]
    if not names or role in ("unit", "currency"):
        return names[0] if names else None
    source_wanted = role.endswith("_from")
    if len(names) == 1:
        return names[0] if source_wanted == bool(numbered) else None
    source = numbered[0] if numbered else 0
    if source_wanted:
        return names[source]
    return next(names[i] for i in range(len(names) - 1, -1, -1) if i != source)


def number_before(text: str, position: int) -> bool:
    """Whether a number ends right before `position`, spaces apart ("70 kg"). Reads back over
    the spaces only, not the whole text before."""
    while position > 0 and text[position - 1].isspace():
        position -= 1
    return position > 0 and text[position - 1].isdecimal()


def tool_unit(unit: str, schema: dict[str, Any]) -> str:
    """How this tool writes the unit: an enum member, a spelling its description uses, or ours."""
    options = [str(o) for o in enum_values(schema) if canonical_unit(str(o)) == unit]
    description = str(schema.get("description", "")).lower()
    # One letter ("c") would match inside "°C".
    spelled = [
        s
        for s in lx.UNITS[unit]
        if len(s) > 1 and s.isascii() and s.isalpha() and re.search(rf"\b{s}\b", description)
    ]
    return (options or spelled or [unit])[0]

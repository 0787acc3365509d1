"""The offline model's brain: reads a question, the tools it is given and the results so far,
and decides what to do next (calls, or an answer). It knows nothing of any wire format.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models import lexicon as lx

# --- what the brain works on and what it decides -----------------------------------------------


@dataclass(frozen=True)
class PlannedCall:
    """One call the model means to make."""

    name: str
    arguments: dict[str, Any]
    key: tuple[str, Any] | None = field(default=None, compare=False)
    """The parameter and value that tells this call apart from its siblings (city 北京 vs 上海)."""
    garbled: bool = field(default=False, compare=False)
    """Read back from call text that was not valid JSON (cut off or broken): the arguments are
    a repair's guess, not necessarily what was meant."""


@dataclass(frozen=True)
class Exchange:
    """A call made in an earlier turn and the result that came back for it (None if none did)."""

    call: PlannedCall
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.lstrip().lower().startswith("error")

    @property
    def unparsed(self) -> bool:
        """The call never ran because its text could not be parsed (cut off, broken JSON):
        what was read back of it is not what the model meant, so it is made again in full."""
        return self.failed and (
            self.call.garbled or _UNPARSED_RE.search(self.result or "") is not None
        )


@dataclass(frozen=True)
class Conversation:
    """Everything the brain reads from one request."""

    question: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[tuple[Exchange, ...], ...] = ()
    """The model's earlier turns since the question, each with its calls and their results."""


@dataclass(frozen=True)
class Decision:
    """What to say: calls (with an optional lead-in sentence), or a final answer."""

    calls: tuple[PlannedCall, ...] = ()
    text: str = ""
    """The lead-in sentence when there are calls; the whole answer when there are none."""

    @property
    def is_answer(self) -> bool:
        return not self.calls


# --- reading the question ----------------------------------------------------------------------

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?")
_TICKER_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,5}(?:\.[A-Z]{1,2})?(?![A-Za-z0-9])")
_NOT_TICKERS = frozenset(
    lx.words(
        "I A OK US USA UK EU UTC GMT AI CEO PM AM API JSON HTTP NYC TV ID KM MI KG LB CM FT F C "
        "USD EUR CNY RMB JPY GBP HKD"
    )
)
_OPERATOR_WORDS: tuple[tuple[str, str], ...] = (
    ("乘以", "*"),
    ("乘上", "*"),
    ("除以", "/"),
    ("加上", "+"),
    ("减去", "-"),
    ("的平方", "**2"),
    ("的立方", "**3"),
    ("乘", "*"),
    ("除", "/"),
    ("加", "+"),
    ("减", "-"),
    ("×", "*"),
    ("÷", "/"),
    ("＋", "+"),
    ("－", "-"),
    ("−", "-"),
    ("（", "("),
    ("）", ")"),
    ("^", "**"),
    (" multiplied by ", "*"),
    (" divided by ", "/"),
    (" times ", "*"),
    (" plus ", "+"),
    (" minus ", "-"),
    (" over ", "/"),
)
_EXPRESSION_RE = re.compile(r"[-(]*\d[\d.\s+\-*/()]*[\d)]")
_HAS_OPERATOR_RE = re.compile(r"[\d)]\s*(?:\*\*|[-+*/])\s*[-(\d]")
_DATE_RE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
_IANA_RE = re.compile(r"\b(?:UTC|GMT|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b")


@dataclass(frozen=True)
class Reading:
    """The question as the brain understands it."""

    text: str
    zh: bool
    words: frozenset[str]
    concepts: frozenset[str]
    places: tuple[str, ...]
    expressions: tuple[str, ...]
    numbers: tuple[float, ...]
    tickers: tuple[str, ...]
    units: tuple[str, ...]
    """Canonical units in the order they are mentioned."""
    unit_spans: tuple[tuple[int, str], ...]


def read_question(text: str) -> Reading:
    words = english_words(text)
    expressions = find_expressions(text)
    concepts = set(concepts_in(text, words))
    if expressions:
        concepts.add("math")
    unit_spans = find_units(text)
    return Reading(
        text=text,
        zh=lx.has_cjk(text),
        words=frozenset(words),
        concepts=frozenset(concepts),
        places=find_places(text),
        expressions=expressions,
        numbers=tuple(float(n) for n in _NUMBER_RE.findall(text)),
        tickers=find_tickers(text),
        units=tuple(unit for _, unit in unit_spans),
        unit_spans=unit_spans,
    )


def english_words(text: str) -> set[str]:
    """Lowercase English words plus their singular forms ("units" also gives "unit")."""
    found: set[str] = set()
    for raw in _WORD_RE.findall(text):
        word = raw.lower().removesuffix("'s").strip("'-")
        if not word:
            continue
        found.add(word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            found.add(word[:-1])
    return found


def split_identifier(name: str) -> list[str]:
    """`get_weather` → [get, weather]; `lookupStock` → [lookup, stock]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [part.lower() for part in re.split(r"[^A-Za-z0-9]+", spaced) if part]


def concepts_in(text: str, words: set[str]) -> Iterable[str]:
    for concept, terms in lx.CONCEPTS.items():
        if any(term in text if lx.has_cjk(term) else term in words for term in terms):
            yield concept


def find_expressions(text: str) -> tuple[str, ...]:
    """Arithmetic in the question, as a calculator would take it: "12乘以5加3" → "12*5+3"."""
    normal = f" {text} "
    for word, symbol in _OPERATOR_WORDS:
        normal = normal.replace(word, symbol)
    normal = re.sub(r"(?<=\d)\s*[xX]\s*(?=\d)", "*", normal)
    found: list[str] = []
    for match in _EXPRESSION_RE.finditer(normal):
        candidate = re.sub(r"\s+", "", match.group()).strip()
        if _HAS_OPERATOR_RE.search(candidate) and not _DATE_RE.match(candidate):
            found.append(balance_parentheses(candidate))
    return tuple(dict.fromkeys(found))


def balance_parentheses(expression: str) -> str:
    """Drop stray parentheses a sentence left at either end of an expression."""
    while expression.startswith("(") and expression.count("(") > expression.count(")"):
        expression = expression[1:]
    while expression.endswith(")") and expression.count(")") > expression.count("("):
        expression = expression[:-1]
    return expression


def find_tickers(text: str) -> tuple[str, ...]:
    found = [t for t in _TICKER_RE.findall(text) if t not in _NOT_TICKERS and len(t) >= 2]
    lowered = text.lower()
    words = english_words(text)
    for company, ticker in lx.TICKERS.items():
        if (
            company in lowered if lx.has_cjk(company) else company in words
        ) and ticker not in found:
            found.append(ticker)
    return tuple(found)


def find_units(text: str) -> tuple[tuple[int, str], ...]:
    """(position, canonical unit) for each unit mentioned, longest spelling first per place."""
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    spellings = sorted(
        ((s, unit) for unit, names in lx.UNITS.items() for s in names), key=lambda p: -len(p[0])
    )
    for spelling, unit in spellings:
        for start in spelling_positions(lowered, spelling):
            end = start + len(spelling)
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            found.append((start, unit))
    return tuple(sorted(found))


def spelling_positions(lowered: str, spelling: str) -> list[int]:
    if lx.has_cjk(spelling) or not spelling[0].isalpha():
        return [m.start() for m in re.finditer(re.escape(spelling), lowered)]
    # A bare "in" or "m" is a unit only right after a number ("5 m", "12 in").
    if spelling in lx.AMBIGUOUS_UNIT_WORDS:
        pattern = rf"(?<=\d)\s*{re.escape(spelling)}(?![a-z])"
    else:
        pattern = rf"(?<![a-z]){re.escape(spelling)}(?![a-z])"
    return [m.start() for m in re.finditer(pattern, lowered)]


# --- places ---------------------------------------------------------------------------------

_ALL_TERMS = frozenset(
    term.lower() for terms in lx.CONCEPTS.values() for term in terms if not lx.has_cjk(term)
)
_NOT_PLACES = frozenset(
    lx.words(
        "monday tuesday wednesday thursday friday saturday sunday january february march "
        "april may june july august september october november december should will would "
        "could can is are was were do does did please hi hello hey thanks thank ok yes no"
    )
)
_CAPITALISED_RE = re.compile(r"[A-Z][a-zà-ÿ]+(?:[ -][A-Z][a-zà-ÿ]+)*")


def find_places(text: str) -> tuple[str, ...]:
    """Place names in order of mention: the gazetteer first, then names that look like places."""
    spans = gazetteer_spans(text)
    spans += unknown_english_places(text, spans)
    spans += unknown_cjk_places(text, spans)
    return tuple(dict.fromkeys(name for _, name in sorted(spans)))


def gazetteer_spans(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for place in lx.PLACES:
        for name in (place.zh, place.en, *place.aliases):
            pattern = (
                re.escape(name) if lx.has_cjk(name) else rf"(?<![A-Za-z]){re.escape(name)}(?![a-z])"
            )
            flags = 0 if lx.has_cjk(name) else re.IGNORECASE
            found += [(m.start(), m.group()) for m in re.finditer(pattern, text, flags)]
    # "New York" also contains "York"-like shorter hits elsewhere; keep the longest at a spot.
    return [s for s in found if not any(covers(o, s) for o in found if o != s)]


def covers(outer: tuple[int, str], inner: tuple[int, str]) -> bool:
    start, name = outer
    return start <= inner[0] and inner[0] + len(inner[1]) <= start + len(name) and outer != inner


def unknown_english_places(text: str, known: list[tuple[int, str]]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for match in _CAPITALISED_RE.finditer(text):
        words = [w for w in re.split(r"[ -]", match.group()) if not is_common_word(w)]
        if not words or overlaps(match.start(), match.group(), known):
            continue
        name = " ".join(words)
        found.append((match.start() + match.group().find(words[0]), name))
    return found


def is_common_word(word: str) -> bool:
    lowered = word.lower()
    return (
        lowered in lx.NOISE_WORDS
        or lowered in _ALL_TERMS
        or lowered in _NOT_PLACES
        or any(lowered in names for names in lx.UNITS.values())
    )


def overlaps(start: int, name: str, spans: list[tuple[int, str]]) -> bool:
    return any(start < s + len(n) and s < start + len(name) for s, n in spans)


def unknown_cjk_places(text: str, known: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """CJK runs left after removing known names, lexicon terms and function words."""
    masked = list(text)
    for start, name in known:
        masked[start : start + len(name)] = [" "] * len(name)
    strip_terms = sorted(
        {t for ts in lx.CONCEPTS.values() for t in ts if lx.has_cjk(t)}
        | set(lx.CJK_FUNCTION_WORDS),
        key=lambda term: (-len(term), term),
    )
    joined = "".join(masked)
    for term in strip_terms:
        joined = joined.replace(term, " " * len(term))
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"[\u3400-\u9fff]{2,6}", joined):
        found.append((match.start(), match.group()))
    return found


# --- reading tools ---------------------------------------------------------------------------

ParamRole = Literal[
    "enum",
    "timezone",
    "place",
    "symbol",
    "expression",
    "text",
    "unit_from",
    "unit_to",
    "unit",
    "number",
    "other",
]

_PLACE_WORDS = frozenset(
    lx.words(
        "city location place region country address town area loc destination 城市 地点 位置 地区"
    )
)
_SYMBOL_WORDS = frozenset(lx.words("symbol ticker 代码 股票代码"))
_EXPRESSION_WORDS = frozenset(
    lx.words("expression expr formula equation calculation math 表达式 算式")
)
_TEXT_WORDS = frozenset(
    lx.words(
        "query q text question prompt keywords keyword topic search term terms sentence 关键词 内容"
    )
)


def param_words(name: str, schema: dict[str, Any]) -> set[str]:
    description = str(schema.get("description", ""))
    words = set(split_identifier(name)) | english_words(description)
    words |= {w for w in _PLACE_WORDS | _SYMBOL_WORDS | _EXPRESSION_WORDS if w in description}
    return words


def param_role(name: str, schema: dict[str, Any]) -> ParamRole:
    """What kind of value a parameter wants, from its name, type and description."""
    names = set(split_identifier(name))
    words = param_words(name, schema)
    kind = schema.get("type")
    if enum_values(schema):
        return "enum"
    if kind in ("number", "integer"):
        return "number"
    if names & {"timezone", "tz", "zone"}:
        return "timezone"
    if names & _PLACE_WORDS:
        return "place"
    if names & _SYMBOL_WORDS or (names & {"code"} and "stock" in words):
        return "symbol"
    if names & _EXPRESSION_WORDS:
        return "expression"
    if "unit" in words or "units" in words or "单位" in words:
        return unit_role(names)
    if names & _TEXT_WORDS:
        return "text"
    return description_role(words)


def unit_role(names: set[str]) -> ParamRole:
    if names & {"from", "source", "src", "original", "input"}:
        return "unit_from"
    if names & {"to", "target", "dest", "destination", "output", "into"}:
        return "unit_to"
    return "unit"


def description_role(words: set[str]) -> ParamRole:
    """A parameter with a vague name (`value`, `s`) is judged by its description alone."""
    if words & _PLACE_WORDS:
        return "place"
    if words & _EXPRESSION_WORDS:
        return "expression"
    if words & _SYMBOL_WORDS:
        return "symbol"
    if words & _TEXT_WORDS:
        return "text"
    return "other"


def enum_values(schema: dict[str, Any]) -> list[Any]:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    for option in schema.get("anyOf", []) or []:
        if isinstance(option, dict) and isinstance(option.get("enum"), list):
            return list(option["enum"])
    return []


def properties(spec: ToolSpec) -> dict[str, dict[str, Any]]:
    props = spec.parameters.get("properties", {})
    return (
        {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}
    )


def required(spec: ToolSpec) -> list[str]:
    names = spec.parameters.get("required", [])
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


# --- choosing tools ----------------------------------------------------------------------------

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
    if reading.places and roles & {"place", "timezone"}:
        score += 0.5
    return score


def choose_tools(reading: Reading, tools: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    """Tools clearly about the question with their scores, best first; [] when none is."""
    scored = [(tool_score(spec, reading), i, spec) for i, spec in enumerate(tools)]
    chosen = sorted((t for t in scored if t[0] >= _THRESHOLD), key=lambda t: (-t[0], t[1]))
    return [(score, spec) for score, _, spec in chosen]


# --- filling arguments -------------------------------------------------------------------------


@dataclass(frozen=True)
class Filling:
    """A tool's calls for the question, and the required parameters nothing could fill."""

    calls: tuple[PlannedCall, ...]
    missing: tuple[str, ...]


def fill_tool(spec: ToolSpec, reading: Reading) -> Filling:
    values: dict[str, list[Any]] = {}
    numbers = list(numbers_left(reading, spec))
    for name, schema in properties(spec).items():
        found = param_values(name, schema, reading, numbers)
        if found:
            values[name] = found
    missing = tuple(n for n in required(spec) if n not in values)
    return Filling(calls=spread_calls(spec.name, values), missing=missing)


def numbers_left(reading: Reading, spec: ToolSpec) -> list[float]:
    """Numbers free for numeric parameters: those inside an expression belong to it."""
    roles = {param_role(n, s) for n, s in properties(spec).items()}
    return [] if "expression" in roles and reading.expressions else list(reading.numbers)


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
        return [gist(reading.text)]
    if role in ("unit_from", "unit_to", "unit"):
        unit = unit_for(role, reading)
        return [tool_unit(unit, schema)] if unit else []
    return []


def as_number(value: float, schema: dict[str, Any]) -> int | float:
    return int(value) if schema.get("type") == "integer" or value.is_integer() else value


def enum_match(options: list[Any], reading: Reading) -> list[Any]:
    """The option the question names, directly or through a synonym (明天 → "tomorrow")."""
    hits: list[tuple[int, Any]] = []
    lowered = reading.text.lower()
    for option in options:
        spellings = {str(option).lower(), *lx.ENUM_SYNONYMS.get(str(option).lower(), ())}
        unit = canonical_unit(str(option))
        if unit:
            spellings |= set(lx.UNITS[unit])
        positions = [p for s in spellings for p in spelling_positions(lowered, s.lower()) if s]
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


def gist(text: str) -> str:
    """The question without its trailing punctuation and polite openers."""
    trimmed = re.sub(r"^(please|请问|请|帮我|麻烦你?)\s*", "", text.strip(), flags=re.IGNORECASE)
    return trimmed.rstrip("?？!！。. ")


def unit_for(role: ParamRole, reading: Reading) -> str | None:
    if not reading.units:
        return None
    if role == "unit_from":
        return reading.units[0] if len(reading.units) > 1 or number_before_unit(reading) else None
    if role == "unit_to":
        return (
            reading.units[-1] if len(reading.units) > 1 or not number_before_unit(reading) else None
        )
    return reading.units[0]


def number_before_unit(reading: Reading) -> bool:
    """True for "100 km", where the unit says what the number is in (so it is the source)."""
    position = reading.unit_spans[0][0]
    return re.search(r"\d\s*$", reading.text[:position]) is not None


_UNIT_LETTERS = {"c": "celsius", "f": "fahrenheit", "k": "kelvin"}


def canonical_unit(word: str) -> str | None:
    """The canonical unit a word names; single letters count here (enum members like "C")."""
    lowered = word.strip().lower()
    if lowered in _UNIT_LETTERS:
        return _UNIT_LETTERS[lowered]
    for unit, names in lx.UNITS.items():
        if lowered in names:
            return unit
    return None


def tool_unit(unit: str, schema: dict[str, Any]) -> str:
    """How this tool writes the unit: an enum member, a spelling its description uses, or ours."""
    for option in enum_values(schema):
        if canonical_unit(str(option)) == unit:
            return str(option)
    description = str(schema.get("description", "")).lower()
    for spelling in lx.UNITS[unit]:
        if spelling.isascii() and spelling.isalpha() and re.search(rf"\b{spelling}\b", description):
            return spelling
    return unit


# --- the first turn ----------------------------------------------------------------------------


def plan(reading: Reading, tools: Sequence[ToolSpec]) -> tuple[PlannedCall, ...]:
    """Every call the question needs now, from the tools clearly about it.

    When the best tool lacks a value only another tool's result can give ("巴黎现在多少华氏度"
    needs the temperature before converting), the tools that can run now go first, even weaker
    ones; the waiting tool is left for a later turn.
    """
    chosen = [(score, fill_tool(spec, reading)) for score, spec in choose_tools(reading, tools)]
    if not chosen:
        return ()
    best_score, best = chosen[0]
    ready = [(s, f) for s, f in chosen if not f.missing]
    if not best.missing:
        ready = [(s, f) for s, f in ready if s >= best_score * _RELATIVE]
    # With nothing fully fillable, try the best tool anyway: its error says what is missing.
    use = [f for _, f in ready] or [best]
    return tuple(call for filling in use for call in filling.calls)


# --- later turns: fixing errors ----------------------------------------------------------------

_QUOTED = r"[`'\"“‘]([^`'\"”’]+)[`'\"”’]"
_SUGGESTION_RE = re.compile(
    rf"(?:did you mean|你是不是想|是否是|您是否要找)[:：]?\s*{_QUOTED}", re.I
)
_UNKNOWN_TOOL_RE = re.compile(r"unknown tool|no tool named|not a known tool|未知工具", re.I)
_AVAILABLE_RE = re.compile(r"available tools?:\s*([^\n]+)", re.I)
_MISSING_RE = re.compile(
    rf"missing required argument\s*{_QUOTED}|{_QUOTED} is a required property", re.I
)
_UNEXPECTED_RE = re.compile(
    rf"unexpected argument\s*{_QUOTED}|{_QUOTED} was unexpected|unknown argument\s*{_QUOTED}", re.I
)
_ENUM_RE = re.compile(rf"{_QUOTED} must be one of ([^;\n]+)|is not one of \[([^\]]+)\]", re.I)
_UNPARSED_RE = re.compile(
    r"not valid JSON|never closed|ended inside a tool call|is not a JSON object|"
    r"not the JSON object|matches neither a call|without a function name|could not be read|"
    r"holds no tool call|block is empty",
    re.I,
)
_TRANSIENT_RE = re.compile(r"timed out|timeout|temporar|try again|rate limit|unavailable", re.I)


def fix_call(exchange: Exchange, reading: Reading, tools: Sequence[ToolSpec]) -> PlannedCall | None:
    """A corrected call for a failed one, read from what the error says; None if none is known."""
    error = exchange.result or ""
    call = exchange.call
    by_name = {spec.name: spec for spec in tools}
    if call.name not in by_name:
        renamed = renamed_tool(call.name, error, list(by_name))
        return PlannedCall(renamed, call.arguments, call.key) if renamed else None
    spec = by_name[call.name]
    arguments = dict(call.arguments)
    arguments = apply_suggestion(arguments, error, spec)
    arguments = drop_unexpected(arguments, error, spec)
    arguments = fix_enums(arguments, error, spec, reading)
    arguments = add_missing(arguments, error, spec, reading, call.key)
    return PlannedCall(call.name, arguments, call.key)


def quoted_groups(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)


def renamed_tool(name: str, error: str, known: list[str]) -> str | None:
    suggestion = _SUGGESTION_RE.search(error)
    if suggestion and suggestion.group(1) in known:
        return suggestion.group(1)
    listed = _AVAILABLE_RE.search(error)
    candidates = [t.strip(" .`'\"") for t in listed.group(1).split(",")] if listed else known
    close = difflib.get_close_matches(name, [c for c in candidates if c in known], n=1, cutoff=0.5)
    return close[0] if close else None


def apply_suggestion(arguments: dict[str, Any], error: str, spec: ToolSpec) -> dict[str, Any]:
    """ "Did you mean 'Paris'?" replaces the value the error names (or the closest one)."""
    match = _SUGGESTION_RE.search(error)
    if not match or _UNEXPECTED_RE.search(error) or _UNKNOWN_TOOL_RE.search(error):
        return arguments
    suggestion = match.group(1)
    strings = {k: v for k, v in arguments.items() if isinstance(v, str)}
    named = [k for k, v in strings.items() if v and v in error[: match.start()]]
    target = named[0] if named else closest_key(strings, suggestion)
    return {**arguments, target: suggestion} if target else arguments


def closest_key(strings: dict[str, str], suggestion: str) -> str | None:
    if not strings:
        return None
    return max(strings, key=lambda k: difflib.SequenceMatcher(None, strings[k], suggestion).ratio())


def drop_unexpected(arguments: dict[str, Any], error: str, spec: ToolSpec) -> dict[str, Any]:
    """Remove unexpected names, moving each value to the expected name it was probably meant as."""
    fixed = dict(arguments)
    expected = list(properties(spec))
    for match in _UNEXPECTED_RE.finditer(error):
        wrong = quoted_groups(match)
        if wrong not in fixed:
            continue
        value = fixed.pop(wrong)
        close = difflib.get_close_matches(wrong, [e for e in expected if e not in fixed], 1, 0.5)
        if close:
            fixed[close[0]] = value
    return fixed


def fix_enums(
    arguments: dict[str, Any], error: str, spec: ToolSpec, reading: Reading
) -> dict[str, Any]:
    """Swap a value outside its enum for an allowed one: the same unit, the one the question
    names, or the closest spelling."""
    fixed = dict(arguments)
    props = properties(spec)
    for match in _ENUM_RE.finditer(error):
        name = match.group(1)
        targets = [name] if name in fixed else [k for k in fixed if enum_values(props.get(k, {}))]
        for target in targets:
            options = enum_values(props.get(target, {}))
            if fixed[target] in options:
                continue
            chosen = (
                same_unit_option(fixed[target], options)
                or enum_match(options, reading)
                or closest_option(fixed[target], options)
            )
            if chosen:
                fixed[target] = chosen[0]
    return fixed


def same_unit_option(value: Any, options: list[Any]) -> list[Any]:
    unit = canonical_unit(str(value))
    return [o for o in options if unit and canonical_unit(str(o)) == unit][:1]


def closest_option(value: Any, options: list[Any]) -> list[Any]:
    texts = [str(o) for o in options]
    close = difflib.get_close_matches(str(value), texts, n=1, cutoff=0.0)
    return [options[texts.index(close[0])]] if close else []


def add_missing(
    arguments: dict[str, Any],
    error: str,
    spec: ToolSpec,
    reading: Reading,
    key: tuple[str, Any] | None,
) -> dict[str, Any]:
    """Fill the required names the call lacks, from the question (keeping this call's own key)."""
    absent = [n for n in required(spec) if n not in arguments]
    absent += [
        quoted_groups(m) for m in _MISSING_RE.finditer(error) if quoted_groups(m) not in arguments
    ]
    if not absent:
        return arguments
    filled = dict(arguments)
    fresh = fill_tool(spec, reading).calls
    source = next((c for c in fresh if key and c.arguments.get(key[0]) == key[1]), fresh[0])
    for name in dict.fromkeys(absent):
        if name in source.arguments:
            filled[name] = source.arguments[name]
    return filled


def retry_allowed(fixed: PlannedCall, failed: Exchange, history: Sequence[Exchange]) -> bool:
    """Never send a call that already failed, except one identical retry of a transient error."""
    same = [e for e in history if e.failed and same_call(e.call, fixed)]
    if not same_call(fixed, failed.call):
        return not same
    return bool(_TRANSIENT_RE.search(failed.result or "")) and len(same) < 2


def same_call(a: PlannedCall, b: PlannedCall) -> bool:
    return a.name == b.name and a.arguments == b.arguments


# --- later turns: what is still to do ----------------------------------------------------------


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
    items = plan(reading, tools)
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
            unit = next(
                (u for s, u in lx.UNIT_SUFFIXES.items() if str(key).lower().endswith(s)), None
            )
            if unit and isinstance(value, (int, float)) and not isinstance(value, bool):
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


# --- deciding ----------------------------------------------------------------------------------

_MAX_TURNS = 8


def decide(conversation: Conversation) -> Decision:
    """The next step: the calls still needed, or the final answer."""
    reading = read_question(conversation.question)
    tools = conversation.tools
    if not conversation.turns:
        calls = plan(reading, tools)
        return Decision(calls, lead_in(calls, reading)) if calls else direct_answer(reading, tools)
    history = [e for turn in conversation.turns for e in turn]
    if len(conversation.turns) < _MAX_TURNS:
        retries = [
            fixed
            for e in conversation.turns[-1]
            if e.failed
            and not e.unparsed
            and (fixed := fix_call(e, reading, tools))
            and retry_allowed(fixed, e, history)
        ]
        if retries:
            return Decision(tuple(retries), retry_lead_in(conversation.turns[-1], reading))
        more = pending_calls(reading, tools, history) or conversion_calls(reading, tools, history)
        if more and any(e.unparsed for e in conversation.turns[-1]):
            # Calls that could not be read are made again in full: say why.
            return Decision(tuple(more), retry_lead_in(conversation.turns[-1], reading))
        if more:
            return Decision(tuple(more), follow_up_lead_in(more, reading))
    return Decision(text=final_answer(reading, conversation.turns, tools))


# --- words: lead-ins ---------------------------------------------------------------------------


def tool_list(calls: Sequence[PlannedCall]) -> str:
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.name] = counts.get(call.name, 0) + 1
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in counts.items())


def lead_in(calls: Sequence[PlannedCall], reading: Reading) -> str:
    if reading.zh:
        return f"好的，我先调用 {tool_list(calls)} 获取需要的信息。"
    return f"Let me call {tool_list(calls)} to find out."


def retry_lead_in(turn: Sequence[Exchange], reading: Reading) -> str:
    failed = next(e for e in turn if e.failed)
    reason = short_error(failed.result or "")
    if reading.zh:
        return f"上一次调用 {failed.call.name} 出错了（{reason}），我修正后重试。"
    return f"The call to {failed.call.name} failed ({reason}); let me fix it and try again."


def follow_up_lead_in(calls: Sequence[PlannedCall], reading: Reading) -> str:
    if reading.zh:
        return f"拿到结果了，接下来调用 {tool_list(calls)}。"
    return f"Got that. Next, {tool_list(calls)}."


def short_error(error: str) -> str:
    """An error on one line, without the "Error:" prefix and the closing advice to the model."""
    lines = [line.strip().lstrip("- ") for line in error.strip().splitlines()]
    lines = [line for line in lines if line and not line.lower().startswith("fix these")]
    text = re.sub(r"^error:?\s*", "", " ".join(lines), flags=re.I) or "unknown error"
    return text if len(text) <= 160 else text[:157] + "..."


# --- words: answers without tools --------------------------------------------------------------

_GREETINGS = ("你好", "您好", "嗨", "哈喽", "hello", "hi", "hey", "good morning", "good evening")
_THANKS = ("谢谢", "多谢", "感谢", "thanks", "thank you", "thx")
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


def mentions(text: str, phrases: Iterable[str]) -> bool:
    lowered = text.lower()
    words = english_words(text)
    for phrase in phrases:
        if lx.has_cjk(phrase) or " " in phrase:
            if phrase in lowered:
                return True
        elif phrase in words:
            return True
    return False


def direct_answer(reading: Reading, tools: Sequence[ToolSpec]) -> Decision:
    for phrases, zh, en in _TOPICS:
        if mentions(reading.text, phrases):
            return Decision(text=zh if reading.zh else en)
    if mentions(reading.text, _THANKS):
        return Decision(text="不客气！还有什么可以帮你的吗？" if reading.zh else "You're welcome!")
    abilities = ability_list(tools, reading)
    if mentions(reading.text, _GREETINGS):
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


def ability_list(tools: Sequence[ToolSpec], reading: Reading) -> str:
    empty = "（无描述）" if reading.zh else "(no description)"
    return "\n".join(f"- {t.name}: {first_line(t.description) or empty}" for t in tools)


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# --- words: answers from results ---------------------------------------------------------------


def decode(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content


def final_answer(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> str:
    lines: list[str] = []
    for exchange in answerable(reading, turns, tools):
        lines += describe_exchange(exchange, reading)
    if not lines:
        return "我没能得到任何结果。" if reading.zh else "I could not get any result."
    return "\n".join(lines)


def answerable(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> list[Exchange]:
    """Successful results once each, plus the failures no later retry made good."""
    retried = retried_failures(reading, turns, tools)
    keep: list[Exchange] = []
    for t, turn in enumerate(turns):
        made_again = any(not e.failed for later in turns[t + 1 :] for e in later)
        for i, exchange in enumerate(turn):
            if (t, i) in retried or (exchange.unparsed and made_again):
                continue
            if not exchange.failed and any(same_call(exchange.call, k.call) for k in keep):
                continue
            keep.append(exchange)
    return keep


def retried_failures(
    reading: Reading, turns: Sequence[Sequence[Exchange]], tools: Sequence[ToolSpec]
) -> set[tuple[int, int]]:
    """(turn, index) of failed calls that a later turn made good: a retry is the fix the brain
    derives from the failure (so the lineage is recomputed, not remembered), made in the next
    turn or, when that retry failed too, succeeding later."""
    retried: set[tuple[int, int]] = set()
    items = plan(reading, tools)
    for t in range(1, len(turns)):
        later_ok = [e for turn in turns[t:] for e in turn if not e.failed]
        for i, failed in enumerate(turns[t - 1]):
            fixed = fix_call(failed, reading, tools) if failed.failed else None
            if fixed and (
                any(same_call(fixed, later.call) for later in turns[t])
                or attempted(fixed, later_ok, items)
            ):
                retried.add((t - 1, i))
    return retried


def describe_exchange(exchange: Exchange, reading: Reading) -> list[str]:
    name = exchange.call.name
    if exchange.failed:
        return [failure_line(exchange, reading)]
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
        return [f"{expression} = {data}"]
    return [generic_line(name, data, reading)]


def failure_line(exchange: Exchange, reading: Reading) -> str:
    name = exchange.call.name or "?"
    reason = short_error(exchange.result or "no result")
    missing = [quoted_groups(m) for m in _MISSING_RE.finditer(exchange.result or "")]
    if reading.zh:
        ask = f"请告诉我 {'、'.join(missing)}，我再试一次。" if missing else ""
        return f"抱歉，{name} 调用失败：{reason}。{ask}".rstrip()
    ask = f" Tell me the {', '.join(missing)} and I'll try again." if missing else ""
    return f"Sorry, {name} failed: {reason}.{ask}".replace("..", ".")


def is_conversion(data: dict[str, Any]) -> bool:
    return isinstance(data.get("text"), str) or {"result", "to_unit"} <= set(data)


def conversion_line(data: dict[str, Any]) -> str:
    if isinstance(data.get("text"), str) and data["text"]:
        return str(data["text"])
    source = f"{data.get('value', '?')} {data.get('from_unit', '')}".strip()
    return f"{source} = {data.get('result')} {data.get('to_unit')}"


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


def generic_line(name: str, data: Any, reading: Reading) -> str:
    if isinstance(data, dict):
        fields = [f"{k}: {v}" for k, v in data.items() if not isinstance(v, (dict, list))][:8]
        body = ("，" if reading.zh else ", ").join(fields)
    elif isinstance(data, list):
        body = ("、" if reading.zh else ", ").join(str(item) for item in data[:8])
    elif isinstance(data, str):
        body = f"“{data}”" if reading.zh else f'"{data}"'
    else:
        body = json.dumps(data, ensure_ascii=False)
    return f"{name}：{body}" if reading.zh else f"{name}: {body}"


def is_weather(data: dict[str, Any]) -> bool:
    return bool({"condition", "condition_en", "condition_zh", "weather"} & set(data)) and any(
        str(k).startswith("temp") or str(k).endswith("_c") for k in data
    )


def weather_lines(data: dict[str, Any], reading: Reading) -> list[str]:
    city = city_name(data, reading)
    day = str(data.get("day", ""))
    condition = localized(data, "condition", reading.zh)
    temp, high, low = data.get("temp_c"), data.get("high_c"), data.get("low_c")
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

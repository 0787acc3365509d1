"""Words of questions, results and tools: English words, identifiers split into words, concepts,
unit spellings, numbers as answers show them, and what kind of value each tool parameter wants."""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx

_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*")


@lru_cache(maxsize=64)
def english_words(text: str) -> frozenset[str]:
    """Lowercase English words plus their singular forms ("units" also gives "unit"). Cached:
    the question is read for words many times in a request, once per result for one."""
    found: set[str] = set()
    for raw in _WORD_RE.findall(text):
        word = raw.lower().removesuffix("'s").strip("'-")
        if not word:
            continue
        found.add(word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            found.add(word[:-1])
    return frozenset(found)


@lru_cache(maxsize=64)
def lowercase(text: str) -> str:
    """`text.lower()`, once per text: the question is lowered many times in a request."""
    return text.lower()


def split_identifier(name: str) -> list[str]:
    """`get_weather` → [get, weather]; `lookupStock` → [lookup, stock]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [part.lower() for part in re.split(r"[^A-Za-z0-9]+", spaced) if part]


# Each concept's terms, split once: Chinese ones are looked for in the text, English ones among
# its words.
_CONCEPT_TERMS = {
    concept: (
        tuple(t for t in terms if lx.has_cjk(t)),
        frozenset(t for t in terms if not lx.has_cjk(t)),
    )
    for concept, terms in lx.CONCEPTS.items()
}


def concepts_in(text: str, words: AbstractSet[str]) -> Iterable[str]:
    for concept, (chinese, english) in _CONCEPT_TERMS.items():
        if any(term in text for term in chinese) or not english.isdisjoint(words):
            yield concept


def mentions(text: str, phrases: Iterable[str]) -> bool:
    return mentions_any(text, tuple(phrases))


@lru_cache(maxsize=256)
def mentions_any(text: str, phrases: tuple[str, ...]) -> bool:
    lowered = lowercase(text)
    words = english_words(text)
    return any(
        phrase in lowered if lx.has_cjk(phrase) or " " in phrase else phrase in words
        for phrase in phrases
    )


@lru_cache(maxsize=4096)
def first_spelled(lowered: str, spelling: str) -> int | None:
    """Where `lowered` first spells `spelling` (as spelling_positions finds it), or None.
    Cached: a request may ask the same of its question for every tool that offers it."""
    positions = spelling_positions(lowered, spelling)
    return positions[0] if positions else None


def spelling_positions(lowered: str, spelling: str) -> list[int]:
    if spelling not in lowered:  # most are not there: a plain search says so soonest
        return []
    if lx.has_cjk(spelling) or not spelling[0].isalpha():
        return [m.start() for m in re.finditer(re.escape(spelling), lowered)]
    # A bare "in" or "m" is a unit only right after a number ("5 m", "12 in").
    if spelling in lx.AMBIGUOUS_UNIT_WORDS:
        pattern = rf"(?<=\d)\s*{re.escape(spelling)}(?![a-z])"
    else:
        pattern = rf"(?<![a-z]){re.escape(spelling)}(?![a-z])"
    return [m.start() for m in re.finditer(pattern, lowered)]


_UNIT_LETTERS = {"c": "celsius", "f": "fahrenheit", "k": "kelvin"}


def canonical_unit(word: str) -> str | None:
    """The canonical unit a word names; single letters count here (enum members like "C")."""
    lowered = word.strip().lower()
    known = (unit for unit, names in lx.UNITS.items() if lowered in names)
    return _UNIT_LETTERS.get(lowered) or next(known, None)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def unit_of_field(key: str) -> str | None:
    """The unit a result field's name ends in: `temp_c` celsius, `distance_km` km."""
    _, underscore, last = key.rpartition("_")
    return canonical_unit(last) if underscore else None


def field_extreme(key: str) -> str | None:
    """Which of a day's measures a result field holds, from its name: `high_c` the high,
    `min_temp` the low, `temp_c` neither (the current one)."""
    words = set(split_identifier(key))
    return next((e for e, spellings in lx.EXTREMES.items() if words & set(spellings)), None)


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


_MARKUP_RE = re.compile(r"[<{]")
STATED_CHARS = 200
_STATED_DEPTH = 16


def stated(text: str, limit: int = STATED_CHARS) -> str:
    """Text read from a tool result as an answer states it: its words up to the first tag or
    JSON (`<`, `{`), on one line, at most `limit` characters, with `…` where more was left out.
    A result is data: pasted whole, it would repeat as the model's own words whatever it held,
    a `<tool_call>` that a web page planted included."""
    flat = " ".join(text.split())
    markup = _MARKUP_RE.search(flat)
    plain = flat[: markup.start()].rstrip() if markup else flat
    if len(plain) > limit:
        return plain[: limit - 1].rstrip() + "…"
    return plain + "…" if markup else plain


def stated_values(value: Any, depth: int = 0) -> Any:
    """A decoded result with every string in it (keys too) as `stated` gives it: the values the
    model read, never the result's text."""
    if isinstance(value, str):
        return stated(value)
    if depth >= _STATED_DEPTH and isinstance(value, (dict, list)):
        return "…"
    if isinstance(value, dict):
        return {stated(str(k)): stated_values(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [stated_values(v, depth + 1) for v in value]
    return value


def shown(value: Any) -> str:
    """A value as an answer shows it: floats rounded, everything else as text."""
    if isinstance(value, float):
        return short_number(value)
    return round_decimals(str(value)) if isinstance(value, str) else str(value)


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
    "currency_from",
    "currency_to",
    "currency",
    "number",
    "other",
]

PLACE_WORDS = frozenset(
    lx.words(
        "city location place region country address town area loc destination 城市 地点 位置 地区"
    )
)
_SYMBOL_WORDS = frozenset(lx.words("symbol ticker 代码 股票代码"))
_EXPRESSION_WORDS = frozenset(
    lx.words("expression expr formula equation calculation math 表达式 算式")
)
_CURRENCY_WORDS = frozenset(lx.words("currency currencies ccy 货币 币种"))
_TEXT_WORDS = frozenset(
    lx.words(
        "query q text question prompt keywords keyword topic search term terms sentence 关键词 内容"
    )
)


def param_words(name: str, schema: dict[str, Any]) -> set[str]:
    description = str(schema.get("description", ""))
    words = set(split_identifier(name)) | english_words(description)
    cjk_words = PLACE_WORDS | _SYMBOL_WORDS | _EXPRESSION_WORDS | _CURRENCY_WORDS
    words |= {w for w in cjk_words if w in description}
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
    if names & PLACE_WORDS:
        return "place"
    if names & _SYMBOL_WORDS or (names & {"code"} and "stock" in words):
        return "symbol"
    if names & _EXPRESSION_WORDS:
        return "expression"
    iso_example = "iso" in words and any(code in description_of(schema) for code in lx.CURRENCIES)
    if names & _CURRENCY_WORDS or words & _CURRENCY_WORDS or iso_example:
        return direction_role(names, "currency")
    if "unit" in words or "units" in words or "单位" in words:
        return direction_role(names, "unit")
    if names & _TEXT_WORDS:
        return "text"
    return description_role(words)


def param_roles(spec: ToolSpec) -> set[ParamRole]:
    return {param_role(n, s) for n, s in properties(spec).items()}


def description_of(schema: dict[str, Any]) -> str:
    return str(schema.get("description", ""))


def direction_role(names: set[str], kind: Literal["unit", "currency"]) -> ParamRole:
    """A unit or currency parameter: the one a value is in, the one wanted, or just one."""
    if names & {"from", "source", "src", "original", "input", "base"}:
        return "unit_from" if kind == "unit" else "currency_from"
    if names & {"to", "target", "dest", "destination", "output", "into", "quote"}:
        return "unit_to" if kind == "unit" else "currency_to"
    return kind


def description_role(words: set[str]) -> ParamRole:
    """A parameter with a vague name (`value`, `s`) is judged by its description alone."""
    if words & PLACE_WORDS:
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
    options = schema.get("anyOf")
    for option in options if isinstance(options, list) else []:
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

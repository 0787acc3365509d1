"""Reading a question (its words, concepts, places, arithmetic, units...) and what each of a
tool's parameters wants. Every reader looks at each character a bounded number of times."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from toolcall_cli.messages import ToolSpec
from toolcall_cli.models._conversation import description_of, enum_values, is_number, properties
from toolcall_cli.offline import _lexicon as lx

Spans = tuple[tuple[int, str], ...]  # (where, what) of each thing a text names, in order
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?")


def english_words(text: str) -> set[str]:
    """Lowercase English words, and the singular of a plural ("units" gives "unit" too)."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", text)
    found = {w.lower().removesuffix("'s").strip("'-") for w in words}
    return (found | {w[:-1] for w in found if len(w) > 3 and w[-1] == "s" != w[-2]}) - {""}


def split_identifier(name: str) -> list[str]:
    """`get_weather` → [get, weather]; `lookupStock` → [lookup, stock]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name[:64])
    return [part.lower() for part in re.split(r"[^A-Za-z0-9]+", spaced) if part]


def mentions(text: str, phrases: Iterable[str]) -> bool:
    lowered, found = text.lower(), english_words(text)
    return any(p in lowered if lx.has_cjk(p) or " " in p else p in found for p in phrases)


def concepts_of(text: str, words: set[str] | None = None) -> set[str]:
    """The concepts a text is about: its Chinese terms, and its English `words`."""
    words = english_words(text) if words is None else words
    terms = lx.CONCEPTS.items()
    return {c for c, ts in terms if any(t in text if lx.has_cjk(t) else t in words for t in ts)}


def positions(lowered: str, spelling: str) -> list[int]:
    """Where a spelling stands as a word of its own; "in" or "m" only after a number."""
    if not spelling or spelling not in lowered:  # a plain search is far cheaper than a regex
        return []
    if lx.has_cjk(spelling) or not spelling[0].isalpha():
        return [m.start() for m in re.finditer(re.escape(spelling), lowered)]
    before = r"(?<=\d)\s*" if spelling in lx.LONE_UNITS else r"(?<![a-z])"
    return [m.start() for m in re.finditer(rf"{before}{re.escape(spelling)}(?![a-z])", lowered)]


def spans(text: str, table: dict[str, tuple[str, ...]]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each name of `table` spelled, in order; the longest wins."""
    lowered, used, found = text.lower(), bytearray(len(text)), []
    spellings = ((s.lower(), n) for n, ss in table.items() for s in ss)
    for spelling, name in sorted(spellings, key=lambda s: (-len(s[0]), s)):
        for start in positions(lowered, spelling):
            end = start + len(spelling)
            if not any(used[start:end]):
                used[start:end] = b"\1" * (end - start)
                found.append((start, end, name))
    return sorted(found)


def canonical_unit(word: str) -> str | None:
    """The unit a word names; a single letter counts here (an enum member "C")."""
    lowered = word.strip().lower()
    found = (u for u, spellings in lx.UNITS.items() if lowered in spellings)
    return "kelvin" if lowered == "k" else next(found, None)


def unit_of_field(key: str) -> str | None:
    """The unit a result field's name ends in: `temp_c` celsius, `distance_km` km."""
    _, underscore, last = key.rpartition("_")
    return canonical_unit(last) if underscore else None


def field_extreme(key: str) -> str | None:
    """`high_c` the high, `min_temp` the low, `temp_c` neither (the value now)."""
    parts = set(split_identifier(key))
    return next((e for e, spellings in lx.EXTREMES.items() if parts & set(spellings)), None)


_TABLES = (lx.UNITS, lx.CURRENCIES, lx.SYNONYMS, lx.EXTREMES, lx.CONCEPTS)
_COMMON = {s.lower() for table in _TABLES for spellings in table.values() for s in spellings}
_COMMON |= {f"{day}day" for day in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")}
_CJK_COMMON = sorted({t for t in (*_COMMON, *lx.WORDS["common"]) if lx.has_cjk(t)}, key=len)[::-1]
_GAZETTEER = {p.en: p.names for p in lx.PLACES}


def find_places(text: str) -> tuple[str, ...]:
    """Places: the gazetteer's, then names within a sentence and runs of Chinese unexplained."""
    found = [(start, text[start:end]) for start, end, _ in spans(text, _GAZETTEER)]
    masked = list(text)
    for start, name in found:
        masked[start : start + len(name)] = " " * len(name)
    rest = "".join(masked)
    for word in re.finditer(r"(?<=[a-z,;] )[A-Z][a-zà-ÿ']+(?:[ -][A-Z][a-zà-ÿ]+)*", rest):
        found += [(word.start(), word[0])] if word[0].lower() not in _COMMON else []
    for term in (t for t in _CJK_COMMON if t in rest):
        rest = rest.replace(term, " " * len(term))
    found += [(m.start(), m[0]) for m in re.finditer(r"[\u3400-\u9fff]{2,6}", rest)]
    return tuple(dict.fromkeys(name for _, name in sorted(found)))


_N = r"(?<![\d.])\d+(?:\.\d+)?"
_AFTER = r"(?<=[\d)])\s*,?\s*"  # an operator word only right after an operand: "7 times 8"
_SPOKEN: tuple[tuple[str, Any], ...] = (
    (r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])", lambda m: m[0].replace(",", "")),  # 1,234
    (rf"({_N})\s*(?:%|percent)\s*of\s*", r"\1/100*"),
    (rf"的\s*({_N})\s*次方", r"**\1"),
    (rf"(?:the\s+)?square\s+root\s+of\s*({_N})|({_N})\s*的平方根|根号\s*({_N})", r"sqrt(\1\2\3)"),
    (rf"({_N})\s*(?:squared|的平方)", r"\1**2"),
    (rf"{_AFTER}(?:to the power of|raised to|\^)\s*", "**"),
    (rf"{_AFTER}(?:乘以|乘|times|multiplied by|x(?=\s*\d)|×)\s*", "*"),
    (rf"{_AFTER}(?:除以|除|divided by|over|÷)\s*", "/"),
    (rf"{_AFTER}(?:加上|加|plus)\s*", "+"),
    (rf"{_AFTER}(?:减去|减|minus)\s*", "-"),
    (rf"{_AFTER}(?:modulo|mod)\s*", "%"),
)
"""Arithmetic in words as a calculator writes it, in order: "2的平方根加17" → "sqrt(2)+17"."""
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load)


def arithmetic_text(text: str) -> str:
    """The question with its arithmetic in words written out (_SPOKEN), numbers whole."""
    for spoken, written in _SPOKEN:
        text = re.sub(spoken, written, text, flags=re.I)
    return text


def find_expressions(text: str, functions: frozenset[str]) -> tuple[str, ...]:
    """The arithmetic of an arithmetic_text, as a calculator takes it: "12*5+3"."""
    names = "|".join(sorted(functions, key=len, reverse=True))
    called = rf"(?<![A-Za-z_])(?:{names})(?=\s*\()|(?<![A-Za-z_])(?:pi|e|tau)(?![\w(])"
    token = rf"\d+(?:\.\d+)?|\*\*|//|[-+*/%(),]|{called}"
    found = []
    for match in re.finditer(rf"(?:{token})(?:\s*(?:{token}))*", text):
        piece = re.sub(r"\s+", "", match[0])
        while piece != (shorter := piece.strip(",").lstrip("+*/%)").rstrip("+-*/%(")):
            piece = shorter  # what a sentence left at either end: operators, commas
        if is_arithmetic(piece, functions) and not re.fullmatch(r"\d{4}-\d\d?-\d\d?", piece):
            found.append(piece)
    return tuple(dict.fromkeys(found))


def is_arithmetic(expression: str, functions: frozenset[str]) -> bool:
    """A well-formed computation (an operator or a function call), not a lone number."""
    try:
        nodes = list(ast.walk(ast.parse(expression[:500], mode="eval")))
    except (SyntaxError, ValueError, RecursionError):
        return False
    known = all(isinstance(n, (*_NODES, ast.operator, ast.unaryop)) for n in nodes)
    names = all(n.id in functions for n in nodes if isinstance(n, ast.Name))
    numbers = all(is_number(n.value) for n in nodes if isinstance(n, ast.Constant))
    computes = any(isinstance(n, (ast.BinOp, ast.Call)) for n in nodes)
    return known and names and numbers and computes and any(c.isdigit() for c in expression)


@dataclass(frozen=True)
class Reading:
    """The question as the model understands it."""

    text: str
    zh: bool
    words: frozenset[str]
    concepts: frozenset[str]
    places: tuple[str, ...]
    expressions: tuple[str, ...]
    numbers: tuple[float, ...]
    tickers: tuple[str, ...]
    units: Spans
    currencies: Spans
    extremes: tuple[str, ...]  # which of a day's measures it asks for ("high", "low")


def read_question(text: str, tools: Sequence[ToolSpec] = ()) -> Reading:
    text = text[:2000]  # no question needs more
    arithmetic = arithmetic_text(text)
    described = [t.description[:2000] for t in tools if "expression" in roles_of(t)]
    named = {w for d in described for w in re.findall(r"\b[a-z][a-z0-9_]*\b", d)}  # gcd, lcm
    expressions = find_expressions(arithmetic, frozenset(lx.WORDS["math"]) | named)
    words = english_words(arithmetic)
    concepts = frozenset(concepts_of(text, words) | ({"math"} if expressions else set()))
    numbers = tuple(float(n) for n in _NUMBER.findall(arithmetic))
    units, money = (tuple((s, n) for s, _, n in spans(text, t)) for t in (lx.UNITS, lx.CURRENCIES))
    extremes = tuple(dict.fromkeys(name for _, _, name in spans(text, lx.EXTREMES)))
    tickers = re.findall(r"(?<![A-Za-z0-9])[A-Z]{2,5}(?:\.[A-Z]{1,2})?(?![A-Za-z0-9])", text)
    tickers = [t for t in dict.fromkeys(tickers) if t not in lx.WORDS["not_tickers"]]
    known = (frozenset(words), concepts, find_places(text), expressions, numbers, tuple(tickers))
    return Reading(text, lx.has_cjk(text), *known, units, money, extremes)


_ROLE_WORDS = lx.table("""
place: city location place region country address town area destination 城市 地点 位置 地区
symbol: symbol ticker 代码 股票代码
expression: expression expr formula equation calculation math 表达式 算式
currency: currency currencies ccy 货币 币种
text: query q text question prompt keywords keyword topic search term sentence 关键词 内容
unit: unit units 单位
from: from source src original input base
to: to target dest output into quote
""")
PLACE_WORDS = frozenset(_ROLE_WORDS["place"])


def param_role(name: str, schema: dict[str, Any]) -> str:
    """What kind of value a parameter wants, from its name, type and description: enum,
    number, timezone, place, symbol, expression, unit or currency (_from, _to), text, other."""
    names = set(split_identifier(name))
    if enum_values(schema):
        return "enum"
    if schema.get("type") in ("number", "integer"):
        return "number"
    if names & {"timezone", "tz", "zone"}:
        return "timezone"
    description = description_of(schema)
    chinese = {w for ws in _ROLE_WORDS.values() for w in ws if lx.has_cjk(w) and w in description}
    return worded_role(names, names | english_words(description) | chinese)


def worded_role(names: set[str], words: set[str]) -> str:
    """The role the parameter's name says, else its description (a vague name, `value`)."""
    has = {role: bool(words & set(ws)) for role, ws in _ROLE_WORDS.items()}
    named = next((r for r in ("place", "symbol", "expression") if names & set(_ROLE_WORDS[r])), "")
    kind = "currency" if has["currency"] else "unit" if has["unit"] else ""
    if named or not kind:
        texts = "text" if names & set(_ROLE_WORDS["text"]) else ""
        guess = next((r for r in ("place", "expression", "symbol", "text") if has[r]), "other")
        return named or texts or guess
    if names & set(_ROLE_WORDS["from"]):
        return f"{kind}_from"
    return f"{kind}_to" if names & set(_ROLE_WORDS["to"]) else kind


def roles_of(spec: ToolSpec) -> set[str]:
    return {param_role(n, s) for n, s in properties(spec).items()}


def tool_named(tools: Sequence[ToolSpec], name: str) -> ToolSpec:
    """The tool of that name, else one that takes nothing (a name no tool has)."""
    return next((t for t in tools if t.name == name), ToolSpec(name, "", {}))

"""Reading a question and a tool as the offline model understands them: words and concepts,
places, numbers and arithmetic, tickers, units, currencies; and what kind of value each of a
tool's parameters wants. Every reader looks at each character a bounded number of times."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?")
_TICKER = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,5}(?:\.[A-Z]{1,2})?(?![A-Za-z0-9])")
QUESTION_CHARS = 2000
"""How much of a question the model reads: no question needs more."""


def english_words(text: str) -> set[str]:
    """Lowercase English words, with the singular of a plural ("units" gives "unit" too)."""
    found: set[str] = set()
    for raw in _WORD.findall(text):
        word = raw.lower().removesuffix("'s").strip("'-")
        found |= (
            {word, word[:-1]}
            if len(word) > 3 and word.endswith("s") and not word.endswith("ss")
            else {word}
        )
    return found - {""}


def split_identifier(name: str) -> list[str]:
    """`get_weather` → [get, weather]; `lookupStock` → [lookup, stock]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name[:64])
    return [part.lower() for part in re.split(r"[^A-Za-z0-9]+", spaced) if part]


def mentions(text: str, phrases: Iterable[str]) -> bool:
    lowered, found = text.lower(), english_words(text)
    return any(p in lowered if lx.has_cjk(p) or " " in p else p in found for p in phrases)


def positions(lowered: str, spelling: str) -> list[int]:
    """Where a spelling stands in lowercase text as a word of its own; a bare "in" or "m" only
    right after a number ("5 m")."""
    if lx.has_cjk(spelling) or not spelling[0].isalpha():
        return [m.start() for m in re.finditer(re.escape(spelling), lowered)]
    before = r"(?<=\d)\s*" if spelling in lx.AMBIGUOUS_UNITS else r"(?<![a-z])"
    return [m.start() for m in re.finditer(rf"{before}{re.escape(spelling)}(?![a-z])", lowered)]


def spelled(
    text: str, table: dict[str, tuple[str, ...]], taken: Sequence[tuple[int, int, str]] = ()
) -> tuple[tuple[int, str], ...]:
    """(position, name) of each name of `table` the text spells, in order."""
    return tuple((start, name) for start, _, name in spans(text, table, taken))


def spans(
    text: str, table: dict[str, tuple[str, ...]], taken: Sequence[tuple[int, int, str]] = ()
) -> list[tuple[int, int, str]]:
    """(start, end, name) of each name of `table` the text spells; where spellings overlap,
    the longest wins. `taken` holds spans found before."""
    lowered, used = text.lower(), bytearray(len(text))
    found = list(taken)
    for start, end, _ in taken:
        used[start:end] = b"\1" * (end - start)
    by_length = sorted(
        ((s.lower(), n) for n, ss in table.items() for s in ss), key=lambda p: -len(p[0])
    )
    for spelling, name in by_length:
        for start in positions(lowered, spelling):
            end = start + len(spelling)
            if not any(used[start:end]):
                used[start:end] = b"\1" * (end - start)
                found.append((start, end, name))
    return sorted(found)


_UNIT_LETTERS = {"c": "celsius", "f": "fahrenheit", "k": "kelvin"}


def canonical_unit(word: str) -> str | None:
    """The unit a word names; single letters count here (enum members like "C")."""
    lowered = word.strip().lower()
    return _UNIT_LETTERS.get(lowered) or next(
        (u for u, ns in lx.UNITS.items() if lowered in ns), None
    )


def unit_of_field(key: str) -> str | None:
    """The unit a result field's name ends in: `temp_c` celsius, `distance_km` km."""
    _, underscore, last = key.rpartition("_")
    return canonical_unit(last) if underscore else None


def field_extreme(key: str) -> str | None:
    """`high_c` the high, `min_temp` the low, `temp_c` neither (the value now)."""
    parts = set(split_identifier(key))
    return next((e for e, spellings in lx.EXTREMES.items() if parts & set(spellings)), None)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- places ---------------------------------------------------------------------------------------

_TERMS = frozenset(t.lower() for ts in lx.CONCEPTS.values() for t in ts if not lx.has_cjk(t))
_NOT_PLACES = frozenset(
    lx.words(
        "monday tuesday wednesday thursday friday saturday sunday january february march april "
        "may june july august september october november december should will would could can "
        "is are was were do does did please hi hello hey thanks thank ok yes no"
    )
)
_OBJECTS = frozenset(
    lx.words(
        "the a an this that these those me my your it its us our him her them some all any to back out up down every each"
    )
)
"""After a sentence-opening capitalised word, these make it a verb ("Echo the text")."""
_CAPITALISED = re.compile(r"[A-Z][a-zà-ÿ]+(?:[ -][A-Z][a-zà-ÿ]+)*")
_EXAMPLES = re.compile(r"(?:e\.g\.?|eg\.|例如|比如|such as|for example)[^;；。)）\n]*", re.I)
_NAMING = frozenset(
    s
    for table in (lx.UNITS, lx.CURRENCIES, lx.ENUM_SYNONYMS, lx.EXTREMES)
    for ss in table.values()
    for s in ss
)
"""Words that name things, never places: units, currencies, enum words."""
_CJK_KNOWN = sorted(
    {
        t
        for t in {*(t for ts in lx.CONCEPTS.values() for t in ts), *lx.CJK_FUNCTION_WORDS, *_NAMING}
        if lx.has_cjk(t)
    },
    key=lambda t: (-len(t), t),
)


def tool_terms(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """The words tools use of themselves (names, parameters, Chinese words of descriptions
    other than examples): never a place."""
    terms: set[str] = set()
    for spec in tools:
        texts = [spec.description[:2000]]
        terms |= set(split_identifier(spec.name))
        for name, schema in properties(spec).items():
            terms |= set(split_identifier(name))
            texts.append(description_of(schema))
        cjk = {
            t
            for text in texts
            for t in re.findall(r"[\u3400-\u9fff]{2,}", _EXAMPLES.sub(" ", text))
        }
        terms |= {t for t in cjk if lx.place_named(t) is None}
    return frozenset(terms)


def find_places(text: str, terms: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Places in order of mention: the gazetteer's, then names that look like places."""
    table = {p.en: (p.zh, p.en, *p.aliases) for p in lx.PLACES}
    known = [(start, text[start:end]) for start, end, _ in spans(text, table)]
    found = known + english_places(text, known, terms) + cjk_places(text, known, terms)
    return tuple(dict.fromkeys(name for _, name in sorted(found)))


def english_places(
    text: str, known: list[tuple[int, str]], terms: frozenset[str]
) -> list[tuple[int, str]]:
    covered = bytearray(len(text))
    for at, name in known:
        covered[at : at + len(name)] = b"\1" * len(name)
    found = []
    for match in _CAPITALISED.finditer(text):
        kept = [w for w in re.split(r"[ -]", match.group()) if not common(w, terms)]
        if kept and not any(covered[match.start() : match.end()]) and not leading_verb(text, match):
            found.append((match.start() + match.group().find(kept[0]), " ".join(kept)))
    return found


def leading_verb(text: str, match: re.Match[str]) -> bool:
    """ "Echo the text ...": a capitalised word opening a sentence, followed by an object."""
    before = text[max(0, match.start() - 3) : match.start()].rstrip(" ")
    following = re.match(r"\s+([a-z']+)", text[match.end() : match.end() + 20])
    return (
        (not before or before[-1] in ".!?。！？;；")
        and " " not in match.group()
        and following is not None
        and following.group(1) in _OBJECTS
    )


def common(word: str, terms: frozenset[str]) -> bool:
    lowered = word.lower()
    return any(lowered in s for s in (lx.NOISE_WORDS, _TERMS, _NOT_PLACES, _NAMING, terms))


def cjk_places(
    text: str, known: list[tuple[int, str]], terms: frozenset[str]
) -> list[tuple[int, str]]:
    """Runs of Chinese left once known names, the lexicon's words and the tools' are gone."""
    masked = list(text)
    for at, name in known:
        masked[at : at + len(name)] = " " * len(name)
    joined = "".join(masked)
    for term in [*_CJK_KNOWN, *sorted((t for t in terms if lx.has_cjk(t)), key=len, reverse=True)]:
        if term in joined:
            joined = joined.replace(term, " " * len(term))
    return [(m.start(), m.group()) for m in re.finditer(r"[\u3400-\u9fff]{2,6}", joined)]


# --- arithmetic ---------------------------------------------------------------------------------

_N = r"(?<![\d.])\d+(?:\.\d+)?"
_SYMBOLS = str.maketrans(
    {"×": "*", "✕": "*", "÷": "/", "＋": "+", "－": "-", "−": "-", "＊": "*", "／": "/", "％": "%"}
    | {"（": "(", "）": ")", "π": "pi"}
)
_CJK_NUMERAL = re.compile("[〇零一二两三四五六七八九十百千万亿]+")
_ENGLISH_WORD = "|".join(sorted({*lx.ENGLISH_NUMBERS, *lx.ENGLISH_SCALES}, key=len, reverse=True))
_ENGLISH_NUMERAL = re.compile(
    rf"\b(?:{_ENGLISH_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_ENGLISH_WORD}))*\b", re.I
)
_PHRASES = tuple(
    (re.compile(pattern, re.I), replacement)
    for pattern, replacement in (
        (rf"百分之({_N})", r"\1%"),
        (rf"({_N})的({_N})\s*%", r"\1*\2/100"),
        (rf"({_N})\s*(?:%|percent|per cent)\s*of\s*", r"\1/100*"),
        (rf"(?:the\s+)?square\s+root\s+of\s*({_N})", r"sqrt(\1)"),
        (rf"({_N})\s*的?平方根", r"sqrt(\1)"),
        (rf"根号\s*({_N})", r"sqrt(\1)"),
        (rf"的\s*({_N})\s*次方", r"**\1"),
        (rf"\s*to\s+the\s+({_N})(?:st|nd|rd|th)?\s+power", r"**\1"),
    )
)
_OPERATORS = sorted(
    (
        (word.replace("_", " "), symbol)
        for symbol, spellings in (
            ("*", "乘以 乘上 乘 multiplied_by times"),
            ("/", "除以 除 divided_by over"),
            ("+", "加上 加 plus"),
            ("-", "减去 减 minus"),
            ("%", "模 modulo mod"),
            ("**", "raised_to_the_power_of to_the_power_of raised_to ^"),
            ("**2", "的平方 squared"),
            ("**3", "的立方 cubed"),
        )
        for word in spellings.split()
    ),
    key=lambda pair: -len(pair[0]),
)
"""Operator words, read only right after an operand ("7 times 8", never "what times")."""
_CHAIN = "↪"
"""Marks an operator that applies to everything before it ("(3+4)*5 再除以 7")."""
_CHAIN_WORDS = (
    r"(?:[,，;；.。]\s*)?(?:(?:and\s+)?then|and\s+after\s+that|after\s+that|next"
    r"|(?:然后|接着|之后|随后|再)再?(?:把|将)?(?:结果|它|得数)?)\s*"
)
_IT = r"(?:\s+(?:it|that|this|the\s+result))?"
_CHAINED = (
    (rf"divide{_IT}\s+by", "/"),
    (rf"multiply{_IT}\s+by", "*"),
    (r"add(?:\s+on)?", "+"),
    (r"subtract|take\s+away", "-"),
    (rf"square{_IT}", "**2"),
    (rf"cube{_IT}", "**3"),
    (r"平方", "**2"),
    (r"立方", "**3"),
    *((re.escape(word), symbol) for word, symbol in _OPERATORS if word != "^"),
)
_ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Constant,
    ast.Name,
    ast.Call,
    ast.Load,
    ast.operator,
    ast.unaryop,
)


def boundary(word: str) -> str:
    return r"\b" if word[0].isascii() and word[0].isalpha() else ""


def arithmetic_text(text: str) -> str:
    """The question with numbers as digits and arithmetic words as operators:
    "three hundred and twelve divided by four" → "312/4", "二的十次方" → "2**10"."""
    normal = without_separators(text).replace(_CHAIN, " ").translate(_SYMBOLS)
    normal = _CJK_NUMERAL.sub(as_digits(lx.cjk_number), normal)
    normal = _ENGLISH_NUMERAL.sub(as_digits(lx.english_number), normal)
    for pattern, replacement in _PHRASES:
        normal = pattern.sub(replacement, normal)
    for word, symbol in _OPERATORS:
        b = boundary(word)
        normal = re.sub(rf"(?<=[\d)%])\s*{b}{re.escape(word)}{b}\s*", symbol, normal, flags=re.I)
    normal = re.sub(r"(?<=\d)\s*[xX]\s*(?=\d)", "*", normal)
    for words, symbol in _CHAINED:
        b = boundary(words)
        chained = rf"(?<=[\d)%])\s*{_CHAIN_WORDS}{b}(?:{words}){b}\s*"
        normal = re.sub(chained, _CHAIN + symbol, normal, flags=re.I)
    return re.sub(rf"({_N})\s*%(?!\s*[\d(A-Za-z])", percent, normal)


def without_separators(text: str) -> str:
    """ "1,234" as one number: the comma groups three digits (a list "1,2,3" is no number)."""
    return re.sub(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])", lambda m: m[0].replace(",", ""), text)


def as_digits(read: Callable[[str], int | None]) -> Callable[[re.Match[str]], str]:
    return lambda m: m[0] if (value := read(m[0])) is None else str(value)


def percent(match: re.Match[str]) -> str:
    """ "15%*80" is a percentage; "17 % 5" a remainder; "5% tax" no arithmetic at all."""
    before = match.string[max(0, match.start() - 5) : match.start()].rstrip()
    after = match.string[match.end() : match.end() + 5].lstrip()
    near = before.endswith(("+", "-", "*", "/")) or after.startswith(("+", "-", "*", "/"))
    return f"{match[1]}/100" if near else match[0]


def math_functions(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """The functions an expression may use: the common ones, and those a tool taking an
    expression names in its description (gcd, lcm)."""
    named: set[str] = set()
    for spec in tools:
        if "expression" in param_roles(spec):
            texts = [spec.description[:2000], *map(description_of, properties(spec).values())]
            named |= {w for t in texts for w in re.findall(r"\b[a-z][a-z0-9_]*\b", t)}
    return lx.MATH_FUNCTIONS | named


def find_expressions(text: str, functions: frozenset[str]) -> tuple[str, ...]:
    """Arithmetic in an arithmetic_text, as a calculator takes it: "12*5+3", "sqrt(16)+1"."""
    names = "|".join(re.escape(f) for f in sorted(functions, key=len, reverse=True))
    constants = "|".join(sorted(lx.MATH_CONSTANTS, key=len, reverse=True))
    token = (
        rf"\d+(?:\.\d+)?|\*\*|//|[-+*/%(),^{_CHAIN}]|(?<![A-Za-z_])(?:{names})(?=\s*\()"
        rf"|(?<![A-Za-z_])(?:{constants})(?![A-Za-z_(])"
    )
    found: list[str] = []
    for match in re.finditer(rf"(?:{token})(?:\s*(?:{token}))*", text):
        candidate = re.sub(r"\s+", "", match.group()).replace("^", "**")
        for piece in top_level_parts(trimmed(candidate)):
            piece = chained(trimmed(piece))
            if not re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", piece) and is_arithmetic(
                piece, functions
            ):
                found.append(piece)
    return tuple(dict.fromkeys(found))


def trimmed(expression: str) -> str:
    """Without what a sentence left at either end: dangling operators, stray parentheses."""
    previous = None
    while previous != expression:
        previous = expression
        expression = expression.lstrip(f"+*/%,){_CHAIN}").rstrip(f"+-*/%,({_CHAIN}")
        if expression.startswith("(") and expression.count("(") > expression.count(")"):
            expression = expression[1:]
        if expression.endswith(")") and expression.count(")") > expression.count("("):
            expression = expression[:-1]
    return expression


def chained(expression: str) -> str:
    """ "(3+4)*5↪/7" → "((3+4)*5)/7": each chained operator applies to all before it."""
    done, *steps = expression.split(_CHAIN)
    for step in steps:
        done = f"({done}){step}" if is_operation(done) else f"{done}{step}"
    return done


def is_operation(expression: str) -> bool:
    try:
        return isinstance(ast.parse(expression, mode="eval").body, (ast.BinOp, ast.UnaryOp))
    except (SyntaxError, ValueError, RecursionError):
        return True


def top_level_parts(expression: str) -> list[str]:
    """Split at commas outside parentheses: "1+2, 3*4" is two, hypot(3,4) one."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expression):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(expression[start:i])
            start = i + 1
    return [*parts, expression[start:]]


def is_arithmetic(expression: str, functions: frozenset[str]) -> bool:
    """A well-formed computation (an operator or a function call), not a lone number."""
    if len(expression) > 500:
        return False
    try:
        nodes = list(ast.walk(ast.parse(expression, mode="eval")))
    except (SyntaxError, ValueError, RecursionError):
        return False
    allowed = functions | lx.MATH_CONSTANTS
    return (
        all(isinstance(n, _ALLOWED_NODES) for n in nodes)
        and all(n.id in allowed for n in nodes if isinstance(n, ast.Name))
        and all(is_number(n.value) for n in nodes if isinstance(n, ast.Constant))
        and any(isinstance(n, (ast.BinOp, ast.Call)) for n in nodes)
        and any(c.isdigit() for c in expression)
    )


# --- the question -------------------------------------------------------------------------------


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
    unit_spans: tuple[tuple[int, str], ...]
    """(position, canonical unit) of each unit named, in order."""
    currencies: tuple[tuple[int, str], ...]
    """(position, ISO code) of each currency named, in order."""
    extremes: tuple[str, ...]
    """Which of a day's measures it means ("high", "low"), in the order asked."""

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(unit for _, unit in self.unit_spans)


def read_question(text: str, tools: Sequence[ToolSpec] = ()) -> Reading:
    text = text[:QUESTION_CHARS]
    arithmetic = arithmetic_text(text)
    words = english_words(arithmetic)
    expressions = find_expressions(arithmetic, math_functions(tools))
    lowered = text.lower()
    concepts = {
        c
        for c, ts in lx.CONCEPTS.items()
        if any(t in text if lx.has_cjk(t) else t in words for t in ts)
    }
    codes = [
        (m.start(), m.end(), m[0])
        for m in re.finditer(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])", text)
        if m[0] in lx.CURRENCIES
    ]
    found_tickers = [t for t in _TICKER.findall(text) if t not in lx.NOT_TICKERS and len(t) >= 2]
    named = [
        t for name, t in lx.TICKERS.items() if mentions(text, (name,)) and t not in found_tickers
    ]
    return Reading(
        text=text,
        zh=lx.has_cjk(text),
        words=frozenset(words),
        concepts=frozenset(concepts | ({"math"} if expressions else set())),
        places=find_places(place_text(text, expressions), tool_terms(tools)),
        expressions=expressions,
        numbers=tuple(float(n) for n in _NUMBER.findall(without_separators(text))),
        tickers=(*found_tickers, *dict.fromkeys(named)),
        unit_spans=spelled(text, lx.UNITS),
        currencies=spelled(text, lx.CURRENCIES, codes),
        extremes=tuple(e for _, e in sorted(extremes(lowered))),
    )


def extremes(lowered: str) -> list[tuple[int, str]]:
    """ "最高气温", "tomorrow's high": (where, which) of the day's high or low it names."""
    found = [(e, [p for s in ss for p in positions(lowered, s)]) for e, ss in lx.EXTREMES.items()]
    return [(min(at), e) for e, at in found if at]


def place_text(text: str, expressions: tuple[str, ...]) -> str:
    """In arithmetic, Chinese numerals are numbers (二的十次方); elsewhere they may begin a name."""
    if not expressions:
        return text
    return _CJK_NUMERAL.sub(
        lambda m: " " * len(m[0]) if lx.cjk_number(m[0]) is not None else m[0], text
    )


# --- what a parameter wants ------------------------------------------------------------------------

Role = Literal[
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
_ROLE_WORDS: dict[Role, frozenset[str]] = {
    "symbol": frozenset(lx.words("symbol ticker 代码 股票代码")),
    "expression": frozenset(
        lx.words("expression expr formula equation calculation math 表达式 算式")
    ),
    "currency": frozenset(lx.words("currency currencies ccy 货币 币种")),
    "text": frozenset(
        lx.words(
            "query q text question prompt keywords keyword topic search term terms sentence 关键词 内容"
        )
    ),
}


def param_role(name: str, schema: dict[str, Any]) -> Role:
    """What kind of value a parameter wants, from its name, type and description."""
    names, description = set(split_identifier(name)), description_of(schema)
    words = (
        names
        | english_words(description)
        | {
            w
            for ws in (PLACE_WORDS, *_ROLE_WORDS.values())
            for w in ws
            if lx.has_cjk(w) and w in description
        }
    )
    if enum_values(schema):
        return "enum"
    if schema.get("type") in ("number", "integer"):
        return "number"
    if names & {"timezone", "tz", "zone"}:
        return "timezone"
    if names & PLACE_WORDS:
        return "place"
    if names & _ROLE_WORDS["symbol"] or (names & {"code"} and "stock" in words):
        return "symbol"
    if names & _ROLE_WORDS["expression"]:
        return "expression"
    iso = "iso" in words and any(code in description for code in lx.CURRENCIES)
    if words & _ROLE_WORDS["currency"] or iso:
        return direction_role(names, "currency")
    if words & {"unit", "units", "单位"}:
        return direction_role(names, "unit")
    if names & _ROLE_WORDS["text"]:
        return "text"
    vague: list[tuple[Role, frozenset[str]]] = [
        ("place", PLACE_WORDS),
        *((r, _ROLE_WORDS[r]) for r in ("expression", "symbol", "text")),
    ]
    return next((role for role, ws in vague if words & ws), "other")


def direction_role(names: set[str], kind: Literal["unit", "currency"]) -> Role:
    """A unit or currency: the one a value is in, the one wanted, or just one."""
    if names & {"from", "source", "src", "original", "input", "base"}:
        return "unit_from" if kind == "unit" else "currency_from"
    if names & {"to", "target", "dest", "destination", "output", "into", "quote"}:
        return "unit_to" if kind == "unit" else "currency_to"
    return kind


def param_roles(spec: ToolSpec) -> set[Role]:
    return {param_role(n, s) for n, s in properties(spec).items()}


def description_of(schema: dict[str, Any]) -> str:
    return str(schema.get("description", ""))[:1000]


def enum_values(schema: dict[str, Any]) -> list[Any]:
    options = [schema, *(o for o in schema.get("anyOf") or [] if isinstance(o, dict))]
    return next((list(o["enum"][:1000]) for o in options if isinstance(o.get("enum"), list)), [])


def properties(spec: ToolSpec) -> dict[str, dict[str, Any]]:
    props = spec.parameters.get("properties")
    return (
        {k: v for k, v in list(props.items())[:128] if isinstance(v, dict)}
        if isinstance(props, dict)
        else {}
    )


def required(spec: ToolSpec) -> list[str]:
    names = spec.parameters.get("required")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

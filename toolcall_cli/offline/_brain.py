"""The offline model's brain: reads a question, the tools it is given and the results so far,
and decides what to do next (calls, or an answer). It knows nothing of any wire format.
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx

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
class EarlierQuestion:
    """A question asked before the current one in the same conversation, with its calls."""

    question: str
    turns: tuple[tuple[Exchange, ...], ...] = ()

    @property
    def exchanges(self) -> list[Exchange]:
        return [e for turn in self.turns for e in turn]


@dataclass(frozen=True)
class Conversation:
    """Everything the brain reads from one request."""

    question: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[tuple[Exchange, ...], ...] = ()
    """The model's earlier turns since the question, each with its calls and their results."""
    earlier: tuple[EarlierQuestion, ...] = ()
    """The questions before this one, oldest first (a chat's history)."""


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
        "I A OK US USA UK EU UTC GMT AI CEO PM AM API JSON HTTP NYC TV ID KM MI KG LB CM FT F C RMB"
    )
) | frozenset(lx.CURRENCIES)
# "1,234" is one number when the comma groups three digits (a list "1,2,3" is not).
_THOUSANDS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("×", "*"),
    ("✕", "*"),
    ("÷", "/"),
    ("＋", "+"),
    ("－", "-"),
    ("−", "-"),
    ("＊", "*"),
    ("／", "/"),
    ("％", "%"),
    ("（", "("),
    ("）", ")"),
    ("π", "pi"),
)
_CJK_NUMERAL = "〇零一二两三四五六七八九十百千万亿"
_CJK_NUMERAL_RE = re.compile(f"[{_CJK_NUMERAL}]+")
_ENGLISH_NUMBER_WORD = "|".join(sorted({*lx.ENGLISH_NUMBERS, *lx.ENGLISH_SCALES}, key=len)[::-1])
_ENGLISH_NUMBER_RE = re.compile(
    rf"\b(?:{_ENGLISH_NUMBER_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_ENGLISH_NUMBER_WORD}))*\b", re.I
)
_NUM = r"\d+(?:\.\d+)?"
# Rewrites that turn words into arithmetic, applied in order once numbers are digits.
_PHRASES: tuple[tuple[str, str], ...] = (
    (rf"百分之({_NUM})", r"\1%"),
    (rf"({_NUM})的({_NUM})\s*%", r"\1*\2/100"),
    (rf"({_NUM})\s*(?:%|percent|per cent)\s*of\s*", r"\1/100*"),
    (rf"(?:the\s+)?square\s+root\s+of\s*({_NUM})", r"sqrt(\1)"),
    (rf"({_NUM})\s*的?平方根", r"sqrt(\1)"),
    (rf"根号\s*({_NUM})", r"sqrt(\1)"),
    (rf"的\s*({_NUM})\s*次方", r"**\1"),
    (rf"\s*to\s+the\s+({_NUM})(?:st|nd|rd|th)?\s+power", r"**\1"),
)
# Operator words count only right after an operand: "7 times 8" is arithmetic, "what times"
# is not (and must not read as "time" either).
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
    ("模", "%"),
    ("raised to the power of", "**"),
    ("to the power of", "**"),
    ("raised to", "**"),
    ("multiplied by", "*"),
    ("divided by", "/"),
    ("times", "*"),
    ("plus", "+"),
    ("minus", "-"),
    ("over", "/"),
    ("modulo", "%"),
    ("mod", "%"),
    ("squared", "**2"),
    ("cubed", "**3"),
    ("^", "**"),
)
# "(3+4)*5 再除以 7", "3 plus 4, then multiply by 5": the operator after a chaining word applies
# to everything computed so far. The mark stands for "wrap what came before in parentheses".
_CHAIN_MARK = "↪"
_CHAIN_WORDS = (
    r"(?:[,，;；.。]\s*)?(?:(?:and\s+)?then|and\s+after\s+that|after\s+that|next"
    r"|(?:然后|接着|之后|随后|再)再?(?:把|将)?(?:结果|它|得数)?)\s*"
)
_IT = r"(?:\s+(?:it|that|this|the\s+result))?"
# Imperative operators, read only after a chaining word ("then add 3"): alone, "add 3 to 5"
# puts its operands the other way round.
_CHAIN_OPERATORS: tuple[tuple[str, str], ...] = (
    (rf"divide{_IT}\s+by", "/"),
    (rf"multiply{_IT}\s+by", "*"),
    (r"add(?:\s+on)?", "+"),
    (r"subtract|take\s+away", "-"),
    (rf"square{_IT}", "**2"),
    (rf"cube{_IT}", "**3"),
    (r"平方", "**2"),
    (r"立方", "**3"),
    *((re.escape(word), symbol) for word, symbol in _OPERATOR_WORDS if word != "^"),
)
_PERCENT_RE = re.compile(rf"({_NUM})\s*%(?!\s*[\d(A-Za-z])")
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
    currencies: tuple[tuple[int, str], ...] = ()
    """(position, ISO code) of each currency mentioned, in order."""


def read_question(text: str, tools: Sequence[ToolSpec] = ()) -> Reading:
    arithmetic = arithmetic_text(text)
    words = english_words(arithmetic)
    expressions = find_expressions(arithmetic, math_functions(tools))
    concepts = set(concepts_in(text, words))
    if expressions:
        concepts.add("math")
    unit_spans = find_units(text)
    return Reading(
        text=text,
        zh=lx.has_cjk(text),
        words=frozenset(words),
        concepts=frozenset(concepts),
        places=find_places(place_text(text, expressions), tool_terms(tools)),
        expressions=expressions,
        numbers=tuple(float(n) for n in _NUMBER_RE.findall(without_separators(text))),
        tickers=find_tickers(text),
        units=tuple(unit for _, unit in unit_spans),
        unit_spans=unit_spans,
        currencies=find_currencies(text),
    )


def place_text(text: str, expressions: tuple[str, ...]) -> str:
    """The question for finding places: in arithmetic, Chinese numerals are numbers (二的十次方),
    elsewhere they may begin a name (三亚)."""
    if not expressions:
        return text
    return _CJK_NUMERAL_RE.sub(
        lambda m: " " * len(m.group()) if is_cjk_number(m) else m.group(), text
    )


_NUMBER_FOLLOWERS = lx.words("的 次方 平方 立方 乘 除 加 减 等于 是 模 分之 点 %")


def is_cjk_number(match: re.Match[str]) -> bool:
    """A numeral run that reads as a number: at the end, or followed by arithmetic words."""
    rest = match.string[match.end() :]
    return not rest or not lx.has_cjk(rest[0]) or rest.startswith(_NUMBER_FOLLOWERS)


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


# --- arithmetic ------------------------------------------------------------------------------


def without_separators(text: str) -> str:
    return _THOUSANDS_RE.sub(lambda m: m.group().replace(",", ""), text)


def arithmetic_text(text: str) -> str:
    """The question with numbers as digits and arithmetic words as operators:
    "three hundred and twelve divided by four" → "312/4", "二的十次方" → "2**10"."""
    normal = without_separators(text).replace(_CHAIN_MARK, " ")
    for symbol, ascii_form in _SYMBOLS:
        normal = normal.replace(symbol, ascii_form)
    normal = _CJK_NUMERAL_RE.sub(cjk_digits, normal)
    normal = _ENGLISH_NUMBER_RE.sub(english_digits, normal)
    for pattern, replacement in _PHRASES:
        normal = re.sub(pattern, replacement, normal, flags=re.I)
    for word, symbol in _OPERATOR_WORDS:
        boundary = r"\b" if word[0].isalpha() and word.isascii() else ""
        normal = re.sub(
            rf"(?<=[\d)%])\s*{boundary}{re.escape(word)}{boundary}\s*", symbol, normal, flags=re.I
        )
    normal = re.sub(r"(?<=\d)\s*[xX]\s*(?=\d)", "*", normal)
    normal = chained_operators(normal)
    return _PERCENT_RE.sub(percent_value, normal)


def chained_operators(text: str) -> str:
    """ "(3+4)*5 再除以 7" → "(3+4)*5↪/7": the mark tells find_expressions to apply the
    operator to the whole expression before it."""
    for words, symbol in _CHAIN_OPERATORS:
        boundary = r"\b" if words[0].isascii() and words[0].isalpha() else ""
        text = re.sub(
            rf"(?<=[\d)%])\s*{_CHAIN_WORDS}{boundary}(?:{words}){boundary}\s*",
            _CHAIN_MARK + symbol,
            text,
            flags=re.I,
        )
    return text


def percent_value(match: re.Match[str]) -> str:
    """ "15%*80" and "80*15%" are percentages; "17 % 5" is a remainder and "5% tax" is no
    arithmetic at all."""
    before = match.string[: match.start()].rstrip()
    after = match.string[match.end() :].lstrip()
    in_arithmetic = before.endswith(("+", "-", "*", "/")) or after.startswith(("+", "-", "*", "/"))
    return f"{match.group(1)}/100" if in_arithmetic else match.group()


def cjk_digits(match: re.Match[str]) -> str:
    value = lx.cjk_number(match.group())
    return match.group() if value is None else str(value)


def english_digits(match: re.Match[str]) -> str:
    value = lx.english_number(match.group())
    return match.group() if value is None else str(value)


def math_functions(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """Function names an expression may use: the common ones, and any that a tool taking an
    expression names in its description (sqrt, hypot, ...)."""
    named: set[str] = set()
    for spec in tools:
        if any(param_role(n, s) == "expression" for n, s in properties(spec).items()):
            texts = [
                spec.description,
                *(str(s.get("description", "")) for s in properties(spec).values()),
            ]
            named |= {w for t in texts for w in re.findall(r"\b[a-z][a-z0-9_]*(?=\b)", t)}
    return lx.MATH_FUNCTIONS | named


def expression_pattern(functions: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(f) for f in sorted(functions, key=len, reverse=True))
    constants = "|".join(sorted(lx.MATH_CONSTANTS, key=len, reverse=True))
    token = (
        rf"{_NUM}|\*\*|//|[-+*/%(),^{_CHAIN_MARK}]|(?<![A-Za-z_])(?:{names})(?=\s*\()"
        rf"|(?<![A-Za-z_])(?:{constants})(?![A-Za-z_(])"
    )
    return re.compile(rf"(?:{token})(?:\s*(?:{token}))*")


def find_expressions(text: str, functions: frozenset[str] = lx.MATH_FUNCTIONS) -> tuple[str, ...]:
    """Arithmetic in an arithmetic_text, as a calculator takes it: "12*5+3", "sqrt(16)+1"."""
    found: list[str] = []
    for match in expression_pattern(functions).finditer(text):
        candidate = re.sub(r"\s+", "", match.group()).replace("^", "**")
        for piece in top_level_parts(trim_expression(candidate)):
            piece = apply_chains(trim_expression(piece))
            if not _DATE_RE.match(piece) and is_arithmetic(piece, functions):
                found.append(piece)
    return tuple(dict.fromkeys(found))


def trim_expression(expression: str) -> str:
    """Drop what a sentence left at either end: dangling operators, stray parentheses."""
    previous = None
    while previous != expression:
        previous = expression
        expression = expression.lstrip(f"+*/%,){_CHAIN_MARK}").rstrip(f"+-*/%,({_CHAIN_MARK}")
        expression = balance_parentheses(expression)
    return expression


def apply_chains(expression: str) -> str:
    """ "(3+4)*5↪/7" → "((3+4)*5)/7": each chained operator applies to all that came before."""
    done, *steps = expression.split(_CHAIN_MARK)
    for step in steps:
        done = f"({done}){step}" if needs_parentheses(done) else f"{done}{step}"
    return done


def needs_parentheses(expression: str) -> bool:
    """Whether an expression must be bracketed before another operator applies to all of it."""
    try:
        tree = ast.parse(expression, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return True
    return isinstance(tree, (ast.BinOp, ast.UnaryOp))


def top_level_parts(expression: str) -> list[str]:
    """Split at commas outside parentheses: "1+2, 3*4" is two expressions, hypot(3,4) one."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expression):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(expression[start:i])
            start = i + 1
    return [*parts, expression[start:]]


def balance_parentheses(expression: str) -> str:
    """Drop stray parentheses a sentence left at either end of an expression."""
    while expression.startswith("(") and expression.count("(") > expression.count(")"):
        expression = expression[1:]
    while expression.endswith(")") and expression.count(")") > expression.count("("):
        expression = expression[:-1]
    return expression


_ARITHMETIC_NODES = (
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


def is_arithmetic(expression: str, functions: frozenset[str]) -> bool:
    """A well-formed computation (an operator or a function call), not a lone number."""
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return False
    nodes = list(ast.walk(tree))
    for node in nodes:
        if not isinstance(node, _ARITHMETIC_NODES):
            return False
        if isinstance(node, ast.Name) and node.id not in functions | lx.MATH_CONSTANTS:
            return False
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            return False
    computes = any(isinstance(n, (ast.BinOp, ast.Call)) for n in nodes)
    return computes and any(c.isdigit() for c in expression)


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


def find_currencies(text: str) -> tuple[tuple[int, str], ...]:
    """(position, ISO code) for each currency named: "USD" as written, or "美元", "euros"."""
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])", text):
        if match.group() in lx.CURRENCIES:
            taken.append(match.span())
            found.append((match.start(), match.group()))
    spellings = sorted(
        ((s, code) for code, names in lx.CURRENCIES.items() for s in names),
        key=lambda p: -len(p[0]),
    )
    for spelling, code in spellings:
        for start in spelling_positions(lowered, spelling):
            end = start + len(spelling)
            if not any(start < e and s < end for s, e in taken):
                taken.append((start, end))
                found.append((start, code))
    return tuple(sorted(found))


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
# After a sentence-initial capitalised word, these mark it as a verb ("Echo the text"),
# not a place ("Lhasa weather").
_OBJECT_WORDS = frozenset(
    lx.words(
        "the a an this that these those me my your it its us our him her them some all any "
        "to back out up down every each"
    )
)
_CAPITALISED_RE = re.compile(r"[A-Z][a-zà-ÿ]+(?:[ -][A-Z][a-zà-ÿ]+)*")
# "e.g. 北京, Paris": examples in a description are values, not the tool's own vocabulary.
_EXAMPLES_RE = re.compile(r"(?:e\.g\.?|eg\.|例如|比如|such as|for example)[^;；。)）\n]*", re.I)
# World-knowledge words that name things, never places: units, currencies, enum synonyms.
_NAMING_WORDS = frozenset(
    [
        *(s for names in lx.UNITS.values() for s in names),
        *(s for names in lx.CURRENCIES.values() for s in names),
        *(s for names in lx.ENUM_SYNONYMS.values() for s in names),
    ]
)


def tool_terms(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """Words the tools use of themselves: their names, parameter names and (for Chinese) the
    words of their descriptions. The tools' own vocabulary is never a place."""
    terms: set[str] = set()
    for spec in tools:
        terms |= set(split_identifier(spec.name))
        texts = [spec.description]
        for name, schema in properties(spec).items():
            terms |= set(split_identifier(name))
            texts.append(str(schema.get("description", "")))
        for text in texts:
            cjk = re.findall(r"[\u3400-\u9fff]{2,}", _EXAMPLES_RE.sub(" ", text))
            terms |= {t for t in cjk if lx.place_named(t) is None}
    return frozenset(terms)


def find_places(text: str, terms: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Place names in order of mention: the gazetteer first, then names that look like places."""
    spans = gazetteer_spans(text)
    spans += unknown_english_places(text, spans, terms)
    spans += unknown_cjk_places(text, spans, terms)
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


def unknown_english_places(
    text: str, known: list[tuple[int, str]], terms: frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for match in _CAPITALISED_RE.finditer(text):
        words = [w for w in re.split(r"[ -]", match.group()) if not is_common_word(w, terms)]
        if (
            not words
            or overlaps(match.start(), match.group(), known)
            or is_leading_verb(text, match)
        ):
            continue
        name = " ".join(words)
        found.append((match.start() + match.group().find(words[0]), name))
    return found


def is_leading_verb(text: str, match: re.Match[str]) -> bool:
    """A capitalised word opening a sentence and followed by an object is an imperative verb:
    "Echo the text ...", "Translate this ..."."""
    opens_sentence = re.search(r"(?:^|[.!?。！？;；]\s*)$", text[: match.start()]) is not None
    following = re.match(r"\s+([a-z']+)", text[match.end() :])
    return (
        opens_sentence
        and " " not in match.group()
        and following is not None
        and following.group(1) in _OBJECT_WORDS
    )


def is_common_word(word: str, terms: frozenset[str] = frozenset()) -> bool:
    lowered = word.lower()
    return (
        lowered in lx.NOISE_WORDS
        or lowered in _ALL_TERMS
        or lowered in _NOT_PLACES
        or lowered in _NAMING_WORDS
        or lowered in terms
    )


def overlaps(start: int, name: str, spans: list[tuple[int, str]]) -> bool:
    return any(start < s + len(n) and s < start + len(name) for s, n in spans)


def unknown_cjk_places(
    text: str, known: list[tuple[int, str]], terms: frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    """CJK runs left after removing known names, lexicon terms, the tools' own words, unit
    and currency names, and function words."""
    masked = list(text)
    for start, name in known:
        masked[start : start + len(name)] = [" "] * len(name)
    vocabulary = (
        {t for ts in lx.CONCEPTS.values() for t in ts}
        | set(lx.CJK_FUNCTION_WORDS)
        | _NAMING_WORDS
        | terms
    )
    strip_terms = sorted(
        (t for t in vocabulary if lx.has_cjk(t)), key=lambda term: (-len(term), term)
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
    "currency_from",
    "currency_to",
    "currency",
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
_CURRENCY_WORDS = frozenset(lx.words("currency currencies ccy 货币 币种"))
_TEXT_WORDS = frozenset(
    lx.words(
        "query q text question prompt keywords keyword topic search term terms sentence 关键词 内容"
    )
)


def param_words(name: str, schema: dict[str, Any]) -> set[str]:
    description = str(schema.get("description", ""))
    words = set(split_identifier(name)) | english_words(description)
    cjk_words = _PLACE_WORDS | _SYMBOL_WORDS | _EXPRESSION_WORDS | _CURRENCY_WORDS
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
    if names & _PLACE_WORDS:
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


# --- filling arguments -------------------------------------------------------------------------


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
    """Every value the question gives for each parameter (several cities give several)."""
    values: dict[str, list[Any]] = {}
    numbers = list(numbers_left(reading, spec))
    for name, schema in properties(spec).items():
        found = param_values(name, schema, reading, numbers)
        if found:
            values[name] = found
    return values


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
        return quoted_texts(reading.text) or [gist(reading.text)]
    if role in ("unit_from", "unit_to", "unit"):
        unit = unit_for(role, reading)
        return [tool_unit(unit, schema)] if unit else []
    if role in ("currency_from", "currency_to", "currency"):
        code = currency_for(role, reading)
        return [code] if code else []
    return []


def as_number(value: float, schema: dict[str, Any]) -> int | float:
    if not math.isfinite(value):  # a number too big for a float stays as the float it became
        return value
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
        spellings |= set(lx.CURRENCIES.get(str(option).upper(), ()))
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


_QUOTED_TEXT_RE = re.compile(
    r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])|\"([^\"]+)\"|“([^”]+)”|「([^」]+)」"
)


def quoted_texts(text: str) -> list[str]:
    """Text the question quotes ("Echo 'hello'"): that is the text meant, not the question."""
    return [next(g for g in m.groups() if g) for m in _QUOTED_TEXT_RE.finditer(text)][:1]


def gist(text: str) -> str:
    """The question without its trailing punctuation and polite openers."""
    trimmed = re.sub(r"^(please|请问|请|帮我|麻烦你?)\s*", "", text.strip(), flags=re.IGNORECASE)
    return trimmed.rstrip("?？!！。. ")


def unit_for(role: ParamRole, reading: Reading) -> str | None:
    """The source unit is the one the number is in ("70 kg"), wherever it stands in the
    question ("How many pounds is 70 kg?"); the target is another one."""
    if not reading.units:
        return None
    if role not in ("unit_from", "unit_to"):
        return reading.units[0]
    positions = [position for position, _ in reading.unit_spans]
    return pick_direction(role == "unit_from", list(reading.units), positions, reading.text)


def pick_direction(
    source_wanted: bool, names: list[str], positions: list[int], text: str
) -> str | None:
    """From units or currencies in question order: the source (the one right after a number,
    else the first) or the target (the last other one). One alone is the source only when a
    number comes before it."""
    numbered = [i for i, position in enumerate(positions) if number_before(text, position)]
    if len(names) == 1:
        alone_is_source = bool(numbered)
        return names[0] if source_wanted == alone_is_source else None
    source = numbered[0] if numbered else 0
    if source_wanted:
        return names[source]
    return next(names[i] for i in range(len(names) - 1, -1, -1) if i != source)


def number_before(text: str, position: int) -> bool:
    return re.search(r"\d\s*$", text[:position]) is not None


def currency_for(role: ParamRole, reading: Reading) -> str | None:
    """Like units: with two currencies the first is the source and the last the target; one
    alone is the source when a number comes before it ("100 USD")."""
    codes = [code for _, code in reading.currencies]
    if not codes:
        return None
    if role == "currency":
        return codes[0]
    positions = [position for position, _ in reading.currencies]
    return pick_direction(role == "currency_from", codes, positions, reading.text)


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
        if (
            len(spelling) > 1  # "c" would match inside "°C"
            and spelling.isascii()
            and spelling.isalpha()
            and re.search(rf"\b{spelling}\b", description)
        ):
            return spelling
    return unit


# --- the first turn ----------------------------------------------------------------------------


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


# --- follow-up questions -----------------------------------------------------------------------


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
    courtesy = mentions(reading.text, (*_THANKS, *_GREETINGS))
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
    tools = conversation.tools
    reading = read_question(conversation.question, tools)
    if not conversation.turns:
        return first_step(reading, conversation)
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


def first_step(reading: Reading, conversation: Conversation) -> Decision:
    """The question's own calls; else what the conversation so far makes of it; else a partial
    attempt; else ask for what the tool needs; else answer without tools."""
    tools = conversation.tools
    if asks_currency_conversion(reading) and not any(handles_currencies(t) for t in tools):
        return Decision(text=no_currency_tool(reading, tools))
    planned = make_plan(reading, tools)
    if planned.calls and planned.complete:
        return Decision(planned.calls, lead_in(planned.calls, reading))
    follow_up = tuple(context_calls(reading, tools, conversation.earlier))
    if follow_up:
        return Decision(follow_up, lead_in(follow_up, reading))
    if planned.calls:
        return Decision(planned.calls, lead_in(planned.calls, reading))
    if planned.wanted is not None and planned.wanted.spec is not None:
        return Decision(text=ask_for(planned.wanted.spec, planned.wanted.missing, reading))
    return direct_answer(reading, tools)


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
    head, *items = error_lines(error)
    text = f"{head} {'; '.join(item.strip().removeprefix('- ') for item in items)}"
    return shorten(text.strip())


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


def no_currency_tool(reading: Reading, tools: Sequence[ToolSpec]) -> str:
    """Say so rather than misuse a unit converter or a calculator without exchange rates."""
    if reading.zh:
        head = "我的工具都不能换算货币，也查不到汇率，我不想乱猜。"
        return f"{head}我能做的是：\n{ability_list(tools, reading)}" if tools else head
    head = "None of my tools converts currencies or knows exchange rates, and I'd rather not guess."
    return f"{head} They can do this:\n{ability_list(tools, reading)}" if tools else head


def ask_for(spec: ToolSpec, missing: Sequence[str], reading: Reading) -> str:
    """The question back when a tool fits but the question gives none of what it requires."""
    props = properties(spec)
    described: list[str] = []
    for name in missing:
        detail = first_line(description_of(props.get(name, {}))).rstrip(".。 ")
        if not detail:
            described.append(name)
        else:
            described.append(f"{name}（{detail}）" if reading.zh else f"{name} ({detail})")
    if reading.zh:
        return f"我可以用 {spec.name} 来回答，但还需要你告诉我：{'、'.join(described)}。"
    needs = ", ".join(described)
    return f"I can answer that with {spec.name}, but I need the {needs}. Could you tell me?"


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
    exchanges = answerable(reading, turns, tools)
    for exchange in exchanges:
        lines += describe_exchange(exchange, reading)
    if not lines:
        return "我没能得到任何结果。" if reading.zh else "I could not get any result."
    verdict = comparison_line(reading, exchanges)
    return "\n".join([*lines, verdict] if verdict else lines)


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
        return failure_lines(exchange, reading)
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
        return [expression_line(str(expression), data)]
    return [generic_line(name, data, reading)]


def expression_line(expression: str, value: int | float | str) -> str:
    """ "12*5+3 = 63"; a rounded result says so: "10/3 ≈ 3.33"."""
    if isinstance(value, float):
        shown = short_number(value)
        exact = shown == repr(value) or float(shown) == value
        return f"{expression} {'=' if exact else '≈'} {shown}"
    return f"{expression} = {value}"


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


def shown(value: Any) -> str:
    """A value as an answer shows it: floats rounded, everything else as text."""
    if isinstance(value, float):
        return short_number(value)
    return round_decimals(str(value)) if isinstance(value, str) else str(value)


def failure_lines(exchange: Exchange, reading: Reading) -> list[str]:
    """What failed, quoting the error line by line, and what to tell me to try again."""
    name = exchange.call.name or "?"
    reasons = error_lines(exchange.result or "no result")
    missing = [quoted_groups(m) for m in _MISSING_RE.finditer(exchange.result or "")]
    head, items = reasons[0], reasons[1:]
    if reading.zh:
        ask = f"请告诉我 {'、'.join(missing)}，我再试一次。" if missing else ""
        if items:
            lines = [f"抱歉，{name} 调用失败：{head.rstrip(':：')}：", *items]
            return [*lines, ask] if ask else lines
        return [f"抱歉，{name} 调用失败：{head.rstrip('.。')}。{ask}"]
    ask = f"Tell me the {', '.join(missing)} and I'll try again." if missing else ""
    if items:
        lines = [f"Sorry, {name} failed: {head.rstrip(':')}:", *items]
        return [*lines, ask] if ask else lines
    return [f"Sorry, {name} failed: {head.rstrip('.')}. {ask}".rstrip()]


def error_lines(error: str) -> list[str]:
    """An error's lines without the "Error:" prefix and the closing advice to the model; the
    details of a multi-line error as "- ..." items."""
    lines = [line.strip() for line in error.strip().splitlines()]
    lines = [line for line in lines if line and not line.lower().startswith("fix these")]
    if not lines:
        return ["unknown error"]
    head = re.sub(r"^error:?\s*", "", lines[0], flags=re.I) or "unknown error"
    items = [f"  - {shorten(line.lstrip('- '))}" for line in lines[1:]]
    return [shorten(head), *items]


def shorten(text: str) -> str:
    return text if len(text) <= 160 else text[:157] + "..."


_TO_KEYS = lx.words("to_unit to_currency to target")
_FROM_KEYS = lx.words("from_unit from_currency from source")
_INPUT_KEYS = lx.words("value amount quantity")
_OUTPUT_KEYS = lx.words("result converted output")


def is_conversion(data: dict[str, Any]) -> bool:
    """A result that converts one quantity into another: units, currencies."""
    if isinstance(data.get("text"), str):
        return True
    return first_key(data, _TO_KEYS, str) is not None and (
        first_key(data, _OUTPUT_KEYS, (int, float)) is not None
    )


def conversion_line(data: dict[str, Any]) -> str:
    if isinstance(data.get("text"), str) and data["text"]:
        return round_decimals(str(data["text"]))
    value = data.get(first_key(data, _INPUT_KEYS, (int, float)) or "", "?")
    source = f"{shown(value)} {data.get(first_key(data, _FROM_KEYS, str) or '', '')}".strip()
    output = data[first_key(data, _OUTPUT_KEYS, (int, float)) or ""]
    return f"{source} = {shown(output)} {data[first_key(data, _TO_KEYS, str) or '']}"


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


# Fields that say what a result is about, which unit its number is in, and which are noise.
_SUBJECT_KEYS = lx.words("symbol ticker name title city location country query id code")
_UNIT_KEYS = lx.words("currency unit units to_currency to_unit to target")
_QUIET_KEYS = frozenset(lx.words("note notes source disclaimer timestamp updated as_of"))


def generic_line(name: str, data: Any, reading: Reading) -> str:
    """A result from a tool the brain has no special words for, as a short sentence."""
    if isinstance(data, dict):
        return record_sentence(name, data, reading.zh)
    if isinstance(data, list):
        items = ("、" if reading.zh else ", ").join(shown(item) for item in data[:8])
        more = "…" if len(data) > 8 else ""
        if reading.zh:
            return f"{name} 返回了 {len(data)} 项：{items}{more}。"
        return f"{name} returned {len(data)} item(s): {items}{more}."
    if isinstance(data, str):
        return f"{name} 返回：“{data}”" if reading.zh else f'{name} returned "{data}".'
    value = shown(data) if isinstance(data, (int, float)) else json.dumps(data)
    return f"{name} 的结果是 {value}。" if reading.zh else f"{name} returned {value}."


def record_sentence(name: str, data: dict[str, Any], zh: bool) -> str:
    """ "AAPL 的价格是 190.5 USD。" / "The price of AAPL is 190.5 USD.", from the keys alone:
    what it is about, its main number and that number's unit, then a few other fields."""
    scalars = {
        str(k): v for k, v in data.items() if not isinstance(v, (dict, list)) and v is not None
    }
    subject_key = first_key(scalars, _SUBJECT_KEYS, str)
    unit_key = first_key(scalars, _UNIT_KEYS, str)
    main_key = first_key(scalars, tuple(lx.FIELD_LABELS), (int, float)) or next(
        (k for k, v in scalars.items() if is_number(v)), None
    )
    used = {subject_key, unit_key, main_key}
    extras = [(k, v) for k, v in scalars.items() if k not in used and k.lower() not in _QUIET_KEYS][
        :4
    ]
    subject = str(scalars[subject_key]) if subject_key else ""
    if main_key is None:
        return fields_sentence(subject or name, extras, zh)
    english, chinese = lx.FIELD_LABELS.get(main_key.lower(), (main_key.replace("_", " "),) * 2)
    unit = f" {scalars[unit_key]}" if unit_key else ""
    value = f"{shown(scalars[main_key])}{unit}"
    detail = extras_text(extras, zh)
    if zh:
        owner = f"{subject} 的" if subject else f"{name} 返回的"
        return f"{owner}{chinese}是 {value}{detail}。"
    owner = f"The {english} of {subject}" if subject else f"The {english} from {name}"
    return f"{owner} is {value}{detail}."


def first_key(
    fields: dict[str, Any], names: Sequence[str], kind: type | tuple[type, ...]
) -> str | None:
    lowered = {k.lower(): k for k in fields}
    for name in names:
        key = lowered.get(name)
        if key is not None and isinstance(fields[key], kind) and not isinstance(fields[key], bool):
            return key
    return None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def extras_text(extras: Sequence[tuple[str, Any]], zh: bool) -> str:
    if not extras:
        return ""
    pairs = [f"{k.replace('_', ' ')}: {shown(v)}" for k, v in extras]
    return f"（{'，'.join(pairs)}）" if zh else f" ({', '.join(pairs)})"


def fields_sentence(subject: str, fields: Sequence[tuple[str, Any]], zh: bool) -> str:
    if zh:
        parts = "，".join(f"{k.replace('_', ' ')} 为 {shown(v)}" for k, v in fields)
        return f"{subject}：{parts or '没有内容'}。"
    parts = ", ".join(f"{k.replace('_', ' ')} is {shown(v)}" for k, v in fields)
    return f"{subject}: {parts or 'nothing returned'}."


def is_weather(data: dict[str, Any]) -> bool:
    return bool({"condition", "condition_en", "condition_zh", "weather"} & set(data)) and any(
        str(k).startswith("temp") or str(k).endswith("_c") for k in data
    )


def weather_lines(data: dict[str, Any], reading: Reading) -> list[str]:
    city = city_name(data, reading)
    day = str(data.get("day", ""))
    condition = localized(data, "condition", reading.zh)
    temp, high, low = (
        shown(data[k]) if data.get(k) is not None else None for k in ("temp_c", "high_c", "low_c")
    )
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


# --- words: comparing places -------------------------------------------------------------------

_HOTTER_RE = re.compile(r"哪.{0,6}?(?:热|暖)|比.{1,10}?(?:热|暖)")
_COLDER_RE = re.compile(r"哪.{0,6}?(?:冷|凉)|比.{1,10}?(?:冷|凉)")
# The temperature to compare by, best first: the day's high says most about "hotter".
_COMPARED_KEYS = ("high_c", "temp_c", "temperature", "temp")


def asked_comparison(reading: Reading) -> Literal["hotter", "colder"] | None:
    """Which way the question compares places, if it does: 更热 / colder / 哪个暖和."""
    text = reading.text
    if mentions(text, lx.COLDER_WORDS) or _COLDER_RE.search(text):
        return "colder"
    if mentions(text, lx.HOTTER_WORDS) or _HOTTER_RE.search(text):
        return "hotter"
    return None


def compared_temperatures(
    reading: Reading, exchanges: Sequence[Exchange]
) -> tuple[str, list[tuple[str, float]]] | None:
    """(the key compared, [(city, temperature)]) over the weather results, one per city."""
    records = [
        data
        for e in exchanges
        if not e.failed and isinstance(data := decode(e.result or ""), dict) and is_weather(data)
    ]
    for key in _COMPARED_KEYS:
        values = [(city_name(d, reading), float(d[key])) for d in records if is_number(d.get(key))]
        cities = {city for city, _ in values}
        if len(values) == len(records) and len(cities) == len(values) >= 2:
            return key, values
    return None


def comparison_line(reading: Reading, exchanges: Sequence[Exchange]) -> str | None:
    """Which place is hotter (or colder), when the question asks and the results can tell:
    "深圳更热（最高 28°C，广州 25°C）。" """
    direction = asked_comparison(reading)
    compared = compared_temperatures(reading, exchanges) if direction else None
    if direction is None or compared is None:
        return None
    key, values = compared
    ranked = sorted(values, key=lambda cv: cv[1], reverse=direction == "hotter")
    best = ranked[0][1]
    winners = [city for city, value in ranked if value == best]
    others = [(city, value) for city, value in ranked if value != best]
    high = key == "high_c"
    if reading.zh:
        return comparison_zh(direction, high, winners, best, others)
    return comparison_en(reading, direction, high, winners, best, others)


def comparison_zh(
    direction: str, high: bool, winners: list[str], best: float, others: list[tuple[str, float]]
) -> str:
    word = "热" if direction == "hotter" else "冷"
    label = "最高" if high else "气温"
    names = "和".join(winners)
    if not others:
        return f"{names}一样{word}（{label}都是 {shown(best)}°C）。"
    rest = "，".join(f"{city} {shown(value)}°C" for city, value in others)
    degree = "更" if len(winners) + len(others) == 2 else "最"
    return f"{names}{degree}{word}（{label} {shown(best)}°C，{rest}）。"


def comparison_en(
    reading: Reading,
    direction: str,
    high: bool,
    winners: list[str],
    best: float,
    others: list[tuple[str, float]],
) -> str:
    asked = [w for w in lx.HOTTER_WORDS + lx.COLDER_WORDS if w.isascii() and w in reading.words]
    word = asked[0] if asked else direction
    label = "high" if high else "temperature"
    names = " and ".join(winners)
    if not others:
        plain = {"hott": "hot", "warm": "warm", "cold": "cold", "cool": "cool", "chill": "chilly"}
        base = next((v for k, v in plain.items() if word.startswith(k)), word)
        return f"{names} are equally {base} ({label} {shown(best)}°C each)."
    rest = ", ".join(f"{city} {shown(value)}°C" for city, value in others)
    verb = "are" if len(winners) > 1 else "is"
    if len(winners) + len(others) > 2:
        word = "the " + superlative(word)
    return f"{names} {verb} {word} ({label} {shown(best)}°C; {rest})."


def superlative(comparative: str) -> str:
    """hotter → hottest, chillier → chilliest; a superlative stays as it is."""
    return comparative.removesuffix("er") + "est" if comparative.endswith("er") else comparative

"""Arithmetic in a question: numbers written as words or numerals, operator words, chained
steps, as the expression a calculator tool takes."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._words import description_of, param_roles, properties

# "1,234" is one number when the comma groups three digits (a list "1,2,3" is not).
_THOUSANDS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_SYMBOLS = str.maketrans(
    {"×": "*", "✕": "*", "÷": "/", "＋": "+", "－": "-", "−": "-", "＊": "*", "／": "/", "％": "%"}
    | {"（": "(", "）": ")", "π": "pi"}
)
_CJK_NUMERAL = "〇零一二两三四五六七八九十百千万亿"
_CJK_NUMERAL_RE = re.compile(f"[{_CJK_NUMERAL}]+")
_ENGLISH_NUMBER_WORD = "|".join(sorted({*lx.ENGLISH_NUMBERS, *lx.ENGLISH_SCALES}, key=len)[::-1])
_ENGLISH_NUMBER_RE = re.compile(
    rf"\b(?:{_ENGLISH_NUMBER_WORD})(?:(?:\s+and\s+|\s+|-)(?:{_ENGLISH_NUMBER_WORD}))*\b", re.I
)
_NUM = r"\d+(?:\.\d+)?"
# A pattern that starts with a number starts only where a number does: tried from inside a long
# run of digits as well, it would read the run once for every digit in it.
_FROM_NUM = rf"(?<!\d)({_NUM})"

# Rewrites that turn words into arithmetic, applied in order once numbers are digits.
_PHRASES: tuple[tuple[str, str], ...] = (
    (rf"百分之({_NUM})", r"\1%"),
    (rf"{_FROM_NUM}的({_NUM})\s*%", r"\1*\2/100"),
    (rf"{_FROM_NUM}\s*(?:%|percent|per cent)\s*of\s*", r"\1/100*"),
    (rf"(?:the\s+)?square\s+root\s+of\s*({_NUM})", r"sqrt(\1)"),
    (rf"{_FROM_NUM}\s*的?平方根", r"sqrt(\1)"),
    (rf"根号\s*({_NUM})", r"sqrt(\1)"),
    (rf"的\s*({_NUM})\s*次方", r"**\1"),
    (rf"(?<!\s)\s*to\s+the\s+({_NUM})(?:st|nd|rd|th)?\s+power", r"**\1"),
)

# Operator words count only right after an operand: "7 times 8" is arithmetic, "what times"
# is not (and must not read as "time" either).
_OPERATOR_WORDS: list[tuple[str, str]] = sorted(
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
    key=lambda pair: -len(pair[0]),  # the longest first: "乘以" before "乘"
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
_PERCENT_RE = re.compile(rf"{_FROM_NUM}\s*%(?!\s*[\d(A-Za-z])")
_DATE_RE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")


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
    text, end = match.string, match.end()
    return end == len(text) or not lx.has_cjk(text[end]) or text.startswith(_NUMBER_FOLLOWERS, end)


def without_separators(text: str) -> str:
    return _THOUSANDS_RE.sub(lambda m: m.group().replace(",", ""), text)


def arithmetic_text(text: str) -> str:
    """The question with numbers as digits and arithmetic words as operators:
    "three hundred and twelve divided by four" → "312/4", "二的十次方" → "2**10"."""
    normal = without_separators(text).replace(_CHAIN_MARK, " ")
    normal = normal.translate(_SYMBOLS)
    normal = _CJK_NUMERAL_RE.sub(as_digits(lx.cjk_number), normal)
    normal = _ENGLISH_NUMBER_RE.sub(as_digits(lx.english_number), normal)
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
    before = char_before(match.string, match.start())
    after = char_after(match.string, match.end())
    in_arithmetic = before in _OPERATORS or after in _OPERATORS
    return f"{match.group(1)}/100" if in_arithmetic else match.group()


_OPERATORS = ("+", "-", "*", "/")


def char_before(text: str, position: int) -> str:
    """The last character before `position` that is not a space ("" if none). Reads back over
    the spaces only, not the whole text before."""
    while position > 0 and text[position - 1].isspace():
        position -= 1
    return text[position - 1] if position > 0 else ""


def char_after(text: str, position: int) -> str:
    """The first character from `position` on that is not a space ("" if none)."""
    while position < len(text) and text[position].isspace():
        position += 1
    return text[position] if position < len(text) else ""


def as_digits(read: Callable[[str], int | None]) -> Callable[[re.Match[str]], str]:
    """A numeral (三百一十二, "twenty-five") as digits, as `read` makes it; else as it stands."""
    return lambda m: m.group() if (value := read(m.group())) is None else str(value)


def math_functions(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """Function names an expression may use: the common ones, and any that a tool taking an
    expression names in its description (sqrt, hypot, ...)."""
    named: dict[str, None] = {}
    for spec in tools:
        if "expression" in param_roles(spec):
            texts = [spec.description, *map(description_of, properties(spec).values())]
            named |= dict.fromkeys(w for t in texts for w in _NAME_RE.findall(t))
    return lx.MATH_FUNCTIONS | frozenset(list(named)[:MAX_NAMED_FUNCTIONS])


_NAME_RE = re.compile(r"\b[a-z][a-z0-9_]{0,31}\b")
MAX_NAMED_FUNCTIONS = 200
"""The words of a description taken as function names, at most. Every name is tried at every
position of the question, so a description of thousands of words would make the reading of a
question cost their product; a real one names a few dozen."""


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


_LEADING_JUNK = frozenset(f"+*/%,){_CHAIN_MARK}")
_TRAILING_JUNK = frozenset(f"+-*/%,({_CHAIN_MARK}")


def trim_expression(expression: str) -> str:
    """Drop what a sentence left at either end: dangling operators, and parentheses that open
    (at the start) or close (at the end) more than the expression closes or opens."""
    # Moves two ends inward, keeping the counts of parentheses between them: cutting a character
    # at a time and counting again would read a long expression once per character it drops.
    start, end = 0, len(expression)
    opened, closed = expression.count("("), expression.count(")")
    changed = True
    while changed:
        changed = False
        while start < end and expression[start] in _LEADING_JUNK:
            closed -= expression[start] == ")"
            start, changed = start + 1, True
        while start < end and expression[end - 1] in _TRAILING_JUNK:
            opened -= expression[end - 1] == "("
            end, changed = end - 1, True
        while start < end and expression[start] == "(" and opened > closed:
            opened, start, changed = opened - 1, start + 1, True
        while start < end and expression[end - 1] == ")" and closed > opened:
            closed, end, changed = closed - 1, end - 1, True
    return expression[start:end]


def apply_chains(expression: str) -> str:
    """ "(3+4)*5↪/7" → "((3+4)*5)/7": each chained operator applies to all that came before."""
    first, *steps = expression.split(_CHAIN_MARK)
    if not steps:
        return first
    # Built as pieces, with the parentheses that wrap everything so far counted: a new string
    # per step would copy a long chain once per step.
    pieces, wraps = [first], 0
    needs = needs_parentheses(first)
    for step in steps:
        if needs:
            wraps += 1
            pieces.append(")")
        pieces.append(step)
        # An operator after what came before makes it an operation: no need to parse it again.
        needs = step.startswith(_OPERATORS) or needs_parentheses("(" * wraps + "".join(pieces))
    return "(" * wraps + "".join(pieces)


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
    names = functions | lx.MATH_CONSTANTS
    for node in nodes:
        if not isinstance(node, _ARITHMETIC_NODES):
            return False
        if isinstance(node, ast.Name) and node.id not in names:
            return False
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            return False
    computes = any(isinstance(n, (ast.BinOp, ast.Call)) for n in nodes)
    return computes and any(c.isdigit() for c in expression)

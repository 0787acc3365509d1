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
_PERCENT_RE = re.compile(rf"({_NUM})\s*%(?!\s*[\d(A-Za-z])")
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
    rest = match.string[match.end() :]
    return not rest or not lx.has_cjk(rest[0]) or rest.startswith(_NUMBER_FOLLOWERS)


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
    before = match.string[: match.start()].rstrip()
    after = match.string[match.end() :].lstrip()
    in_arithmetic = before.endswith(("+", "-", "*", "/")) or after.startswith(("+", "-", "*", "/"))
    return f"{match.group(1)}/100" if in_arithmetic else match.group()


def as_digits(read: Callable[[str], int | None]) -> Callable[[re.Match[str]], str]:
    """A numeral (三百一十二, "twenty-five") as digits, as `read` makes it; else as it stands."""
    return lambda m: m.group() if (value := read(m.group())) is None else str(value)


def math_functions(tools: Sequence[ToolSpec]) -> frozenset[str]:
    """Function names an expression may use: the common ones, and any that a tool taking an
    expression names in its description (sqrt, hypot, ...)."""
    named: set[str] = set()
    for spec in tools:
        if "expression" in param_roles(spec):
            texts = [spec.description, *map(description_of, properties(spec).values())]
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

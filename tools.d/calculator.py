"""A safe calculator: arithmetic and math functions over a parsed syntax tree, never eval.

Only numbers, + - * / // % **, unary signs, parentheses, whitelisted functions and the constants
pi, e, tau are accepted. Results that would be huge are refused before they are computed.
"""

from __future__ import annotations

import ast
import math
import re
import sys
from collections.abc import Callable

from toolcall_cli import tool

Number = int | float

MAX_LENGTH = 500
MAX_NODES = 300
# Integers above this many bits are refused. Python cannot even print an int of more than
# 4300 digits (about 14000 bits) by default, and no answer needs one.
MAX_BITS = 10_000
MAX_FACTORIAL = 1000  # 1000! has 2568 digits: under MAX_BITS
MAX_ROUND_DIGITS = 100  # round(5, -10**9) would build 10**(10**9)
SIGNIFICANT_DIGITS = 12

# What an expression may hold, said with placeholders: no example that runs. Qwen2.5-0.5B, told
# calculate(expression='(2 + 3) * 4') of '26.2 miles', sent exactly that and answered
# "20 kilometers".
_WHAT_AN_EXPRESSION_HOLDS = (
    "Write one arithmetic expression of the question's own numbers: numbers, + - * / ** "
    "( ) and functions such as sqrt(x) or round(x, 2); no words or units."
)

# Conveniences: `^` means power (as on a calculator), and the ×, ÷, full-width digits and
# parentheses people type in Chinese input methods mean their ASCII forms.
_CONVENIENCES = str.maketrans(
    {
        "^": "**",
        "×": "*",
        "✕": "*",
        "·": "*",
        "÷": "/",
        "−": "-",
        "（": "(",
        "）": ")",
        "，": ",",
        "＋": "+",
        "－": "-",
        "＊": "*",
        "／": "/",
        "％": "%",
        "．": ".",
        **{chr(0xFF10 + d): str(d) for d in range(10)},
    }
)

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _factorial(n: Number) -> int:
    if isinstance(n, float):
        if not n.is_integer():
            raise ValueError(f"factorial needs a whole number, got {n}")
        n = int(n)
    if n < 0:
        raise ValueError("factorial needs a non-negative number")
    if n > MAX_FACTORIAL:
        raise ValueError(f"factorial({n}) is too large; the limit is factorial({MAX_FACTORIAL})")
    return math.factorial(n)


def _round(x: Number, ndigits: Number = 0) -> Number:
    if isinstance(ndigits, float) and not ndigits.is_integer():
        raise ValueError("round's second argument must be a whole number of digits")
    if abs(ndigits) > MAX_ROUND_DIGITS:
        raise ValueError(f"round to at most {MAX_ROUND_DIGITS} digits")
    return round(x, int(ndigits))


def _log(x: Number, base: Number | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "log": _log,
    "ln": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "abs": abs,
    "round": _round,
    "floor": math.floor,
    "ceil": math.ceil,
    "factorial": _factorial,
    "hypot": math.hypot,
    "degrees": math.degrees,
    "radians": math.radians,
    "min": min,
    "max": max,
}

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}

# What each refused construct is called in the error, so the model knows what to drop.
_REFUSED: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access (x.y)",
    ast.Subscript: "indexing or slicing (x[...])",
    ast.Lambda: "lambda",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.Compare: "comparisons",
    ast.BoolOp: "and/or",
    ast.IfExp: "if/else",
    ast.NamedExpr: "assignment (:=)",
    ast.Tuple: "tuples (write numbers without thousands separators: 1000, not 1,000)",
    ast.List: "lists",
    ast.Dict: "dicts",
    ast.Set: "sets",
    ast.JoinedStr: "strings",
    ast.Starred: "star arguments",
    ast.Await: "await",
}


def _prepare(expression: str) -> str:
    text = expression.translate(_CONVENIENCES).strip()
    return text[:-1].rstrip() if text.endswith("=") else text  # "12*5+3=" as typed


def _parse(expression: str) -> ast.Expression:
    if len(expression) > MAX_LENGTH:
        raise ValueError(f"expression is too long ({len(expression)} characters; max {MAX_LENGTH})")
    if not expression:
        # No sample expression: a small model sends it, and answers with its value.
        raise ValueError(f"expression is empty. {_WHAT_AN_EXPRESSION_HOLDS}")
    try:
        tree = ast.parse(expression, mode="eval")
    except (RecursionError, MemoryError):
        raise ValueError("expression is nested too deeply") from None
    except SyntaxError as error:
        raise ValueError(
            f"could not parse {expression!r}: {error.msg}. {_the_form_that_works(expression)}"
        ) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ValueError(f"expression is too complex (more than {MAX_NODES} parts)")
    return tree


# Words a model leaves in an expression, and what they are in one. Applied in order: "rounded to
# 2 decimals" before the bare words, "divided by" before "by".
_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"^\s*(?:what\s+is|what's|calculate|compute|计算)\s*", ""),
        (r"[?？=]+\s*$", ""),
        (r"(\d+(?:\.\d+)?)\s*%\s*of\s*(\d+(?:\.\d+)?)", r"\2*\1/100"),
        (r"\bsquare\s+root\s+of\s+(\d+(?:\.\d+)?)", r"sqrt(\1)"),
        (r"\bdivided\s+by\b|\bover\b|除以", "/"),
        (r"\bmultiplied\s+by\b|\btimes\b|乘以?", "*"),
        (r"\bplus\b|加上?", "+"),
        (r"\bminus\b|减去?", "-"),
        (r"\bsquared\b", "**2"),
        (r"(\d)\s*[xX]\s*(?=\d)", r"\1*"),
    )
)
_ROUNDED = re.compile(
    r"^(?P<body>.+?)[\s,]*(?:,\s*)?(?:rounded|round(?:ed)?\s+it|round)\s+(?:off\s+)?to\s+"
    r"(?P<digits>\d+)\s*(?:decimal(?:s|\s+places?)?|places?|dp|digits?)?\s*$",
    re.IGNORECASE,
)


def _rewritten(expression: str) -> str:
    """The expression with the words a model leaves in it turned into what they mean: "sqrt(2)
    *100 rounded to 2 decimals" is round(sqrt(2)*100, 2)."""
    text = expression
    for pattern, replacement in _WORDS:
        text = pattern.sub(replacement, text)
    rounded = _ROUNDED.match(text.strip())
    if rounded:
        text = f"round({rounded['body'].strip()}, {rounded['digits']})"
    return " ".join(text.split())


def _works(expression: str) -> bool:
    try:
        _evaluate(_parse(_prepare(expression)))
    except (ValueError, ArithmeticError, TypeError, RecursionError):
        return False
    return True


def _the_form_that_works(expression: str) -> str:
    """The lesson in an error: the caller's own expression written so that it evaluates, when
    that can be worked out; else what an expression may hold, round(x, 2) among it (a model
    asks for rounding in words, or in an argument calculate does not take)."""
    rewritten = _rewritten(expression)
    if rewritten != expression.strip() and _works(rewritten):
        return f"Write it as calculate(expression={rewritten!r})."
    return _WHAT_AN_EXPRESSION_HOLDS


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.Name):
        return _name(node.id)
    if isinstance(node, ast.UnaryOp):
        return _unary(node)
    if isinstance(node, ast.BinOp):
        return _binary(node)
    if isinstance(node, ast.Call):
        return _call(node)
    raise ValueError(
        f"not allowed in an expression: {_REFUSED.get(type(node), type(node).__name__)}"
    )


def _constant(value: object) -> Number:
    # bool is an int subclass; True + 1 is not arithmetic anyone means.
    if isinstance(value, float) and not math.isfinite(value):
        # Python reads a literal past the largest float (1e309) as infinity without a word.
        limit = f"{sys.float_info.max:.2g}"
        raise ValueError(f"a number in the expression is too large (the limit is about {limit})")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, (str, bytes)):
        raise ValueError("strings are not allowed; use numbers only")
    raise ValueError(f"{value!r} is not allowed; use real numbers only")


def _name(name: str) -> float:
    if name in CONSTANTS:
        return CONSTANTS[name]
    if name in FUNCTIONS:
        raise ValueError(f"{name} is a function; call it on its argument, as {name}(x)")
    raise ValueError(
        f"unknown name {name!r}. Allowed functions: {', '.join(FUNCTIONS)}; "
        f"constants: {', '.join(CONSTANTS)}"
    )


def _unary(node: ast.UnaryOp) -> Number:
    if isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node.op, ast.UAdd):
        return +_evaluate(node.operand)
    raise ValueError(f"operator {_symbol(node.op)} is not allowed")


def _binary(node: ast.BinOp) -> Number:
    operation = _BINARY.get(type(node.op))
    if operation is None:
        raise ValueError(f"operator {_symbol(node.op)} is not allowed; use + - * / // % **")
    left, right = _evaluate(node.left), _evaluate(node.right)
    _refuse_huge(node.op, left, right)
    try:
        return _checked(operation(left, right))
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except OverflowError:
        raise ValueError("the result is too large") from None


def _refuse_huge(op: ast.operator, left: Number, right: Number) -> None:
    """Refuse a power or product whose result would be enormous, before computing it."""
    if isinstance(op, ast.Pow) and left not in (0, 1, -1):
        # |base ** exp| grows when |base| > 1 and exp > 0, or when |base| < 1 and exp < 0.
        growing = (abs(left) > 1) == (right > 0)
        bits = _float(abs(right)) * abs(math.log2(abs(left)))
        if growing and bits > MAX_BITS:
            raise ValueError(
                f"the result is too large (about {bits:.3g} bits); try smaller numbers"
            )
    both_int = isinstance(left, int) and isinstance(right, int)
    if isinstance(op, ast.Mult) and both_int and _bits(left) + _bits(right) > MAX_BITS:
        raise ValueError("the result is too large; try smaller numbers")


def _bits(value: Number) -> int:
    return value.bit_length() if isinstance(value, int) else 0


def _float(value: Number) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _checked(value: object) -> Number:
    if isinstance(value, complex):
        raise ValueError("the result is not a real number (e.g. a fractional power of a negative)")
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("the result is not a number")
    if isinstance(value, float) and math.isinf(value):
        raise ValueError("the result is too large")
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise ValueError("the result is too large; try smaller numbers")
    if not isinstance(value, (int, float)):
        raise ValueError(f"unexpected result {value!r}")
    return value


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name):
        raise ValueError(
            f"only the listed math functions can be called, by name: {', '.join(FUNCTIONS)}"
        )
    name = node.func.id
    function = FUNCTIONS.get(name)
    if function is None:
        raise ValueError(f"unknown function {name!r}. Allowed functions: {', '.join(FUNCTIONS)}")
    if node.keywords:
        raise ValueError(f"{name}() takes plain arguments, not keyword arguments")
    args = [_evaluate(arg) for arg in node.args]
    try:
        return _checked(function(*args))
    except TypeError:
        raise ValueError(
            f"{name}() was given the wrong number of arguments ({len(args)})"
        ) from None
    except OverflowError:
        raise ValueError(f"{name}(): the result is too large") from None
    except ZeroDivisionError:
        raise ValueError(f"{name}(): division by zero") from None
    except ValueError as error:
        raise ValueError(_function_error(name, args, error)) from None


def _function_error(name: str, args: list[Number], error: ValueError) -> str:
    message = str(error)
    if message == "math domain error":
        shown = ", ".join(f"{a:g}" if isinstance(a, float) else str(a) for a in args)
        return f"{name}({shown}) is undefined (math domain error)"
    # The helpers above already name the function in their own messages.
    return message if message.startswith(name) else f"{name}(): {message}"


def _symbol(op: ast.AST) -> str:
    symbols = {
        ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
        ast.BitXor: "^", ast.MatMult: "@", ast.Invert: "~", ast.Not: "not",
    }  # fmt: skip
    return symbols.get(type(op), type(op).__name__)


def _tidy(value: Number) -> Number:
    """Whole results as int (63, not 63.0); others to 12 significant digits (0.3, not 0.3...04)."""
    if isinstance(value, int):
        return value
    rounded = float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if rounded.is_integer() and abs(rounded) < 2**53:
        return int(rounded)
    return rounded


@tool(cacheable=True, permission="read")
def calculate(expression: str) -> Number:
    """Evaluate a math expression (计算, 算术) safely: use it for any arithmetic.

    Use it instead of computing in your head: sums, plus and minus, times and divided by,
    percentages (15% of 80 is 80*15/100), powers and roots. Supports + - * / // % ** (also ^
    for power, × ÷ and full-width characters), parentheses, the functions sqrt, sin, cos, tan,
    asin, acos, atan (radians), log (natural, or log(x, base)), log10, log2, exp, abs, round,
    floor, ceil, factorial, hypot, degrees, radians, min, max, and the constants pi, e, tau.

    Args:
        expression: The expression, e.g. "12*5+3", "sqrt(2)**2", "2^10", "sin(pi/6)".
    """
    value = _evaluate(_parse(_prepare(expression)))
    # Every step is checked already; this last check keeps Infinity and NaN out of any answer.
    return _tidy(_checked(value))

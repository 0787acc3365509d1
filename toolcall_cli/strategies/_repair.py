"""Reading JSON that a model wrote: strict first, json-repair only when that fails, and a repair
is used only when it changed syntax alone.

json-repair is a guesser: `{"content": "x\\n",}` comes back as `{"content": "x"}`, and
`{"city": ` as `{"city": ""}`. A call built on such a guess runs with data the model never
wrote. So a repaired value is compared with the model's text, token by token: every key and
scalar must appear unchanged and in the same order, the brackets must be the same ones, and
nothing may be added except closing brackets at the very end. Quotes, commas, key quoting and
Python-style literals may differ; that is what a repair is for. A quote left unescaped inside a
string is syntax the model got wrong only while it reads as a quotation (`"say "hi" now"`);
`"Paris" # "London"` and `'Pa' + 'ris'` are the model's syntax, and never become one value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from toolcall_cli.strictjson import nesting_depth

MAX_DEPTH = 64
"""Deepest nesting accepted in a model's JSON. Real arguments are a few levels deep; a value
nested hundreds deep breaks every recursive consumer (serialisers, validators, renderers)."""

MAX_REPAIR_CHARS = 64 * 1024
MAX_REPAIR_MARKS = 500
"""Commas, colons and opening brackets in broken JSON that json-repair is still asked to fix.
Its time grows with the square of these, whatever the text around them: 2 KB of `{a},{a},...`
or 4 KB of `{"a"{"a"...` took a second, 20 KB of either over ten. At 500 the worst of many
shapes tried took under half a second; a real call's arguments hold a few dozen."""

_REPAIR_MARKS = ",:{["

_CLOSERS = frozenset("}]")
_BRACKETS = frozenset("{}[]")
_WORD_END = re.compile(r"""[\s{}\[\],:"']""")
_NON_SPACE = re.compile(r"\S")
_UNESCAPED = {quote: re.compile(rf"(?<!\\)((?:\\\\)*){quote}") for quote in "\"'"}
"""A quote after an even number of backslashes: one no backslash escapes."""
_ESCAPED_APOSTROPHE = re.compile(r"(?<!\\)((?:\\\\)*)\\'")
"""`\\'`: no JSON escape, but plainly an apostrophe (and how single-quoted strings escape one)."""
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS: dict[str, object] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_NOT_JSON_NUMBERS = frozenset({"NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"})


class JsonProblem(ValueError):
    """Text that cannot be used as JSON: not JSON even after repair, a repair that would change
    the data, or a value nested too deeply. The message says what is wrong, for the model."""


@dataclass(frozen=True)
class Loaded:
    value: Any
    repaired: bool
    """True when strict parsing failed and a syntax-only repair produced the value."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of strict JSON, refused when it writes a key twice. JSON leaves a repeated key's
    meaning open and Python's reader would keep the last value silently: with two values, which
    one the model meant is a guess, so the call goes back to the model to restate. The same
    value twice is refused too: one rule for every repeat, as a repair is refused when it would
    drop a value, and the model's restated call costs one round in a rare case."""
    built = dict(pairs)
    if len(built) == len(pairs):
        return built
    first: dict[str, str] = {}
    for key, value in pairs:
        written = json.dumps(value, ensure_ascii=False)  # 1, 1.0 and true differ as JSON
        if key not in first:  # not `is`: json.dumps hands back one shared "true", "null"...
            first[key] = written
            continue
        before = first[key]
        named = json.dumps(key, ensure_ascii=False)
        if before == written:
            raise JsonProblem(f"it writes the key {named} twice; write each key once")
        raise JsonProblem(
            f"it gives the key {named} two values ({_clipped(before)}, then "
            f"{_clipped(written)}), so which one is meant is unclear; write each key once"
        )
    return built  # not reached: dict() dropped a pair only when a key repeats


def _clipped(written: str) -> str:
    return written if len(written) <= 40 else written[:39] + "…"


def load_json(text: str) -> Loaded:
    """The JSON value in `text`; raises JsonProblem with a sentence a model can act on."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=unique_keys)
    except RecursionError:
        raise JsonProblem(f"it is nested more than {MAX_DEPTH} levels deep") from None
    except JsonProblem:
        raise  # read, and refused as it is: no repair can say what the model meant
    except ValueError:
        return Loaded(_repaired(text), repaired=True)
    _check_value(value)
    return Loaded(value, repaired=False)


def _refuse_constant(name: str) -> float:
    # Python's json reads NaN and Infinity, which JSON does not have: no tool can use them and
    # no JSON output can hold them, so they count as broken JSON (and repair will refuse them).
    raise ValueError(f"{name} is not JSON")


def _repaired(text: str) -> Any:
    if len(text) > MAX_REPAIR_CHARS or sum(map(text.count, _REPAIR_MARKS)) > MAX_REPAIR_MARKS:
        # Past this, strict JSON is the only way in: a hostile model must not spend the run's
        # time (the loop parses on its own thread) in json-repair.
        raise JsonProblem("it is not valid JSON, and it is too large to repair; send strict JSON")
    import json_repair  # only once strict parsing failed: most replies never need it

    try:
        value = json_repair.loads(text)
    except Exception:  # a third-party repairer on hostile input: any failure means "not JSON"
        raise JsonProblem("it is not valid JSON") from None
    if not isinstance(value, (dict, list)):
        raise JsonProblem("it is not valid JSON")  # a scalar is repair's guess at garbage
    if nesting_depth(value, MAX_DEPTH + 1) > MAX_DEPTH:
        raise JsonProblem(f"it is nested more than {MAX_DEPTH} levels deep")
    problem = repair_changes(text, value)
    if problem is not None:
        raise JsonProblem(f"it is not valid JSON, and repairing it would {problem}")
    _check_value(value)
    return value


def decode_nested(arguments: Any) -> Any:
    """Arguments some models double-encode (a JSON string holding the object), decoded once."""
    if isinstance(arguments, str) and arguments.lstrip().startswith("{"):
        try:
            decoded = load_json(arguments).value
        except JsonProblem:
            return arguments
        if isinstance(decoded, dict):
            return decoded
    return arguments


def _check_value(value: Any) -> None:
    """Refuse what no tool can use and no JSON output can hold: nesting past MAX_DEPTH, and a
    number too large for a float (`1e400` reads as Infinity)."""
    if nesting_depth(value, MAX_DEPTH + 1) > MAX_DEPTH:
        raise JsonProblem(f"it is nested more than {MAX_DEPTH} levels deep")
    if not all_finite(value):
        raise JsonProblem("a number in it is too large to be a number (it would be Infinity)")


def all_finite(value: Any) -> bool:
    """No float in `value` is infinite or NaN (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


# --- comparing a repair with the text it came from -----------------------------------------------


@dataclass(frozen=True)
class _Token:
    """One piece of JSON-ish text: a bracket, or a scalar with the text it was written as."""

    kind: str
    """"{", "}", "[", "]", "string" (quoted), "word" (unquoted), "number" or "open" (a string
    that never closes)."""
    text: str
    value: Any = None
    key: bool = False
    between: str | None = None
    """For a string that kept quotes of its own kind inside (see _closes_string): the first
    piece a strict reader sees between two strings that reads as syntax, not as a quotation."""


def repair_changes(text: str, value: Any) -> str | None:
    """How the repaired `value` changes what `text` says (a phrase), or None when the repair only
    fixed syntax."""
    written = list(_tokens(text))
    made = list(_value_tokens(value))
    for token, repaired in zip(written, made, strict=False):  # one may run longer: see below
        problem = _difference(token, repaired)
        if problem is not None:
            return problem
    # What only one side has: closing brackets at the end are syntax (repair adds the missing
    # ones and drops stray ones), anything else is data.
    dropped = next((t for t in written[len(made) :] if t.kind not in _CLOSERS), None)
    if dropped is not None:
        return f"drop {_shown(dropped)}"
    added = next((t for t in made[len(written) :] if t.kind not in _CLOSERS), None)
    if added is not None:
        return f"add {_shown(added)}, which is not in the text"
    return None


def _difference(written: _Token, made: _Token) -> str | None:
    if written.kind == "open":
        return f"close a string that never ends ({_shown(written)})"
    written_bracket, made_bracket = written.kind in _BRACKETS, made.kind in _BRACKETS
    if written_bracket and made_bracket:
        if written.kind == made.kind:
            return None
        return (
            f"move values into other brackets ({_shown(made)} where the text has {_shown(written)})"
        )
    if made_bracket:
        return f"drop {_shown(written)}"
    if written_bracket:
        return f"add {_shown(made)}, which is not in the text"
    if written.text in _NOT_JSON_NUMBERS:
        return f"turn {written.text} (which JSON does not have) into {_shown(made)}"
    if not _same_scalar(written, made):
        return f"change {_shown(written)} into {_shown(made)}"
    if written.between is not None:
        between = _shown(_Token("word", written.between))
        return f"make {between}, which the text has between two strings, part of {_shown(written)}"
    return None


def _same_scalar(written: _Token, made: _Token) -> bool:
    if made.key or written.key:
        # A key is a string whatever quoting it had: `{city: 1}` and `{'city': 1}` say "city".
        spelled = written.value if written.kind == "string" else written.text
        return made.key and written.key and spelled == made.value
    if made.kind == "string":
        if written.kind == "string":
            return bool(written.value == made.value)
        return (
            written.kind == "word" and written.text not in _LITERALS and written.text == made.value
        )
    if written.kind == "word":
        found = _LITERALS.get(written.text, _MISSING)
        return found is not _MISSING and found is made.value
    if written.kind == "number" and made.kind == "number":
        return type(written.value) is type(made.value) and bool(written.value == made.value)
    return False


_MISSING = object()
_LINE_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})
"""A message quotes line breaks and tabs as JSON writes them, so it stays on one line."""


def _shown(token: _Token) -> str:
    if token.kind in _BRACKETS:
        return f"`{token.kind}`"
    text = token.text.translate(_LINE_BREAKS)
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"`{text}`" if text else "an empty string"


def _value_tokens(value: Any) -> Iterator[_Token]:
    """The repaired value as the tokens a model would have written for it, in order."""
    stack: list[tuple[Any, bool, bool]] = [(value, False, False)]
    while stack:
        item, is_key, closing = stack.pop()
        if closing:
            yield _Token("}" if isinstance(item, dict) else "]", "")
        elif isinstance(item, dict):
            yield _Token("{", "")
            stack.append((item, False, True))
            for k, v in reversed(list(item.items())):
                stack.append((v, False, False))
                stack.append((k, True, False))
        elif isinstance(item, list):
            yield _Token("[", "")
            stack.append((item, False, True))
            stack.extend((child, False, False) for child in reversed(item))
        elif isinstance(item, str):
            yield _Token("string", json.dumps(item, ensure_ascii=False)[1:-1], item, is_key)
        elif isinstance(item, bool) or item is None:
            yield _Token("word", json.dumps(item), item)
        else:
            shown = repr(item) if isinstance(item, float) and not math.isfinite(item) else str(item)
            yield _Token("number", shown, item)


def _tokens(text: str) -> Iterator[_Token]:
    """The brackets and scalars of JSON-ish text, as written. Commas, colons and whitespace are
    syntax and skipped; anything unexpected is a word, so it cannot match a repaired value."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c in ",:":
            i += 1
            continue
        if c in "{}[]":
            yield _Token(c, c)
            i += 1
            continue
        if c in "\"'":
            end, token = _quoted(text, i)
        else:
            match = _WORD_END.search(text, i)
            end = match.start() if match else n
            if end == i:  # a lone character no rule takes: keep going, as a word
                end = i + 1
            token = _word(text[i:end])
        if text[end : end + 64].lstrip().startswith(":"):
            token = replace(token, key=True)
        yield token
        i = end


def _word(text: str) -> _Token:
    if _JSON_NUMBER.fullmatch(text):
        return _Token("number", text, json.loads(text))
    return _Token("word", text, text)


def _quoted(text: str, start: int) -> tuple[int, _Token]:
    """A string starting at `start`: (where it ends, its token). Single-quoted strings are read
    with `\\'` as a quote; both kinds decode JSON escapes."""
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote and _closes_string(text, i + 1):
            body = text[start + 1 : i]
            return i + 1, _Token(
                "string", body, _decode(body), between=_syntax_between(body, quote)
            )
        i += 1
    body = text[start + 1 :]
    return n, _Token("open", body, body)


def _closes_string(text: str, i: int) -> bool:
    """Whether a quote just before `i` ends its string. In valid JSON a closing quote is always
    followed by `,` `:` `}` `]` or the end; any other quote is one the model forgot to escape
    (`"He said "hi" there"`), which is syntax, so it stays inside the string."""
    m = _NON_SPACE.search(text, i)
    return m is None or m.group() in ",:}]"


_COMMENT_OR_JOIN = ("#", "//", "/*", "+")
"""What starts a comment or joins two strings in the languages a model mixes into JSON."""


def _syntax_between(body: str, quote: str) -> str | None:
    """Quotes left inside a string are taken for quotes the model forgot to escape, so that
    `"He said "hi" there"` keeps its words. That holds only while what they enclose reads as a
    quotation; `"Paris" # "London"` and `'Pa' + 'ris'` are a comment and a concatenation, and
    reading them as one string would put the model's syntax into the value. Returns the first
    piece between two strings that reads as syntax (with its quotes), or None."""
    quotes = [m.end() - 1 for m in _UNESCAPED[quote].finditer(body)]
    bounds = [-1, *quotes, len(body)]
    for n in range(1, len(quotes) + 1, 2):  # the pieces after the 1st, 3rd, ... inner quote
        piece = body[bounds[n] + 1 : bounds[n + 1]]
        closed = n < len(quotes)  # another inner quote ends it
        if _reads_as_syntax(piece, closed):
            return quote + piece + (quote if closed else "")
    return None


def _reads_as_syntax(piece: str, closed: bool) -> bool:
    """A quotation holds a word, and its quotes hug it: `"hi"`, not `" # "` nor `"+"`."""
    word = piece.strip()
    if not any(c.isalnum() for c in word):
        return True
    if word.startswith(_COMMENT_OR_JOIN) or word.endswith("*/"):
        return True
    return closed and word != piece


def _decode(body: str) -> str | None:
    """The string a quoted body stands for, or None when its escapes are not JSON's."""
    body = _ESCAPED_APOSTROPHE.sub(r"\1'", body)
    body = _UNESCAPED['"'].sub(r'\1\\"', body)
    try:
        value = json.loads(f'"{body}"', strict=False)  # strict=False: raw newlines and tabs
    except ValueError:
        return None
    return value if isinstance(value, str) else None

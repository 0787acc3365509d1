"""Reading a request body as the JSON object OpenAI would read: anything else is a 400 naming what
is wrong, never a crash further on. Python's json module reads more than JSON (NaN, Infinity,
numbers too large for a float, lone surrogates in strings), and what it reads may be nested deeper
than the code after it can follow."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from toolcall_cli.serve._checks import Refused, bad

MAX_NESTING = 64
"""Levels of arrays and objects a body may nest. A tool's parameter schema nests a few levels;
far deeper, every part of the server that walks a body (the model, the log) would have to follow
it."""
MAX_DIGITS = 4300
"""Digits in an integer: Python's own limit for turning text into a number."""

_SURROGATE = re.compile("[\ud800-\udfff]")
"""Half of a UTF-16 pair, alone: JSON's `\\ud800` escape can write it, but it is no character,
and no text holding it can be written out as UTF-8."""


class NotJSON(ValueError):
    """What the body holds that JSON does not."""


def read_body(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object, refused (400) when it is not one OpenAI would read."""
    try:
        body = json.loads(
            raw, parse_constant=no_constant, parse_float=finite_float, parse_int=short_int
        )
    except NotJSON as error:
        raise unparsed(str(error)) from None
    except RecursionError:
        raise unparsed(f"arrays and objects are nested more than {MAX_NESTING} deep") from None
    except (ValueError, UnicodeDecodeError):
        raise unparsed() from None
    if not isinstance(body, dict):
        raise bad("the request body must be a JSON object", code=None)
    check_values(body)
    return body


def unparsed(reason: str = "") -> Refused:
    message = "could not parse the JSON body of the request"
    return bad(f"{message}: {reason}" if reason else message, code=None)


def no_constant(name: str) -> Any:
    raise NotJSON(f"{name} is not JSON (a number must be finite)")


def finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJSON(f"the number {text[:40]} is too large")
    return value


def short_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise NotJSON(f"a number of more than {MAX_DIGITS:,} digits")
    return int(text)


def check_values(body: dict[str, Any]) -> None:
    """Every level of the body, iteratively: no nesting past MAX_NESTING, no lone surrogate in a
    string or a key. A refusal names where (`messages[0].content`)."""
    level: list[tuple[Any, Path]] = [(body, None)]
    for _ in range(MAX_NESTING + 1):
        below: list[tuple[Any, Path]] = []
        for value, path in level:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise surrogate((path, key), "a key")
                if isinstance(item, str) and _SURROGATE.search(item):
                    raise surrogate((path, key), "a string")
                if isinstance(item, (dict, list)):
                    below.append((item, (path, key)))
        if not below:
            return
        level = below
    raise unparsed(f"arrays and objects are nested more than {MAX_NESTING} deep")


Path = tuple[Any, str | int] | None
"""Where a value is in the body: (where its container is, its key or index); None for the body
itself. Kept as links, not text, so that only a refusal pays for writing one out."""


def path_text(path: Path) -> str:
    """`messages[0].content`, as OpenAI names a parameter."""
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "".join(reversed(parts)).lstrip(".")


def surrogate(path: Path, what: str) -> Refused:
    shown = path_text(path).encode("utf-8", "backslashreplace").decode()
    message = f"{shown} holds {what} with a lone surrogate (\\ud800-\\udfff), which is no text"
    return Refused(400, f"could not parse the JSON body of the request: {message}", param=shown)

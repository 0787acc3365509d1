"""What the user's code returns, carried by value from the process that runs it to the judge:
JSON, with tuples, dicts and objects JSON cannot hold marked as such, so that a check reads the
value as it would have read the object itself. The judge reads it as data from a writer it does
not trust: any shape this module did not write is Malformed, never a crash."""

from __future__ import annotations

import json
from typing import Any

DEPTH = 100
"""How deep a value may nest: deeper is not something a kata's answer needs."""
REPR_CHARS = 1000
"""How much of an object's repr is kept (a verdict shows 400 characters at most)."""
INT_BITS = 12_000
"""Larger ints are not written out: Python refuses to print ints past 4,300 digits."""
MESSAGE_BYTES = 32 << 20
"""The most one message between the judge and the process running the user's code may hold."""


class Unsendable(Exception):
    """A value the user's code returned that cannot travel (too deep, too large)."""


class Malformed(ValueError):
    """A message or value that this module did not write."""


class Opaque:
    """An object JSON cannot hold, known by its repr, as a check would have shown it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def pack(value: Any) -> Any:
    """`value` as JSON data (in the process that runs the user's code). Plain JSON - what a
    kata's answers mostly are - goes as it is: JSON that reads back equal to the value (a
    tuple does not equal the list it would read back as, nor 1 the "1" a key would become)."""
    try:
        if json.loads(json.dumps(value)) == value:
            return {"json": value}
    except (TypeError, ValueError, RecursionError):  # not JSON: each part marked, below
        pass
    return packed(value)


def packed(value: Any, depth: int = 0) -> Any:
    if depth > DEPTH:
        raise Unsendable(f"the value nests more than {DEPTH} levels deep")
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        if value.bit_length() > INT_BITS:
            return {"repr": f"<an int of {value.bit_length()} bits>"}
        return int(value)
    if isinstance(value, list):
        return [packed(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return {"tuple": [packed(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        return {"dict": [[packed(k, depth + 1), packed(v, depth + 1)] for k, v in value.items()]}
    return {"repr": shown_repr(value)}


def shown_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as error:  # the user's __repr__: whatever it does is theirs
        text = f"<a {type(value).__name__} whose repr raised {type(error).__name__}>"
    return text if len(text) <= REPR_CHARS else text[: REPR_CHARS - 3] + "..."


def unpack(data: Any) -> Any:
    """The value `pack` wrote (in the judge), or Malformed."""
    if isinstance(data, dict) and len(data) == 1 and "json" in data:
        return data["json"]  # JSON as read: nothing in it can be what it is not
    return unpacked(data)


def unpacked(data: Any, depth: int = 0) -> Any:
    if depth > DEPTH + 1:
        raise Malformed("nested too deep")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [unpacked(item, depth + 1) for item in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise Malformed(f"not a packed value: {type(data).__name__}")
    ((tag, body),) = data.items()
    if tag == "tuple" and isinstance(body, list):
        return tuple(unpacked(item, depth + 1) for item in body)
    if tag == "dict" and isinstance(body, list):
        return unpack_dict(body, depth)
    if tag == "repr" and isinstance(body, str):
        return Opaque(body[:REPR_CHARS])
    raise Malformed(f"not a packed value: {tag!r}")


def unpack_dict(pairs: list[Any], depth: int) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise Malformed("a dict entry that is not a pair")
        key = unpacked(pair[0], depth + 1)
        try:
            hash(key)
        except TypeError:
            raise Malformed("a dict key that cannot be one") from None
        result[key] = unpacked(pair[1], depth + 1)
    return result


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line (ASCII JSON: no newline inside, lone surrogates escaped)."""
    line = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(line) >= MESSAGE_BYTES:
        raise Unsendable(f"a message of {len(line) >> 20} MiB (the most is {MESSAGE_BYTES >> 20})")
    return line + b"\n"


class Lines:
    """Lines out of a byte stream, each found once: a new chunk is searched, never the whole
    buffer again (a message of megabytes arrives in many chunks)."""

    def __init__(self) -> None:
        self.pending = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """The lines `data` completes. Malformed when an unfinished one passes the cap."""
        if b"\n" not in data:
            self.pending += data
            if len(self.pending) > MESSAGE_BYTES:
                raise Malformed(f"a message over {MESSAGE_BYTES >> 20} MiB")
            return []
        *lines, rest = (bytes(self.pending) + data).split(b"\n")
        self.pending = bytearray(rest)
        return lines


def decode(line: bytes) -> dict[str, Any]:
    """One line as a message (a JSON object), or Malformed."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise Malformed(f"not JSON: {type(error).__name__}") from None
    if not isinstance(message, dict):
        raise Malformed("not a JSON object")
    return message

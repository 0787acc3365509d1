"""How a count is said: `1 call`, `3 calls`, never `3 call(s)`. Every layer says counts, so the
one rule sits at the bottom."""

from __future__ import annotations


def plural(count: int, noun: str) -> str:
    """`count` and the noun in the form it takes, the count with thousands marked."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"

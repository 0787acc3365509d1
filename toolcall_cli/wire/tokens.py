"""A conservative token estimate for text and request bodies, with no tokenizer: the model's
own tokenizer is not at hand, so the estimate errs on the side of too many."""

from __future__ import annotations

import json
from typing import Any

MESSAGE_OVERHEAD = 4
"""Tokens a chat template adds around each message (role markers, separators)."""


def _wide(char: str) -> bool:
    """CJK ideographs, kana, hangul and full-width forms: about one token each, often more."""
    code = ord(char)
    return (
        0x2E80 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
        or 0x20000 <= code <= 0x3FFFF
    )


def estimate_tokens(text: str) -> int:
    """Tokens in `text`: a CJK character counts one; ASCII about 3.3 characters a token (prose
    runs near 4, but JSON, numbers and code cut finer); other characters half a token each."""
    ascii_chars = wide = other = 0
    for char in text:
        if char < "\x80":
            ascii_chars += 1
        elif _wide(char):
            wide += 1
        else:
            other += 1
    return wide + (ascii_chars * 3 + 9) // 10 + (other + 1) // 2


def as_json(value: Any) -> str:
    """A request part (`tools`, `response_format`) as the estimate reads it: JSON with the text
    kept as it is, so a CJK description counts as the characters the model reads."""
    return json.dumps(value, ensure_ascii=False)


def request_tokens(body: dict[str, Any]) -> int:
    """The estimated prompt of a chat-completions body: its messages, tools and response
    format, as the server would render them into its template."""
    messages = body.get("messages")
    count = 0
    if isinstance(messages, list):
        for message in messages:
            count += MESSAGE_OVERHEAD + estimate_tokens(
                as_json(message) if not isinstance(message, str) else message
            )
    for key in ("tools", "response_format"):
        if body.get(key):
            count += estimate_tokens(as_json(body[key]))
    return count

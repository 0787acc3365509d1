"""Server-sent events, the framing of a streamed chat completion: read by the HTTP model and by
`toolcall parse --sse` alike."""

from __future__ import annotations

import re
from collections.abc import Iterator

_LINE_END = re.compile(r"\r\n|\r|\n")


def sse_lines(text: str) -> list[str]:
    """The lines of a whole event stream, ended by \\r\\n, \\r or \\n as the format says:
    str.splitlines would also end a line at a U+2028 or U+0085 inside an event's JSON string."""
    return _LINE_END.split(text)


def sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The `data:` payloads of a server-sent-event stream; multi-line data is joined with \\n.

    Comments (`:`), `event:`/`id:`/`retry:` fields and blank keep-alives are skipped.
    """
    buffered: list[str] = []
    for line in lines:
        if not line.strip():
            if buffered:
                yield "\n".join(buffered)
                buffered = []
            continue
        if line.startswith("data:"):
            payload = line[5:].removeprefix(" ")
            # Some servers omit the blank line between events; a complete JSON line stands alone.
            if buffered and _looks_whole(payload):
                yield "\n".join(buffered)
                buffered = []
            buffered.append(payload)
    if buffered:
        yield "\n".join(buffered)


def _looks_whole(payload: str) -> bool:
    return payload == "[DONE]" or (payload.startswith("{") and payload.rstrip().endswith("}"))

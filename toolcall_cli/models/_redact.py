"""The endpoint's secrets taken out of everything its server sends, before any of it leaves the
model: a server that echoes the API key back (`Your key is sk-...`) must not put it in the view,
the trace, --json or the history sent back.

A field the reader joins from pieces (content, reasoning, each call's arguments) is masked
across the pieces, so a key sent a character at a time is masked whole; every other string is
masked where it stands."""

from __future__ import annotations

from typing import Any

from toolcall_cli.keys import SecretMask, StreamRedactor

JoinedField = str | tuple[str, int]
"""A field the reader joins from pieces: "content", "reasoning", or ("arguments", call index)."""


class ReplyRedactor:
    """Masks one reply's chunks (or its one completion) as they pass. The pieces of a joined
    field are read as the strategies read them: every choice's content is one text, reasoning
    is `reasoning_content` or else `reasoning`, and a call's arguments are joined by the call's
    `index` (its place in the list when it has none) until another call starts."""

    def __init__(self, mask: SecretMask) -> None:
        self._mask = mask
        self._fields: dict[JoinedField, StreamRedactor] = {}
        self._call: tuple[int, str | None] | None = None
        """The call whose arguments are arriving: its index and id."""

    def chunk(self, chunk: dict[str, Any], *, last: bool = False) -> dict[str, Any]:
        """`chunk` masked. A chunk that finishes the reply (or the `last` one) also carries what
        was held back, as the reader would have had it before the finish."""
        if not self._mask:
            return chunk
        out: dict[str, Any] = {}
        for key, value in chunk.items():
            if key == "choices" and isinstance(value, list):
                out[key] = [self._choice(choice) for choice in value]
            else:
                out[self._mask.redact(key)] = whole(value, self._mask)
        choices = out.get("choices")
        if isinstance(choices, list):
            finishing = [c for c in choices if isinstance(c, dict) and c.get("finish_reason")]
            if finishing or last:
                self._flush_into(finishing[0] if finishing else _last_dict(choices))
        return out

    def rest(self) -> dict[str, Any] | None:
        """The held tails as one more chunk, when the stream ended without finishing; None when
        nothing is held."""
        part: dict[str, Any] = {}
        self._flush_into({"delta": part})
        if not part:
            return None
        return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": part}]}

    def _choice(self, choice: Any) -> Any:
        if not isinstance(choice, dict):
            return whole(choice, self._mask)
        read = _read_part_key(choice)  # the part the reader reads; any other is masked whole
        out: dict[str, Any] = {}
        for key, value in choice.items():
            if key == read and isinstance(value, dict):
                out[key] = self._part(value)
            else:
                out[self._mask.redact(key)] = whole(value, self._mask)
        return out

    def _part(self, part: dict[str, Any]) -> dict[str, Any]:
        reasoning = _reasoning_key(part)
        out: dict[str, Any] = {}
        for key, value in part.items():
            if key == "content" and isinstance(value, str):
                out[key] = self._field("content").feed(value)
            elif key == reasoning:
                out[key] = self._field("reasoning").feed(value)
            elif key == "tool_calls" and isinstance(value, list):
                out[key] = self._calls(value)
            else:
                out[self._mask.redact(key)] = whole(value, self._mask)
        return out

    def _calls(self, entries: list[Any]) -> list[Any]:
        out: list[Any] = []
        for place, entry in enumerate(entries):
            if not isinstance(entry, dict):
                out.append(whole(entry, self._mask))
                continue
            index = entry.get("index")
            index = index if isinstance(index, int) else place
            new_id = entry.get("id") if isinstance(entry.get("id"), str) and entry["id"] else None
            out += self._close_call_before(index, new_id)
            out.append(self._call_entry(entry, index))
        return out

    def _close_call_before(self, index: int, new_id: str | None) -> list[dict[str, Any]]:
        """What the call that is arriving held back, given before a delta for another call: a
        new index, or a new id on the same index (the reader starts a new call for either)."""
        if self._call is None:
            self._call = (index, new_id)
            return []
        open_index, open_id = self._call
        if index == open_index and (new_id is None or open_id is None or new_id == open_id):
            self._call = (index, open_id or new_id)
            return []
        self._call = (index, new_id)
        held = self._fields.pop(("arguments", open_index), None)
        tail = held.flush() if held is not None else ""
        return [_arguments_entry(open_index, tail)] if tail else []

    def _call_entry(self, entry: dict[str, Any], index: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in entry.items():
            if key == "function" and isinstance(value, dict):
                function: dict[str, Any] = {}
                for name, item in value.items():
                    if name == "arguments" and isinstance(item, str):
                        function[name] = self._field(("arguments", index)).feed(item)
                    else:
                        function[self._mask.redact(name)] = whole(item, self._mask)
                out[key] = function
            else:
                out[self._mask.redact(key)] = whole(value, self._mask)
        return out

    def _field(self, field: JoinedField) -> StreamRedactor:
        if field not in self._fields:
            self._fields[field] = self._mask.streaming()
        return self._fields[field]

    def _flush_into(self, choice: dict[str, Any] | None) -> None:
        """Adds every held tail to the part of `choice` the reader reads; the reply is over."""
        fields, self._fields, self._call = self._fields, {}, None
        tails = {field: tail for field, held in fields.items() if (tail := held.flush())}
        if not tails or choice is None:
            return  # nothing held, or a reply so malformed that its reader will refuse it
        key = _read_part_key(choice) or "delta"
        part = choice.setdefault(key, {})
        if not isinstance(part, dict):
            return
        for field, tail in tails.items():
            if field == "content":
                part["content"] = _joined(part.get("content"), tail)
            elif field == "reasoning":
                name = _reasoning_key(part) or "reasoning_content"
                part[name] = _joined(part.get(name), tail)
            elif isinstance(field, tuple):
                calls = part.get("tool_calls")
                if not isinstance(calls, list):
                    calls = part["tool_calls"] = []
                calls.append(_arguments_entry(field[1], tail))


def whole(value: Any, mask: SecretMask) -> Any:
    """`value` with every string in it (keys too) masked. Iterative: a hostile server nests
    JSON as deep as the parser allows, deeper than Python's recursion limit."""
    if isinstance(value, str):
        return mask.redact(value)
    if not isinstance(value, (dict, list)):
        return value
    root: dict[str, Any] | list[Any] = {} if isinstance(value, dict) else []
    pending: list[tuple[Any, dict[str, Any] | list[Any]]] = [(value, root)]
    while pending:
        source, target = pending.pop()
        if isinstance(target, dict):
            for key, item in source.items():
                target[mask.redact(key)] = _masked_item(item, mask, pending)
        else:
            target.extend(_masked_item(item, mask, pending) for item in source)
    return root


def _masked_item(
    item: Any, mask: SecretMask, pending: list[tuple[Any, dict[str, Any] | list[Any]]]
) -> Any:
    """A string masked, a container's empty copy (queued to be filled), anything else as is."""
    if isinstance(item, str):
        return mask.redact(item)
    if isinstance(item, (dict, list)):
        copy: dict[str, Any] | list[Any] = {} if isinstance(item, dict) else []
        pending.append((item, copy))
        return copy
    return item


def _read_part_key(choice: dict[str, Any]) -> str | None:
    """The key of the part the strategies read: `message` when it holds anything, else
    `delta` (ChunkReader reads `message or delta`)."""
    if choice.get("message"):
        return "message"
    return "delta" if "delta" in choice else None


def _reasoning_key(part: dict[str, Any]) -> str | None:
    """The reasoning field the reader takes: `reasoning_content` when it holds text, else
    `reasoning`."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(part.get(key), str) and part[key]:
            return key
    return None


def _arguments_entry(index: int, arguments: str) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": arguments}}


def _joined(before: Any, tail: str) -> str:
    return before + tail if isinstance(before, str) else tail


def _last_dict(choices: list[Any]) -> dict[str, Any] | None:
    dicts = [choice for choice in choices if isinstance(choice, dict)]
    return dicts[-1] if dicts else None
